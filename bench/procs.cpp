// SPDX-License-Identifier: LGPL-2.1-or-later
#include "procs.h"

#include "clock.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace bench {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The value after "Key:" in a /proc status-like text, or 0.
std::uint64_t status_field(const std::string& text, const std::string& key) {
  auto at = text.find("\n" + key + ":");
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + key.size() + 2, nullptr, 10);
}

}  // namespace

double time_process(const std::vector<std::string>& argv, int* status) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  auto args = c_argv(argv);
  pid_t pid;
  auto t0 = Clock::now();
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return ms_since(t0);
}

HeldChild::HeldChild(const std::vector<std::string>& argv) {
  // One fork at a time: a child forked by another thread while this one's pipe ends are still open
  // in the parent would hold them until its own exec, and delay this child's exec report.
  static std::mutex fork_mutex;
  std::lock_guard lock(fork_mutex);
  int hold[2], ex[2];
  if (::pipe2(hold, O_CLOEXEC) < 0 || ::pipe2(ex, O_CLOEXEC) < 0) throw std::runtime_error("pipe failed");
  auto args = c_argv(argv);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::close(hold[1]);
    ::close(ex[0]);
    char c;
    if (::read(hold[0], &c, 1) != 1) ::_exit(126);
    ::setsid();
    ::execve(args[0], args.data(), environ);
    int e = errno;
    (void)!::write(ex[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(hold[0]);
  ::close(ex[1]);
  hold_ = hold[1];
  exec_ = ex[0];
}

bool HeldChild::release() {
  (void)!::write(hold_, "x", 1);
  ::close(hold_);
  hold_ = -1;
  int e = 0;
  ssize_t n;
  while ((n = ::read(exec_, &e, sizeof e)) < 0 && errno == EINTR) {
  }
  ::close(exec_);
  exec_ = -1;
  return n == 0;
}

void HeldChild::wait() {
  if (waited_ || pid_ <= 0) return;
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  waited_ = true;
}

HeldChild::~HeldChild() {
  if (hold_ >= 0) ::close(hold_);
  if (exec_ >= 0) ::close(exec_);
  if (!waited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait();
  }
}

std::vector<std::string> tree_command() {
  return {"/bin/sh", "-c", "for i in $(seq 21); do sleep 1000 & done; wait"};
}

std::uint64_t cpu_ticks(pid_t pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = s.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(s.substr(close + 2));
  std::string field;
  std::uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {  // fields 3.. after "pid (comm)"
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return utime + stime;
}

double ticks_to_ms(std::uint64_t ticks) { return 1000.0 * static_cast<double>(ticks) / ::sysconf(_SC_CLK_TCK); }

double rss_mb(pid_t pid) {
  return static_cast<double>(status_field(read_file("/proc/" + std::to_string(pid) + "/status"), "VmRSS")) / 1024.0;
}

std::uint64_t context_switches(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::uint64_t sum = 0;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  while (auto* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string st = read_file(dir + "/" + e->d_name + "/status");
    sum += status_field(st, "voluntary_ctxt_switches") + status_field(st, "nonvoluntary_ctxt_switches");
  }
  ::closedir(d);
  return sum;
}

std::string cgroup_root() {
  const char* r = std::getenv("NERVE_CGROUP_ROOT");
  return r && *r ? r : "/sys/fs/cgroup";
}

std::string cgroup_of(pid_t pid) {
  std::istringstream in(read_file("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

int count_procs(const std::string& cgroup) {
  std::ifstream f(cgroup_root() + cgroup + "/cgroup.procs");
  if (!f) return -1;
  int n = 0;
  for (std::string line; std::getline(f, line);) n += !line.empty();
  return n;
}

bool wait_procs(const std::string& cgroup, int n, int timeout_ms) {
  auto t0 = Clock::now();
  while (count_procs(cgroup) < n) {
    if (ms_since(t0) > timeout_ms) return false;
    sleep_ms(1);
  }
  return true;
}

std::vector<std::string> scope_folders(const std::string& prefix, int* processes) {
  std::vector<std::string> out;
  *processes = 0;
  DIR* d = ::opendir((cgroup_root() + "/app.slice").c_str());
  if (!d) return out;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    out.push_back(name);
    *processes += std::max(0, count_procs("/app.slice/" + name));
  }
  ::closedir(d);
  return out;
}

EmptyWatch::EmptyWatch(const std::string& cgroup) : events_(cgroup_root() + cgroup + "/cgroup.events") {
  fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd_ < 0) return;
  ::inotify_add_watch(fd_, events_.c_str(), IN_MODIFY);
  // The folder itself too: when it is removed before the kernel's (deferred) notification of
  // "populated 0" went out, only the folder's IN_DELETE_SELF tells.
  ::inotify_add_watch(fd_, (cgroup_root() + cgroup).c_str(), IN_DELETE_SELF);
}

EmptyWatch::~EmptyWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool EmptyWatch::empty_now() const {
  int fd = ::open(events_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // the folder is gone: it was empty
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = 0;
  return std::strstr(buf, "populated 0") != nullptr;
}

bool EmptyWatch::wait(int timeout_ms) {
  auto t0 = Clock::now();
  while (!empty_now()) {
    int left = timeout_ms - static_cast<int>(ms_since(t0));
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, std::min(left, 50)) > 0) {  // 50: a safety net; inotify wakes it first
      char buf[4096];
      while (::read(fd_, buf, sizeof buf) > 0) {
      }
    }
  }
  return true;
}

}  // namespace bench
