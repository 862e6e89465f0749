// SPDX-License-Identifier: LGPL-2.1-or-later
#include "process/holder.h"

#include "base/companion.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace nerve {

namespace {
Error spawn_failed(const std::string& path, const std::string& why) {
  return Error{"nerve.Holder.SpawnFailed", "cannot start the scope holder " + (path.empty() ? std::string(kHolderName) : path) + ": " + why};
}
}  // namespace

const std::string& holder_path() {
  static const std::string path = find_companion(kHolderName, "NERVE_HOLD_HELPER");
  return path;
}

Result<Holder> spawn_holder(const std::string& path) {
  if (path.empty()) return spawn_failed(path, "not installed next to nerved");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd < 3; ++fd) posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_addchdir_np(&actions, "/");
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  char* argv[] = {const_cast<char*>(kHolderName), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv, envp);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (err) return spawn_failed(path, std::strerror(err));
  // Our child, not yet collected: its pid cannot be reused before the pidfd is open.
  Holder h;
  h.pid = pid;
  h.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!h.pidfd) {
    err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return spawn_failed(path, std::string("pidfd_open: ") + std::strerror(err));
  }
  return h;
}

}  // namespace nerve
