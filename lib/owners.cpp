#include "owners.h"

#include "host.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace nerve {

Owner owner_of(pid_t pid) {
  Owner o;
  o.kind = "none";
  auto ppid = proc_parent(pid);
  if (!ppid || *ppid <= 1) return o;
  auto start = proc_start_time(*ppid);
  if (!start) return o;
  o.kind = "process";
  o.pid = *ppid;
  o.start_time = *start;
  return o;
}

PidfdOwnerWatch::~PidfdOwnerWatch() {
  for (auto& [run, fd] : pidfds_) loop_.unwatch_fd(fd.get());
}

bool PidfdOwnerWatch::alive(const Owner& owner) {
  if (owner.kind != "process" || owner.pid <= 0) return false;
  auto start = proc_start_time(owner.pid);
  return start && *start == owner.start_time;
}

void PidfdOwnerWatch::watch(const std::string& run, const Owner& owner, std::function<void()> gone) {
  unwatch(run);
  // Open the pidfd first, then check the start time: if it matches, the pidfd is of that very
  // process, and its exit cannot be missed.
  Fd fd(owner.kind == "process" ? static_cast<int>(::syscall(SYS_pidfd_open, owner.pid, 0)) : -1);
  if (!fd || !alive(owner)) {
    loop_.add_timer(Clock::duration::zero(), std::move(gone));
    return;
  }
  int raw = fd.get();
  pidfds_[run] = std::move(fd);
  loop_.watch_fd(raw, EPOLLIN, [this, run, gone = std::move(gone)](std::uint32_t) {
    unwatch(run);
    gone();
  });
}

void PidfdOwnerWatch::unwatch(const std::string& run) {
  auto it = pidfds_.find(run);
  if (it == pidfds_.end()) return;
  loop_.unwatch_fd(it->second.get());
  pidfds_.erase(it);
}

}  // namespace nerve
