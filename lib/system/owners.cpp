// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/owners.h"

#include "base/bus_names.h"
#include "base/host.h"
#include "system/sdbus_compat.h"

#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <systemd/sd-bus.h>
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
    : loop_(loop),
      dbus_(sdbus::createProxy(bus, dbus_daemon::kService, dbus_daemon::kPath)),
      sd_bus_(sd_bus_of(bus), &::sd_bus_unref) {}

namespace {
const std::string kNameOwnerChanged = std::string("type='signal',sender='") + dbus_daemon::kService + "',path='" +
                                      dbus_daemon::kPath + "',interface='" + dbus_daemon::kInterface +
                                      "',member='NameOwnerChanged'";
}  // namespace

std::shared_ptr<void> OwnerWatcher::add_name_match(const std::string& rule, const std::string& name) {
  auto handler = [this](sd_bus_message* m) {
    const char* lost = nullptr;
    const char* old_owner = nullptr;
    const char* new_owner = nullptr;
    if (::sd_bus_message_read(m, "sss", &lost, &old_owner, &new_owner) < 0) return;
    if (!*new_owner) on_name_lost(lost);
  };
  // dbus-daemon out of match rules (its limit per connection): every NameOwnerChanged then, rather
  // than an owner's end missed; and the name is asked about again, after that match.
  auto installed = [this, name](const sd_bus_error* e) {
    if (!e || name.empty()) return;
    spdlog::warn("cannot match NameOwnerChanged of {} alone ({}); matching every NameOwnerChanged", name,
                 e->message ? e->message : e->name);
    match_every_name();
    ask_name_owner(name);
  };
  return add_match_async(sd_bus_.get(), rule, handler, installed);
}

void OwnerWatcher::match_every_name() {
  if (!every_name_) every_name_ = add_name_match(kNameOwnerChanged, "");
}

bool OwnerWatcher::match_name(const std::string& name) {
  auto [it, added] = name_matches_.try_emplace(name);
  ++it->second.runs;
  idle_names_.remove(name);
  if (!added) return true;
  // Without waiting (sdbus_compat.h): the NameHasOwner asked after it is answered with it in place.
  try {
    it->second.slot = add_name_match(kNameOwnerChanged + ",arg0='" + name + "'", name);
  } catch (const sdbus::Error& e) {
    spdlog::warn("cannot match NameOwnerChanged of {} alone ({}); matching every NameOwnerChanged", name,
                 e.getMessage());
    match_every_name();
  }
  return false;
}

void OwnerWatcher::ask_name_owner(const std::string& name) {
  auto unknown = [name](const std::string& why) {
    // Unknown is not gone: keep the runs; they are reaped when the name is seen to go.
    spdlog::warn("cannot ask the bus about owner {}: {}; taking it as alive", name, why);
  };
  try {
    dbus_->callMethodAsync("NameHasOwner")
        .onInterface(dbus_daemon::kInterface)
        .withArguments(name)
        .withTimeout(dbus_daemon::kCallTimeout)
        .uponReplyInvoke([this, name, unknown](const sdbus::Error* e, bool has) {
          if (e) return unknown(e->getMessage());
          if (!has) on_name_lost(name);  // gone before its match was in place
        });
  } catch (const sdbus::Error& e) {
    unknown(e.getMessage());
  }
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
    // The one call to dbus-daemon that waits (ARCHITECTURE.md, the loop): OwnerWatch::alive answers at
    // once, for a reconciliation of a record with a bus owner, at most dbus_daemon::kCallTimeout.
    try {
      bool has = false;
      dbus_->callMethod("NameHasOwner")
          .onInterface(dbus_daemon::kInterface)
          .withArguments(owner.name)
          .withTimeout(dbus_daemon::kCallTimeout)
          .storeResultsTo(has);
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
    // Listen first, then ask, neither waiting: a name that goes after the question is seen by the
    // signal, one gone already by the answer. A name matched already is alive: its end would have
    // removed the match.
    w.name = owner.name;
    bool matched = match_name(owner.name);
    watches_[run] = std::move(w);
    if (!matched) ask_name_owner(owner.name);
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
