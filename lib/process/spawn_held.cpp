// SPDX-License-Identifier: LGPL-2.1-or-later
#include "process/spawn_held.h"

#include "process/held_child.h"
#include "process/held_helper.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>

namespace nerve {

namespace {

// The variables that tell the command its own run, given to the child with its release.
constexpr const char* kRunEnvNames[] = {"NERVE_RUN=", "NERVE_RUN_ATTEMPT=", "INVOCATION_ID="};

bool is_run_env(const std::string& entry) {
  for (const char* name : kRunEnvNames)
    if (entry.rfind(name, 0) == 0) return true;
  return false;
}

// The child's fds: its stdio on 0, 1 and 2 (first moved above 2 when one of them is there, so a dup2
// cannot overwrite one still to be copied), its ends of the pipes kept where they are (a dup2 onto
// itself clears close-on-exec in the child only).
struct SpawnFds {
  posix_spawn_file_actions_t actions;
  Fd moved[3];
  bool ok = true;  // false if a stdio fd could not be moved (errno says why)
  SpawnFds(const int (&stdio)[3], int go, int report) {
    posix_spawn_file_actions_init(&actions);
    for (int i = 0; i < 3; ++i) {
      int fd = stdio[i];
      if (fd >= 0 && fd < 3) {
        moved[i].reset(fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 3));
        ok = ok && fd >= 0;
      }
      posix_spawn_file_actions_adddup2(&actions, fd, i);
    }
    posix_spawn_file_actions_adddup2(&actions, go, go);
    posix_spawn_file_actions_adddup2(&actions, report, report);
  }
  ~SpawnFds() { posix_spawn_file_actions_destroy(&actions); }
};

// Starts the helper with the child's ends of the pipes; the pid, or -1 with errno.
pid_t spawn_helper(const SpawnSpec& spec, const std::string& path, int go, int report) {
  HeldHelperArgs args{go, report, spec.sealed, spec.cwd, path, spec.argv, {}};
  for (const auto& e : spec.env)
    if (!is_run_env(e)) args.env.push_back(e);
  std::vector<std::string> strings = held_helper_argv(args);
  std::vector<char*> argv;
  for (auto& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  SpawnFds fds(spec.stdio, go, report);
  if (!fds.ok) return -1;
  pid_t pid = -1;
  if (int err = ::posix_spawn(&pid, held_helper_path().c_str(), &fds.actions, nullptr, argv.data(), envp))
    return errno = err, -1;
  return pid;
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
  if (held_helper_path().empty())
    throw std::system_error(ENOENT, std::generic_category(), std::string("the helper ") + kHeldHelperName + " is not installed next to nerved");
  for (int fd : spec.stdio)
    if (fd < 0) throw std::system_error(EBADF, std::generic_category(), "stdio");
  int go[2], report[2];
  if (!detail::make_held_pipes(go, report)) throw std::system_error(errno, std::generic_category(), "pipe2");
  // The child's ends, go[0] and report[1], are closed here whatever happens; the helper has its own.
  Fd child_go(go[0]), child_report(report[1]);
  HeldChild h;
  h.go.reset(go[1]);
  h.report.reset(report[0]);
  h.pid = spawn_helper(spec, *path, go[0], report[1]);
  if (h.pid < 0) throw std::system_error(errno, std::generic_category(), "posix_spawn of " + held_helper_path());
  h.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, h.pid, 0)));
  if (!h.pidfd) {
    int err = errno;
    ::kill(h.pid, SIGKILL);
    ::waitpid(h.pid, nullptr, 0);
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
