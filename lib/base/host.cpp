// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/host.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <stdexcept>
#include <vector>

namespace nerve {

std::string read_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(in >> id)) throw std::runtime_error("cannot read /proc/sys/kernel/random/boot_id");
  std::string out;
  for (char c : id)
    if (c != '-') out += c;
  if (out.size() != 32) throw std::runtime_error("unexpected boot id '" + id + "'");
  return out;
}

namespace {
// The whole of a small /proc file of 'pid' (one read: the kernel renders these files at once), or
// nullopt with *err set (ENOENT/ESRCH: the process is gone; anything else: unknown).
std::optional<std::string> read_proc_file(pid_t pid, const char* name, int* err) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), name);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (err) *err = errno;
    return std::nullopt;
  }
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n <= 0 && err) *err = n < 0 ? errno : ESRCH;
  ::close(fd);
  if (n <= 0) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

// The 'index'th space-separated field of 'text' (0-based), parsed as an unsigned number.
std::optional<std::uint64_t> number_field(std::string_view text, int index) {
  std::size_t at = 0;
  for (int i = 0; i < index; ++i) {
    at = text.find(' ', at);
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
  }
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() + at) return std::nullopt;
  return value;
}
}  // namespace

std::optional<std::string> proc_cgroup(pid_t pid) {
  auto text = read_proc_file(pid, "cgroup", nullptr);
  if (!text) return std::nullopt;
  // One line per hierarchy; the cgroup2 one is "0::PATH".
  std::string_view rest(*text);
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    if (line.starts_with("0::")) return std::string(line.substr(3));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return std::nullopt;
}

std::optional<ProcStat> proc_stat(pid_t pid, int* err) {
  if (err) *err = 0;
  auto text = read_proc_file(pid, "stat", err);
  if (!text) return std::nullopt;
  // "PID (COMM) STATE PPID ...": the name may hold spaces and parentheses, so fields are counted
  // from the last ')'. After it, field 3 (the state) is index 0, the parent (4) index 1 and the start
  // time (22) index 19.
  auto close = text->rfind(") ");
  if (close == std::string::npos) {
    if (err) *err = EINVAL;
    return std::nullopt;
  }
  std::string_view rest(*text);
  rest.remove_prefix(close + 2);
  auto parent = number_field(rest, 1);
  auto start = number_field(rest, 19);
  if (!parent || !start) {
    if (err) *err = EINVAL;
    return std::nullopt;
  }
  return ProcStat{static_cast<pid_t>(*parent), *start};
}

std::optional<std::uint64_t> proc_start_time(pid_t pid, int* err) {
  auto st = proc_stat(pid, err);
  if (!st) return std::nullopt;
  return st->start_time;
}

std::optional<pid_t> proc_parent(pid_t pid) {
  auto st = proc_stat(pid, nullptr);
  if (!st) return std::nullopt;
  return st->parent;
}

std::string hex(const std::uint8_t* data, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

std::string random_hex(std::size_t bytes) {
  std::vector<std::uint8_t> buf(bytes);
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(buf.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed");
    }
    got += static_cast<std::size_t>(n);
  }
  return hex(buf.data(), bytes);
}

std::optional<std::string> cgroup_root() {
  if (const char* env = std::getenv("NERVE_CGROUP_ROOT"); env && *env) return std::string(env);
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::optional<std::string> found;
  while (std::getline(in, line)) {
    // "36 35 0:30 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw,..."
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    tail >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, dev, root, mount;
    head >> id >> parent >> dev >> root >> mount;
    if (mount == "/sys/fs/cgroup") return mount;
    if (!found) found = mount;
  }
  return found;
}

}  // namespace nerve
