// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/host.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
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

std::optional<std::string> proc_cgroup(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return std::nullopt;
}

namespace {
// The fields of /proc/PID/stat after the command name (field 3 onwards). On failure *err says why:
// ENOENT/ESRCH when the process is gone; anything else (EMFILE, ENOMEM, ...) means "unknown".
std::optional<std::vector<std::string>> stat_fields(pid_t pid, int* err) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (err) *err = errno;
    return std::nullopt;
  }
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  if (n <= 0 && err) *err = n < 0 ? errno : ESRCH;
  ::close(fd);
  if (n <= 0) return std::nullopt;
  std::string text(buf, static_cast<std::size_t>(n));
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> fields;
  std::string f;
  while (rest >> f) fields.push_back(f);
  return fields;
}
}  // namespace

std::optional<std::uint64_t> proc_start_time(pid_t pid, int* err) {
  if (err) *err = 0;
  auto f = stat_fields(pid, err);
  if (!f || f->size() < 20) return std::nullopt;
  return std::stoull((*f)[19]);  // field 22
}

std::optional<pid_t> proc_parent(pid_t pid) {
  auto f = stat_fields(pid, nullptr);
  if (!f || f->size() < 2) return std::nullopt;
  return static_cast<pid_t>(std::stol((*f)[1]));  // field 4
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
