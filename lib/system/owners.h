// SPDX-License-Identifier: LGPL-2.1-or-later
// Owners: who started a run. A run never outlives its owner (unless launched --keep).
//
// Two kinds. For `nervectl launch` the owner is nervectl's parent, the engine: a "process" owner,
// recorded as pid plus start time (field 22 of /proc/PID/stat) so a reused pid is never taken for it;
// nerved holds a pidfd of it, which becomes readable when it exits, even by SIGKILL. For a supervisor
// (`nervectl launch --wait`) or an engine calling Launch over the bus, the owner is that client's
// bus connection: a "bus" owner, recorded as its unique name; nerved follows NameOwnerChanged, which
// the bus sends when the connection closes, however the client died. At startup, alive() decides
// between adopting a run and reaping it.
#pragma once

#include "system/event_loop.h"
#include "base/fd.h"
#include "record/record.h"

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

struct sd_bus;

namespace sdbus {
class IConnection;
class IProxy;
}  // namespace sdbus

namespace nerve {

// The owner of a process: its parent, as pid and start time. Kind "none" if it cannot be read, or if
// the parent is one that never goes away: pid 1, or the user manager ($MANAGERPID,
// which systemd sets for the services it starts, nerved among them). A wrapper has such a parent when
// the process that ran it died before its Contain (it was reparented to the nearest subreaper, the
// user manager) or when the manager itself ran it (a service's ExecStart). Its run then has no owner
// and runs until reaped (nerved logs a warning), rather than being tied to the manager's life.
Owner owner_of(pid_t pid);
// The user manager's pid from $MANAGERPID, or 0 when nerved was not started by one.
pid_t user_manager_pid();

// "owner pid 123", "owner bus connection :1.42" or "no owner", for logs and reconcile lines.
std::string describe(const Owner& owner);

class OwnerWatch {
 public:
  virtual ~OwnerWatch() = default;
  // True while the recorded owner exists (same pid and start time; or the bus name has an owner).
  virtual bool alive(const Owner& owner) = 0;
  // Calls 'gone' once, on the event loop, when the owner goes (soon after, if it already has).
  virtual void watch(const std::string& run, const Owner& owner, std::function<void()> gone) = 0;
  virtual void unwatch(const std::string& run) = 0;
};

class OwnerWatcher : public OwnerWatch {
 public:
  OwnerWatcher(EventLoop& loop, sdbus::IConnection& bus);
  ~OwnerWatcher() override;
  bool alive(const Owner& owner) override;
  void watch(const std::string& run, const Owner& owner, std::function<void()> gone) override;
  void unwatch(const std::string& run) override;

 private:
  void on_name_lost(const std::string& name);
  // One NameOwnerChanged match per watched bus name (arg0 = the name), shared by its runs: an
  // unrelated client that comes or goes does not wake nerved. match_name is true when the name was
  // matched already (then it is alive: its end removes the match).
  bool match_name(const std::string& name);
  // The NameOwnerChanged match 'rule' of 'name' ("": of every name), added without waiting.
  std::shared_ptr<void> add_name_match(const std::string& rule, const std::string& name);
  void match_every_name();
  // NameHasOwner, asynchronous: the runs of a name that has no owner (any more) are gone.
  void ask_name_owner(const std::string& name);
  void unmatch_name(const std::string& name);
  void drop_match(const std::string& name);
  void retry_watch(const std::string& run, const Owner& owner, std::function<void()> gone, int err);

  static constexpr auto kWatchRetry = std::chrono::seconds(1);
  struct Watch {
    TimerId retry = 0;  // a pidfd_open that failed for lack of fds is tried again
    Fd pidfd;          // process owners
    std::string name;  // bus owners
    std::function<void()> gone;
  };
  EventLoop& loop_;
  std::unique_ptr<sdbus::IProxy> dbus_;
  std::unique_ptr<sd_bus, sd_bus* (*)(sd_bus*)> sd_bus_;  // the session bus's, for its matches (sdbus_compat.h)
  std::map<std::string, Watch> watches_;
  struct NameMatch {
    std::shared_ptr<void> slot;
    int runs = 0;
  };
  std::map<std::string, NameMatch> name_matches_;
  static constexpr std::size_t kIdleNames = 64;
  std::list<std::string> idle_names_;  // matched names without runs now, oldest first
  std::shared_ptr<void> every_name_;  // only when a name's own match could not be added
};

}  // namespace nerve
