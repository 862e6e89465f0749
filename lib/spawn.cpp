#include "spawn.h"

#include "held_child.h"
#include "sealing.h"

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

// The names of the run's own variables (issue 10 item 7), given to the child with its release.
constexpr const char* kRunEnvNames[] = {"NERVE_RUN=", "NERVE_RUN_ATTEMPT=", "INVOCATION_ID="};
constexpr std::size_t kRunEnvCount = std::size(kRunEnvNames);

bool is_run_env(const std::string& entry) {
  for (const char* name : kRunEnvNames)
    if (entry.rfind(name, 0) == 0) return true;
  return false;
}

// Child side: the "KEY=VALUE\0..." entries that follow the exec word, read to EOF into 'buf' and put
// into the free slots at envp[used..]. Async-signal-safe.
void take_run_env(int go, char* buf, std::size_t size, char** envp, std::size_t used) {
  std::size_t n = 0;
  for (;;) {
    ssize_t r = ::read(go, buf + n, size - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<std::size_t>(r);
    if (n >= size - 1) break;
  }
  buf[n] = '\0';
  std::size_t slot = used;
  for (std::size_t i = 0; i < n && slot < used + kRunEnvCount; ++slot) {
    envp[slot] = buf + i;
    while (i < n && buf[i] != '\0') ++i;
    ++i;
  }
}

// The held child, between fork and exec: async-signal-safe, like everything it calls.
[[noreturn]] void child(const SpawnSpec& spec, const char* path, char* const* argv, char** envp, std::size_t env_used,
                        int go, int report) {
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
    if (fds[i] < 0 || dup2(fds[i], i) < 0) _exit(kHeldChildCancelled);
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) < 0) exit_step_failed(report, errno, "chdir");
  if (!await_word(go, kWordExec)) _exit(kHeldChildCancelled);
  char run_env[512];
  take_run_env(go, run_env, sizeof run_env, envp, env_used);
  const char* step = nullptr;
  if (spec.sealed)
    if (int err = seal_self(&step)) exit_step_failed(report, err, step);
  execve(path, argv, envp);
  exit_step_failed(report, errno, "exec");
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
  for (auto& s : spec.env)
    if (!is_run_env(s)) envp.push_back(const_cast<char*>(s.c_str()));
  std::size_t env_used = envp.size();
  envp.resize(env_used + kRunEnvCount + 1, nullptr);  // slots for the run's variables, then the end
  HeldChild h;
  HeldPipes pipes;
  pid_t pid = fork_held(pipes, [&](int go, int report) { child(spec, path->c_str(), argv.data(), envp.data(), env_used, go, report); });
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "pipe2 or fork");
  h.pid = pid;
  h.go = std::move(pipes.go);
  h.report = std::move(pipes.report);
  h.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!h.pidfd) {
    int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw std::system_error(err, std::generic_category(), "pidfd_open");
  }
  return h;
}

bool release(HeldChild& child, const std::vector<std::string>& run_env) {
  bool ok = send_word(child.go, kWordExec);
  std::string payload;
  for (const auto& e : run_env) payload += e + '\0';
  if (ok && !payload.empty()) (void)!::write(child.go.get(), payload.data(), payload.size());
  child.go.reset();
  return ok;
}

}  // namespace nerve
