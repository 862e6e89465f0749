#include "system/owners.h"

#include "base/host.h"

#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace nerve {

Owner owner_of(pid_t pid) {
  Owner o;
  o.kind = OwnerKind::None;
  auto ppid = proc_parent(pid);
  if (!ppid || *ppid <= 1 || *ppid == user_manager_pid()) return o;
  auto start = proc_start_time(*ppid);
  if (!start) return o;
  o.kind = OwnerKind::Process;
  o.pid = *ppid;
  o.start_time = *start;
  return o;
}

pid_t user_manager_pid() {
  static const pid_t pid = [] {
    const char* v = std::getenv("MANAGERPID");
    return v ? static_cast<pid_t>(std::atoi(v)) : 0;
  }();
  return pid;
}

std::string describe(const Owner& o) {
  if (o.kind == OwnerKind::Process) return "owner pid " + std::to_string(o.pid);
  if (o.kind == OwnerKind::Bus) return "owner bus connection " + o.name;
  return "no owner";
}

OwnerWatcher::OwnerWatcher(EventLoop& loop, sdbus::IConnection& bus)
    : loop_(loop), dbus_(sdbus::createProxy(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus")), bus_(bus) {}

bool OwnerWatcher::match_name(const std::string& name) {
  auto [it, added] = name_matches_.try_emplace(name);
  ++it->second.runs;
  idle_names_.remove(name);
  if (!added) return true;
  std::string rule = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                     "interface='org.freedesktop.DBus',member='NameOwnerChanged'";
  auto handler = [this](sdbus::Message& msg) {
    std::string lost, old_owner, new_owner;
    msg >> lost >> old_owner >> new_owner;
    if (new_owner.empty()) on_name_lost(lost);
  };
  // AddMatch waits for dbus-daemon's answer: the match is in place before alive() asks.
  try {
    it->second.slot = std::shared_ptr<void>(bus_.addMatch(rule + ",arg0='" + name + "'", handler));
  } catch (const sdbus::Error& e) {
    // Out of match rules (dbus-daemon's limit per connection): every NameOwnerChanged then, rather
    // than an owner's end missed.
    spdlog::warn("cannot match NameOwnerChanged of {} alone ({}); matching every NameOwnerChanged", name,
                 e.getMessage());
    if (!every_name_) every_name_ = std::shared_ptr<void>(bus_.addMatch(rule, handler));
  }
  return false;
}

void OwnerWatcher::unmatch_name(const std::string& name) {
  auto it = name_matches_.find(name);
  if (it == name_matches_.end() || --it->second.runs > 0) return;
  // Kept while the name lives, for its next run (an engine launches again: nothing to ask), up to
  // kIdleNames names; its end wakes nerved once, then the match goes.
  idle_names_.push_back(name);
  if (idle_names_.size() > kIdleNames) {
    std::string oldest = idle_names_.front();
    drop_match(oldest);
  }
}

void OwnerWatcher::drop_match(const std::string& name) {
  idle_names_.remove(name);
  auto it = name_matches_.find(name);
  if (it == name_matches_.end()) return;
  // Not inside the match's own handler: the slot goes on a later turn of the loop (RemoveMatch).
  loop_.add_timer(Clock::duration::zero(), [slot = std::move(it->second.slot)] {});
  name_matches_.erase(it);
}

OwnerWatcher::~OwnerWatcher() {
  for (auto& [run, w] : watches_)
    if (w.pidfd) loop_.unwatch_fd(w.pidfd.get());
}

bool OwnerWatcher::alive(const Owner& owner) {
  if (owner.kind == OwnerKind::Process) {
    if (owner.pid <= 0) return false;
    int err = 0;
    auto start = proc_start_time(owner.pid, &err);
    if (!start && err != ENOENT && err != ESRCH) {
      // Out of fds or memory is not "gone": keep the run; it is reaped when the owner is seen to go.
      spdlog::warn("cannot read /proc/{}/stat: {}; taking owner pid {} as alive", owner.pid, std::strerror(err), owner.pid);
      return true;
    }
    return start && *start == owner.start_time;
  }
  if (owner.kind == OwnerKind::Bus) {
    if (owner.name.empty()) return false;
    try {
      bool has = false;
      dbus_->callMethod("NameHasOwner").onInterface("org.freedesktop.DBus").withArguments(owner.name).storeResultsTo(has);
      return has;
    } catch (const sdbus::Error& e) {
      // Unknown is not gone: keep the run; it is reaped when the name is seen to go.
      spdlog::warn("cannot ask the bus about owner {}: {}; taking it as alive", owner.name, e.getMessage());
      return true;
    }
  }
  return false;
}

void OwnerWatcher::watch(const std::string& run, const Owner& owner, std::function<void()> gone) {
  unwatch(run);
  Watch w;
  w.gone = std::move(gone);
  if (owner.kind == OwnerKind::Process) {
    // Open the pidfd first, then check the start time: if it matches, the pidfd is of that very
    // process, and its exit cannot be missed.
    w.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, owner.pid, 0)));
    if (!w.pidfd && errno != ESRCH) return retry_watch(run, owner, std::move(w.gone), errno);
    if (w.pidfd && alive(owner)) {
      int raw = w.pidfd.get();
      loop_.watch_fd(raw, EPOLLIN, [this, run](std::uint32_t) {
        auto it = watches_.find(run);
        if (it == watches_.end()) return;
        auto gone = std::move(it->second.gone);
        unwatch(run);
        gone();
      });
      watches_[run] = std::move(w);
      return;
    }
  } else if (owner.kind == OwnerKind::Bus) {
    // Listen first, then ask: a name that goes after the question is seen by the signal.
    // A name matched already is alive: its end would have removed the match.
    w.name = owner.name;
    bool matched = match_name(owner.name);
    watches_[run] = std::move(w);
    if (matched || alive(owner)) return;
    auto it = watches_.find(run);
    auto fn = std::move(it->second.gone);
    drop_match(owner.name);
    watches_.erase(it);
    loop_.add_timer(Clock::duration::zero(), std::move(fn));
    return;
  }
  loop_.add_timer(Clock::duration::zero(), std::move(w.gone));
}

void OwnerWatcher::retry_watch(const std::string& run, const Owner& owner, std::function<void()> gone, int err) {
  // No pidfd (EMFILE, ENFILE, ENOMEM): an error for this run, not "owner gone". Try again later;
  // the run stays alive meanwhile.
  spdlog::error("run {}: cannot watch {}: pidfd_open: {}; trying again in {} s", run, describe(owner),
                std::strerror(err), std::chrono::duration_cast<std::chrono::seconds>(kWatchRetry).count());
  Watch w;
  w.retry = loop_.add_timer(kWatchRetry, [this, run, owner] {
    auto it = watches_.find(run);
    if (it == watches_.end()) return;
    auto gone = std::move(it->second.gone);
    watches_.erase(it);
    watch(run, owner, std::move(gone));
  });
  w.gone = std::move(gone);
  watches_[run] = std::move(w);
}

void OwnerWatcher::unwatch(const std::string& run) {
  auto it = watches_.find(run);
  if (it == watches_.end()) return;
  if (it->second.retry) loop_.cancel_timer(it->second.retry);
  if (it->second.pidfd) loop_.unwatch_fd(it->second.pidfd.get());
  if (!it->second.name.empty()) unmatch_name(it->second.name);
  watches_.erase(it);
}

void OwnerWatcher::on_name_lost(const std::string& name) {
  std::vector<std::string> runs;
  for (auto& [run, w] : watches_)
    if (!w.name.empty() && w.name == name) runs.push_back(run);
  drop_match(name);
  for (auto& run : runs) {
    auto it = watches_.find(run);
    auto gone = std::move(it->second.gone);
    watches_.erase(it);
    gone();
  }
}

}  // namespace nerve
