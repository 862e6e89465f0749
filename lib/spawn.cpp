#include "spawn.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>

namespace nerve {

namespace {
[[noreturn]] void child(const SpawnSpec& spec, const char* path, char* const* argv, char* const* envp, int go,
                        int report) {
  // Everything here is async-signal-safe: no allocation, no locks.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    signal(s, SIG_DFL);
  }
  setsid();
  // Move the caller's fds above 2 first, so a dup2 cannot overwrite one still to be copied.
  int fds[3];
  for (int i = 0; i < 3; ++i) fds[i] = fcntl(spec.stdio[i], F_DUPFD_CLOEXEC, 3);
  for (int i = 0; i < 3; ++i)
    if (fds[i] < 0 || dup2(fds[i], i) < 0) _exit(125);
  auto fail = [&](int err, const char* what) {
    char buf[160];
    int n = 0;
    // "errno what": decimal errno, then the step.
    char num[16];
    int k = 0;
    int e = err;
    do {
      num[k++] = static_cast<char>('0' + e % 10);
      e /= 10;
    } while (e && k < 15);
    while (k) buf[n++] = num[--k];
    buf[n++] = ' ';
    for (const char* p = what; *p && n < 150; ++p) buf[n++] = *p;
    (void)!write(report, buf, static_cast<size_t>(n));
    _exit(err == ENOENT ? 127 : 126);
  };
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) < 0) fail(errno, "chdir");
  char c = 0;
  ssize_t n;
  do {
    n = read(go, &c, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1 || c != 'X') _exit(125);
  execve(path, argv, envp);
  fail(errno, "exec");
}
}  // namespace

std::optional<std::string> resolve_command(const std::string& argv0, const std::vector<std::string>& env,
                                           const std::string& cwd) {
  if (argv0.empty()) return std::nullopt;
  if (argv0.find('/') != std::string::npos) return argv0;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) dir = ".";
    // A relative entry is relative to the folder the command runs in, never to nerved's own.
    if (dir.front() != '/' && !cwd.empty()) dir = cwd + "/" + dir;
    std::string candidate = dir + "/" + argv0;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

HeldChild spawn_held(const SpawnSpec& spec) {
  auto path = resolve_command(spec.argv.empty() ? "" : spec.argv[0], spec.env, spec.cwd);
  if (!path) throw std::system_error(ENOENT, std::generic_category(), "'" + (spec.argv.empty() ? "" : spec.argv[0]) + "' not found in PATH");
  std::vector<char*> argv, envp;
  for (auto& s : spec.argv) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  for (auto& s : spec.env) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  int go[2], report[2];
  if (::pipe2(go, O_CLOEXEC) < 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  if (::pipe2(report, O_CLOEXEC) < 0) {
    ::close(go[0]);
    ::close(go[1]);
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    for (int fd : {go[0], go[1], report[0], report[1]}) ::close(fd);
    throw std::system_error(err, std::generic_category(), "fork");
  }
  if (pid == 0) child(spec, path->c_str(), argv.data(), envp.data(), go[0], report[1]);
  ::close(go[0]);
  ::close(report[1]);
  HeldChild h;
  h.pid = pid;
  h.go.reset(go[1]);
  h.report.reset(report[0]);
  h.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!h.pidfd) {
    int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw std::system_error(err, std::generic_category(), "pidfd_open");
  }
  return h;
}

bool release(HeldChild& child) {
  bool ok = ::write(child.go.get(), "X", 1) == 1;
  child.go.reset();
  return ok;
}

}  // namespace nerve
