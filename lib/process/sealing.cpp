// SPDX-License-Identifier: LGPL-2.1-or-later
#include "process/sealing.h"

#include "base/host.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nerve {

namespace {

constexpr const char* kHostNeeds =
    "sealing needs cgroup2 mounted with the nsdelegate option: a pure cgroup2 (unified) host booted by "
    "systemd has it; elsewhere it is the mount option nsdelegate, set from the initial namespaces";

struct Cgroup2Mount {
  std::string point;
  std::string super_options;
};

// One mountinfo line: "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS".
bool parse_cgroup2_line(const std::string& line, Cgroup2Mount& out) {
  auto sep = line.find(" - ");
  if (sep == std::string::npos) return false;
  std::istringstream head(line.substr(0, sep)), tail(line.substr(sep + 3));
  std::string id, parent, dev, root, point, fstype, source, super_options;
  if (!(head >> id >> parent >> dev >> root >> point)) return false;
  if (!(tail >> fstype >> source >> super_options) || fstype != "cgroup2") return false;
  out = {point, super_options};
  return true;
}

bool has_option(const std::string& options, std::string_view wanted) {
  std::size_t start = 0;
  while (start <= options.size()) {
    auto end = options.find(',', start);
    if (end == std::string::npos) end = options.size();
    if (std::string_view(options).substr(start, end - start) == wanted) return true;
    start = end + 1;
  }
  return false;
}

// Writes 'text' to an already-existing /proc file. Async-signal-safe.
int write_proc(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = ::write(fd, text, std::strlen(text));
  int err = n < 0 ? errno : 0;
  ::close(fd);
  return err;
}

void format_map(char (&buf)[32], unsigned long id) {
  char num[24];
  int k = 0;
  do {
    num[k++] = static_cast<char>('0' + id % 10);
    id /= 10;
  } while (id && k < 23);
  int n = 0;
  for (int copy = 0; copy < 2; ++copy) {
    for (int i = k - 1; i >= 0; --i) buf[n++] = num[i];
    buf[n++] = ' ';
  }
  buf[n++] = '1';
  buf[n++] = '\n';
  buf[n] = '\0';
}

}  // namespace

SealingStatus sealing_from_mountinfo(std::string_view mountinfo) {
  std::istringstream in{std::string(mountinfo)};
  std::string line;
  Cgroup2Mount mount, first;
  bool found = false;
  while (std::getline(in, line)) {
    if (!parse_cgroup2_line(line, mount)) continue;
    if (has_option(mount.super_options, "nsdelegate"))
      return {true, "cgroup2 at " + mount.point + " is mounted with nsdelegate (" + mount.super_options + ")"};
    if (!found) first = mount;
    found = true;
  }
  if (!found) return {false, std::string("no cgroup2 mount in the mount table; ") + kHostNeeds};
  return {false, "cgroup2 at " + first.point + " is mounted without nsdelegate (options " + first.super_options +
                     "), so a cgroup namespace would not stop a process from moving out of its scope; " + kHostNeeds};
}

SealingStatus sealing_status() {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  SealingStatus s = sealing_from_mountinfo(text.str());
  if (const char* assume = std::getenv("NERVE_TEST_ASSUME_NSDELEGATE"); assume && std::strcmp(assume, "1") == 0 &&
                                                                        !s.available) {
    // Test-only, like NERVE_FAULT: lets the tests exercise the sealing mechanism on a host that
    // cannot seal. It protects nothing here, and says so.
    return {true, "NERVE_TEST_ASSUME_NSDELEGATE=1 (test only; this host cannot seal: " + s.detail + ")"};
  }
  if (!s.available || ::geteuid() == 0) return s;
  std::ifstream max("/proc/sys/user/max_user_namespaces");
  long n = -1;
  if (max >> n && n == 0)
    return {false, "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0); an unprivileged "
                   "user needs one to make a cgroup namespace"};
  return s;
}

SealIds seal_ids(uid_t uid, gid_t gid) {
  SealIds ids{};
  format_map(ids.uid_map, uid);
  format_map(ids.gid_map, gid);
  return ids;
}

std::string seal_this_process() {
  const char* step = nullptr;
  if (int err = seal_self(&step))
    return std::string("cannot make a new cgroup namespace (") + step + "): " + std::strerror(err);
  auto seen = proc_cgroup(::getpid());
  if (!seen || *seen != "/")
    return "the new cgroup namespace is not rooted at this process's cgroup: /proc/self/cgroup says " +
           seen.value_or("(nothing)");
  return "";
}

int unshare_with_own_user_namespace(int flags, const char** step) {
  SealIds ids = seal_ids(::getuid(), ::getgid());  // before the user namespace hides the real ids
  *step = "unshare";
  if (::unshare(CLONE_NEWUSER | flags) < 0) return errno;
  if (int err = write_proc("/proc/self/setgroups", "deny")) return *step = "setgroups", err;
  if (int err = write_proc("/proc/self/uid_map", ids.uid_map)) return *step = "uid_map", err;
  if (int err = write_proc("/proc/self/gid_map", ids.gid_map)) return *step = "gid_map", err;
  return 0;
}

int seal_self(const char** step) {
  *step = "unshare";
  if (::unshare(CLONE_NEWCGROUP) == 0) return 0;
  if (errno != EPERM) return errno;
  // Not privileged: a user namespace of our own gives CAP_SYS_ADMIN over the new cgroup namespace.
  return unshare_with_own_user_namespace(CLONE_NEWCGROUP, step);
}

}  // namespace nerve
