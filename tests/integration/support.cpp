// SPDX-License-Identifier: LGPL-2.1-or-later
#include "support.h"

#include "backend_view.h"

#include "base/host.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace nerve::itest {

namespace {

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

class OwnedFd {
 public:
  explicit OwnedFd(int fd = -1) : fd_(fd) {}
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { reset(); }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

}  // namespace

char proc_state(pid_t pid) {
  auto text = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return '\0';
  auto close = text->rfind(") ");
  if (close == std::string::npos || close + 2 >= text->size()) return '\0';
  return (*text)[close + 2];
}

bool alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) < 0 && errno == ESRCH) return false;
  char s = proc_state(pid);
  return s != '\0' && s != 'Z' && s != 'X';
}

bool wait_gone(pid_t pid, milliseconds timeout) {
  if (pid <= 0) return true;
  OwnedFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (fd.get() < 0) return errno == ESRCH || !alive(pid);
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (!alive(pid)) return true;  // a zombie has ended too
    pollfd p{fd.get(), POLLIN, 0};
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n > 0) return true;
    if (n == 0) return !alive(pid);
    if (errno != EINTR) return !alive(pid);
  }
}

std::optional<int> wait_child(pid_t pid, milliseconds timeout) {
  if (!wait_gone(pid, timeout)) return std::nullopt;
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, 0);
    if (r == pid) return exit_code_of(status);
    if (r < 0 && errno == EINTR) continue;
    return std::nullopt;  // not our child, or already collected
  }
}

void reap_ended_children() {
  int status;
  while (::waitpid(-1, &status, WNOHANG) > 0) {
  }
}

pid_t spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("spawn: empty argv");
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (spec.env.count(key)) continue;
    env_text.push_back(kv);
  }
  for (const auto& [key, value] : spec.env)
    if (value) env_text.push_back(key + "=" + *value);
  std::vector<char*> envp;
  for (auto& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::pair<int, int>> keep = spec.keep_fds;
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) throw std::runtime_error(std::string("open /dev/null: ") + std::strerror(errno));

  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(devnull);
    throw std::runtime_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    // Move the kept descriptors out of the way of 0-2 and of each other first.
    for (auto& [from, to] : keep) {
      int moved = ::fcntl(from, F_DUPFD_CLOEXEC, 100);
      if (moved < 0) ::_exit(127);
      from = moved;
    }
    int in = spec.stdin_fd >= 0 ? spec.stdin_fd : devnull;
    int out = spec.stdout_fd >= 0 ? spec.stdout_fd : devnull;
    int err = spec.stderr_fd >= 0 ? spec.stderr_fd : devnull;
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    for (auto& [from, to] : keep)
      if (::dup2(from, to) < 0) ::_exit(127);
    // Signals as a fresh process expects them (the test runner may have changed some).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(argv[0], argv.data(), envp.data());
    const char* msg = "spawn: exec failed: ";
    (void)!::write(2, msg, std::strlen(msg));
    (void)!::write(2, argv[0], std::strlen(argv[0]));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  ::close(devnull);
  return pid;
}

Output run(SpawnSpec spec, milliseconds timeout) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) < 0) throw std::runtime_error("pipe2");
  if (::pipe2(err_pipe, O_CLOEXEC) < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error("pipe2");
  }
  OwnedFd out_r(out_pipe[0]), out_w(out_pipe[1]), err_r(err_pipe[0]), err_w(err_pipe[1]);
  spec.stdout_fd = out_w.get();
  spec.stderr_fd = err_w.get();
  auto started = Clock::now();
  auto deadline = started + timeout;
  pid_t pid = spawn(spec);
  out_w.reset();
  err_w.reset();

  Output o;
  bool out_open = true, err_open = true;
  char buf[4096];
  while (out_open || err_open) {
    pollfd p[2] = {{out_open ? out_r.get() : -1, POLLIN, 0}, {err_open ? err_r.get() : -1, POLLIN, 0}};
    int n = ::poll(p, 2, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      o.timed_out = true;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(p[i].fd, buf, sizeof buf);
      if (got > 0) {
        (i == 0 ? o.out : o.err).append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        (i == 0 ? out_open : err_open) = false;
      }
    }
  }
  auto code = o.timed_out ? std::nullopt : wait_child(pid, milliseconds(remaining_ms(deadline)));
  if (!code) {
    o.timed_out = true;
    ::kill(pid, SIGKILL);
    code = wait_child(pid, kEventTimeout);
  }
  o.exit_code = code.value_or(-1);
  o.took = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
  return o;
}

bool wait_for_file(const std::string& path, milliseconds timeout) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  OwnedFd in(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (in.get() < 0) throw std::runtime_error("inotify_init1");
  // The watch first, then the check: a file created in between is still seen.
  auto deadline = Clock::now() + timeout;
  if (::inotify_add_watch(in.get(), dir.c_str(), IN_CREATE | IN_MOVED_TO | IN_ATTRIB) < 0) {
    // The folder itself is not there yet (runs/r1/ before r1/ is made): wait for it first, within
    // the same bound, then for the file.
    if (errno == ENOENT && dir != "/" && dir != "." && wait_for_file(dir, timeout))
      return wait_for_file(path, std::chrono::duration_cast<milliseconds>(std::max(deadline - Clock::now(), Clock::duration::zero())));
    return ::access(path.c_str(), F_OK) == 0;
  }
  alignas(inotify_event) char buf[4096];
  for (;;) {
    if (::access(path.c_str(), F_OK) == 0) return true;
    pollfd p{in.get(), POLLIN, 0};
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ::access(path.c_str(), F_OK) == 0;
    while (::read(in.get(), buf, sizeof buf) > 0) {
    }
  }
}

bool wait_folder_gone(const std::string& folder, milliseconds timeout) {
  auto gone = [&] { return ::access(folder.c_str(), F_OK) < 0 && errno == ENOENT; };
  auto slash = folder.rfind('/');
  std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : folder.substr(0, slash));
  OwnedFd in(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (in.get() < 0) throw std::runtime_error("inotify_init1");
  // The watch first, then the check: a folder removed in between is still seen. rmdir tells the
  // parent (IN_DELETE), on cgroupfs too; a parent removed with it tells itself (IN_DELETE_SELF).
  auto deadline = Clock::now() + timeout;
  if (::inotify_add_watch(in.get(), parent.c_str(), IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF) < 0)
    return gone();
  alignas(inotify_event) char buf[4096];
  for (;;) {
    if (gone()) return true;
    pollfd p{in.get(), POLLIN, 0};
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return gone();
    while (::read(in.get(), buf, sizeof buf) > 0) {
    }
  }
}

std::string read_until_eof(int fd, milliseconds timeout, bool* eof) {
  auto deadline = Clock::now() + timeout;
  std::string text;
  char buf[4096];
  *eof = false;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      *eof = true;
      return text;
    }
    text.append(buf, static_cast<std::size_t>(got));
  }
}

bool read_until(int fd, const std::string& text, milliseconds timeout, std::string* got) {
  auto deadline = Clock::now() + timeout;
  char buf[256];
  for (;;) {
    if (got->find(text) != std::string::npos) return true;
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return got->find(text) != std::string::npos;
    got->append(buf, static_cast<std::size_t>(r));
  }
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t read_pid_file(const std::string& path) {
  auto text = read_file(path);
  if (!text || text->empty() || text->back() != '\n') return 0;
  char* end = nullptr;
  long v = std::strtol(text->c_str(), &end, 10);
  if (end == text->c_str() || *end != '\n' || v <= 0) return 0;
  return static_cast<pid_t>(v);
}

std::vector<std::string> list_folder(const std::string& path) {
  std::vector<std::string> names;
  DIR* d = ::opendir(path.c_str());
  if (!d) return names;
  while (auto* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool ignores_signal(pid_t pid, int sig) {
  auto text = read_file("/proc/" + std::to_string(pid) + "/status");
  if (!text) return false;
  auto at = text->find("\nSigIgn:\t");
  if (at == std::string::npos) return false;
  unsigned long long mask = std::strtoull(text->c_str() + at + 9, nullptr, 16);
  return (mask >> (sig - 1)) & 1u;
}

pid_t session_of(pid_t pid) { return ::getsid(pid); }

std::string describe_process(pid_t pid) {
  std::ostringstream s;
  s << pid << " (";
  char st = proc_state(pid);
  if (st == '\0') {
    s << "gone)";
    return s.str();
  }
  s << "state " << st << ", ppid " << proc_parent(pid).value_or(-1) << ", cgroup "
    << proc_cgroup(pid).value_or("?") << ")";
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string nerve_units() {
  if (cgroup_backend()) return cgroup_nerve_units();
  Output o = run(command({"systemctl", "--user", "list-units", "--all", "--plain", "--no-legend", "nerve-*"}));
  if (o.exit_code != 0) return "(systemctl failed: " + o.err + ")";
  return o.out;
}

namespace {

// The user manager's UnitRemoved signals, on a session bus connection of its own. The manager sends
// its unit signals only to subscribed clients: Subscribe is called (and undone by the manager when
// the connection closes).
class UnitRemovals {
 public:
  explicit UnitRemovals(Clock::time_point deadline) {
    int r = ::sd_bus_open_user(&bus_);
    if (r < 0) {
      error_ = std::string("cannot connect to the session bus: ") + std::strerror(-r);
      return;
    }
    r = ::sd_bus_match_signal(bus_, nullptr, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                              "org.freedesktop.systemd1.Manager", "UnitRemoved", &UnitRemovals::on_removed, this);
    if (r < 0) {
      error_ = std::string("cannot match UnitRemoved: ") + std::strerror(-r);
      return;
    }
    sd_bus_message* call = nullptr;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    r = ::sd_bus_message_new_method_call(bus_, &call, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                         "org.freedesktop.systemd1.Manager", "Subscribe");
    if (r >= 0) r = ::sd_bus_call(bus_, call, std::max(remaining_ms(deadline), 1) * 1000ull, &err, nullptr);
    if (r < 0) error_ = std::string("Subscribe: ") + (err.message ? err.message : std::strerror(-r));
    ::sd_bus_error_free(&err);
    ::sd_bus_message_unref(call);
  }
  UnitRemovals(const UnitRemovals&) = delete;
  UnitRemovals& operator=(const UnitRemovals&) = delete;
  ~UnitRemovals() { ::sd_bus_flush_close_unref(bus_); }

  // Why the signals cannot be heard; empty when they can.
  const std::string& error() const { return error_; }

  // Waits until a nerve-* unit has been removed since the last call (true), or DEADLINE passed or the
  // connection failed (false; error() says so).
  bool await_one(Clock::time_point deadline) {
    for (;;) {
      int r;
      while ((r = ::sd_bus_process(bus_, nullptr)) > 0) {
      }
      if (removed_ > 0) {
        removed_ = 0;
        return true;
      }
      if (r < 0) error_ = std::string("the session bus connection failed: ") + std::strerror(-r);
      if (r < 0 || Clock::now() >= deadline) return false;
      r = ::sd_bus_wait(bus_, static_cast<std::uint64_t>(remaining_ms(deadline)) * 1000u);
      if (r < 0 && r != -EINTR) {
        error_ = std::string("sd_bus_wait: ") + std::strerror(-r);
        return false;
      }
    }
  }

 private:
  static int on_removed(sd_bus_message* m, void* self, sd_bus_error*) {
    const char* unit = nullptr;
    if (::sd_bus_message_read(m, "so", &unit, nullptr) >= 0 && unit && std::strncmp(unit, "nerve-", 6) == 0)
      ++static_cast<UnitRemovals*>(self)->removed_;
    return 0;
  }

  sd_bus* bus_ = nullptr;
  std::string error_;
  int removed_ = 0;
};

}  // namespace

std::string await_no_nerve_units(milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  // The cgroup backend removes a scope's folder once it is empty, as systemd collects a scope: wait for
  // each folder to go (inotify, bounded), then look again.
  if (cgroup_backend()) {
    for (const auto& line : lines_of(nerve_units())) {
      auto left = std::max(milliseconds{0}, std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
      if (auto folder = unit_folder(line.substr(0, line.find(' ')))) wait_folder_gone(*folder, left);
    }
    return nerve_units();
  }
  // Subscribed before the first look: a unit removed after it is heard of.
  UnitRemovals removals(deadline);
  for (;;) {
    std::string units = nerve_units();
    if (units.empty() || Clock::now() >= deadline) return units;
    if (!removals.error().empty()) return units + "(cannot wait for their removal: " + removals.error() + ")";
    removals.await_one(deadline);  // a nerve-* unit removed: look again
  }
}

std::vector<std::string> live_nerve_units() {
  if (cgroup_backend()) {
    std::vector<std::string> live;
    for (const auto& l : lines_of(cgroup_nerve_units())) live.push_back(l.substr(0, l.find(' ')) + " active running");
    return live;
  }
  Output o = run(command({"systemctl", "--user", "list-units", "nerve-*", "--all", "--no-legend", "--plain"}));
  std::vector<std::string> live;
  for (const auto& l : lines_of(o.out)) {
    std::istringstream in(l);
    std::string unit, load, active, sub;
    in >> unit >> load >> active >> sub;
    if (unit.empty() || active == "inactive") continue;
    live.push_back(unit + " " + active + " " + sub);
  }
  if (o.exit_code != 0) live.push_back("(systemctl failed: " + o.err + ")");
  return live;
}

bool eventually(const std::function<bool()>& pred, milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred()) return true;
    if (Clock::now() >= deadline) return false;
    struct timespec ts {0, 20'000'000};
    ::nanosleep(&ts, nullptr);
  }
}

}  // namespace nerve::itest
