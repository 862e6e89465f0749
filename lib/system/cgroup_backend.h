// SPDX-License-Identifier: LGPL-2.1-or-later
// The cgroup backend: the Systemd interface (systemd.h) over a cgroup2 subtree delegated to nerved,
// for hosts with no user manager (a privileged container, WSL, OpenRC, a unit with Delegate=yes;
// docs/operations.md "Backends"). The logic above it (launch, reap, reconcile) is the same for both
// backends; only what a "scope" is changes:
//
// - A scope is a folder named as systemd would name the unit, <root>/<unit>, or <root>/<slice>/<unit>
//   with a slice (a slice is a folder <root>/<slice>, whose files are its limits). <root> is the
//   subtree nerved was given (cgroup_subtree.h says which it may take); nothing outside it is written.
// - start_scope makes the folder, writes the run's limits (cgroup_limits.h; a limit whose controller
//   the subtree lacks is refused by name, org.freedesktop.DBus.Error.InvalidArgs as systemd does, so
//   the launch's error names the property), moves the holder and then the pid into it, and is done:
//   there is no job to wait for.
// - A scope's InvocationID is its folder's cgroup id, as 32 hex digits: unique for the folder's life
//   in this boot, and different for any folder made later under the same name, which is what the
//   invocation id fences in the systemd backend. Its Description is kept in the folder's extended
//   attribute user.nerve.description. ActiveState is "active" while the folder exists.
// - A scope that empties is removed, as systemd collects a scope whose processes are all gone: every
//   scope started here, found at construction (an earlier nerved's) or found by a lookup, is watched
//   until "populated 0", and then its folder is removed (a lookup that finds one empty removes it and
//   answers NoSuchUnit). So the logic above
//   sees the same lifetime of a scope on both backends.
// - stop_unit is systemd's stop of a scope with KillMode=control-group: SIGTERM and SIGCONT to every
//   process below, cgroup.kill once the scope's TimeoutStopUSec (its spec's stop_timeout_usec; 90 s,
//   systemd's default, for a scope this nerved did not start) is over, and once cgroup.events says
//   "populated 0", the folder and every folder below it removed; done then. kill_unit signals every
//   process below. freezer writes cgroup.freeze and is done once cgroup.events says so.
// Every wait is a watch on cgroup.events or a timer; nothing sleeps. Calls answer on the event loop,
// never from inside the call.
#pragma once

#include "system/cgroup_limits.h"
#include "system/cgroups.h"
#include "system/event_loop.h"
#include "system/systemd.h"

#include <map>
#include <memory>
#include <string>

namespace nerve {

struct CgroupBackendOptions {
  std::string mount;  // where cgroup2 is mounted (cgroup_root(), host.h)
  std::string root;   // the subtree, as /proc/PID/cgroup names it ("/nerve"; "/" for the whole tree)
  std::chrono::milliseconds call_timeout = kSystemdCallTimeout;  // the bound of a freeze or thaw
};

namespace cgroup_backend_error {
inline constexpr const char* UnitExists = "org.freedesktop.systemd1.UnitExists";
inline constexpr const char* InvalidArgs = "org.freedesktop.DBus.Error.InvalidArgs";
inline constexpr const char* Failed = "nerve.Cgroup.Failed";
}  // namespace cgroup_backend_error

class CgroupBackend : public Systemd {
 public:
  CgroupBackend(EventLoop& loop, Cgroups& cgroups, CgroupBackendOptions options);
  ~CgroupBackend() override;

  void version(Done<std::string> done) override;
  void lookup(const std::string& unit, Done<UnitState> done) override;
  void list_scopes(const std::string& pattern, Done<std::vector<std::string>> done) override;
  void start_scope(const ScopeSpec& spec, Done<void> done) override;
  void stop_unit(const std::string& unit, Done<void> done) override;
  void kill_unit(const std::string& unit, int signo, Done<void> done) override;
  void set_unit_properties(const std::string& unit, const std::vector<UnitProperty>& properties,
                           Done<void> done) override;
  void freezer(const std::string& unit, bool freeze, Done<void> done) override;
  void read_properties(const std::string& unit, const std::string& interface,
                       Done<std::map<std::string, PropertyValue>> done) override;

  // The cgroup (as /proc/PID/cgroup names it) of a unit's folder, or "" when there is none.
  std::string find(const std::string& unit) const;

 private:
  struct Stop;
  struct Freeze;
  // 'fn' runs on the loop, after the call that asked for it has returned.
  void later(std::function<void()> fn);
  std::string full(const std::string& cgroup) const;
  Result<void> write_limits(const std::string& cgroup, const std::vector<UnitProperty>& properties);
  void check_stop(const std::string& unit);
  void finish_stop(const std::string& unit, Result<void> result);
  void check_freeze(const std::shared_ptr<Freeze>& f);
  // Watches CGROUP (a scope's folder) and removes it once it is empty; true while it lives.
  bool collect_when_empty(const std::string& cgroup);
  void check_collect(const std::string& cgroup);

  EventLoop& loop_;
  Cgroups& cgroups_;
  CgroupBackendOptions options_;
  HostLimits host_;
  std::map<std::string, std::uint64_t> stop_timeouts_;  // unit -> TimeoutStopUSec, for scopes started here
  std::map<std::string, std::shared_ptr<Stop>> stops_;  // unit -> its stop under way
  std::map<std::string, int> collected_;                // cgroup -> its watch, removed once it empties
};

}  // namespace nerve
