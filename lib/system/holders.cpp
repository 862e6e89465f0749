// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/holders.h"

#include "process/holder.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <csignal>

namespace nerve {

RealHolders::~RealHolders() {
  // The holders stay (they keep their runs' scopes until the next nerved reaps them); only the
  // watches go.
  for (auto& [pid, fd] : pidfds_) loop_.unwatch_fd(fd.get());
}

Result<pid_t> RealHolders::spawn() {
  auto holder = spawn_holder();
  if (!holder) return holder.error();
  pid_t pid = holder->pid;
  int fd = holder->pidfd.get();
  pidfds_[pid] = std::move(holder->pidfd);
  loop_.watch_fd(fd, EPOLLIN, [this, pid](std::uint32_t) { collect(pid); });
  return pid;
}

void RealHolders::kill(pid_t pid) {
  auto it = pidfds_.find(pid);
  if (it != pidfds_.end()) ::syscall(SYS_pidfd_send_signal, it->second.get(), SIGKILL, nullptr, 0);
}

void RealHolders::collect(pid_t pid) {
  auto it = pidfds_.find(pid);
  if (it == pidfds_.end()) return;
  siginfo_t si{};
  // 0 with no pid: not ended yet. An error (ECHILD): nothing left to collect.
  if (::waitid(P_PIDFD, static_cast<id_t>(it->second.get()), &si, WEXITED | WNOHANG) == 0 && si.si_pid == 0) return;
  loop_.unwatch_fd(it->second.get());
  pidfds_.erase(it);
}

}  // namespace nerve
