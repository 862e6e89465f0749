// SPDX-License-Identifier: LGPL-2.1-or-later
// What nerved needs of the systemd user manager, behind one small interface.
//
// The logic (launch, reap) reaches systemd only through Systemd, so its unit tests run against a
// GMock double; SdbusSystemd is the real thing, talking to org.freedesktop.systemd1 on the bus
// nerved is on, with sdbus-c++ (never systemctl or systemd-run). Every call is asynchronous: it sends
// its messages and returns; 'done' runs later on the event loop with the answer or an Error, and
// never after the call's deadline (SystemdOptions::call_timeout). Nothing waits on systemd.
// A call that waits for a job (start_scope, stop_unit) completes when the job's JobRemoved arrives.
#pragma once

#include "base/defaults.h"
#include "base/result.h"
#include "system/systemd_link.h"
#include "base/unit_properties.h"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sdbus {
class IConnection;
}  // namespace sdbus

namespace nerve {

class EventLoop;

struct UnitState {
  std::string invocation_id;  // 32 hex digits, or "" when the unit has none
  std::string active_state;   // active, activating, deactivating, inactive, failed
  std::string control_group;  // "" when the unit has no cgroup (any more)
  std::string description;
};

struct ScopeSpec {
  std::string unit;
  std::string description;
  pid_t pid = 0;
  pid_t holder = 0;                       // the scope's holder (process/holder.h), put in with pid and
                                          // Delegate=yes, so nerved may make the scope's leaves; 0 = none
  std::uint64_t stop_timeout_usec = 0;
  std::string slice;                      // "" = systemd's default for a transient scope
  std::uint64_t runtime_max_usec = 0;     // RuntimeMaxUSec; 0 = none
  std::vector<UnitProperty> properties;   // the run's properties (unit_properties.h), after the above
};

namespace systemd_error {
// The unit is not loaded (or only as a "not-found" stub): there is no such unit now.
inline constexpr const char* NoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit";
// A job ended with another result than "done"; the message names the result.
inline constexpr const char* JobFailed = "nerve.Systemd.JobFailed";
// A job's JobRemoved did not come before its deadline.
inline constexpr const char* JobTimeout = "nerve.Systemd.JobTimeout";
}  // namespace systemd_error

inline bool is_no_such_unit(const Error& e) { return e.name == systemd_error::NoSuchUnit; }
// The call got no answer within its deadline (the manager is busy or stalled): it may still be fine.
inline bool is_call_timeout(const Error& e) {
  return e.name == "org.freedesktop.DBus.Error.NoReply" || e.name == "org.freedesktop.DBus.Error.Timeout";
}

class Systemd {
 public:
  virtual ~Systemd() = default;
  // The manager's Version property.
  virtual void version(Done<std::string> done) = 0;
  // InvocationID, ActiveState, Description and (for a scope) ControlGroup of 'unit'. Error NoSuchUnit
  // when the unit is not loaded.
  virtual void lookup(const std::string& unit, Done<UnitState> done) = 0;
  // The names of loaded units matching a glob (ListUnitsByPatterns).
  virtual void list_scopes(const std::string& pattern, Done<std::vector<std::string>> done) = 0;
  // StartTransientUnit(unit, "fail", {Description, PIDs (or PIDFDs; with the holder), Delegate=yes
  // with a holder, KillMode=control-group,
  // TimeoutStopUSec, CollectMode=inactive-or-failed, Slice, RuntimeMaxUSec, the run's properties});
  // 'done' runs when its job is removed.
  virtual void start_scope(const ScopeSpec& spec, Done<void> done) = 0;
  virtual void stop_unit(const std::string& unit, Done<void> done) = 0;
  // KillUnit(unit, "all", signo).
  virtual void kill_unit(const std::string& unit, int signo, Done<void> done) = 0;
  // SetUnitProperties(unit, runtime = false, properties): persistent (e.g. the limits of a slice).
  virtual void set_unit_properties(const std::string& unit, const std::vector<UnitProperty>& properties,
                                   Done<void> done) = 0;
  // FreezeUnit(unit) when 'freeze', else ThawUnit(unit); systemd answers once the cgroup is frozen
  // (or thawed).
  virtual void freezer(const std::string& unit, bool freeze, Done<void> done) = 0;
  // The properties of 'unit' on 'interface' (e.g. org.freedesktop.systemd1.Slice) whose D-Bus type is
  // one a UnitProperty has (t, u, ay), by name: Properties.GetAll on the unit's object.
  virtual void read_properties(const std::string& unit, const std::string& interface,
                               Done<std::map<std::string, PropertyValue>> done) = 0;
};

struct SystemdOptions {
  // The deadline of each call (not of the job a call starts).
  std::chrono::milliseconds call_timeout = kSystemdCallTimeout;
  // The deadline of a start job (from its call's reply to its JobRemoved).
  std::chrono::milliseconds start_job_timeout = kStartJobTimeout;
  // How the manager is reached (systemd_link.h): its private socket when it takes the connection, else
  // the session bus.
  SystemdBus bus = SystemdBus::Auto;
  std::string private_socket = default_private_socket();
};

class SdbusSystemd : public Systemd {
 public:
  // 'bus' is nerved's session bus connection, which 'loop' processes; the link to the manager
  // (systemd_link.h) uses it or a connection of its own to the manager's private socket.
  SdbusSystemd(sdbus::IConnection& bus, EventLoop& loop, SystemdOptions options = {});
  ~SdbusSystemd() override;

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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// systemd's object path of a unit: /org/freedesktop/systemd1/unit/ + the name with every character
// but A-Z a-z 0-9 (and a leading digit) as _XX (hex), as systemd's bus_label_escape does.
std::string unit_object_path(const std::string& unit);

}  // namespace nerve
