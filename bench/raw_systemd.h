// SPDX-License-Identifier: LGPL-2.1-or-later
// The reference client: what a minimal resident program does with the user manager directly, over
// the same session bus nerve uses (one connection, subscribed once, no records, no checks).
#pragma once

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <memory>
#include <string>
#include <sys/types.h>

namespace bench {

class RawSystemd {
 public:
  RawSystemd();
  // A new unit name, unique in this process: bench-raw-<pid>-<n>.scope.
  static std::string next_unit();
  // StartTransientUnit of a scope holding pid; returns once its job is removed (true if "done").
  bool start_scope(const std::string& unit, pid_t pid);
  // StopUnit, then waits until the cgroup is empty (the measured part) and for the stop job.
  bool stop_until_empty(const std::string& unit, const std::string& cgroup);
  // KillUnit(unit, "all", sig), then waits until the cgroup is empty.
  bool kill_until_empty(const std::string& unit, const std::string& cgroup, int sig);
  // Units of the manager whose names match the glob, any state.
  std::size_t count_units(const std::string& pattern);
  // The pid behind a bus name (e.g. org.freedesktop.systemd1, org.freedesktop.DBus).
  pid_t pid_of(const std::string& bus_name);
  std::string manager_version();
  sdbus::IConnection& bus() { return *bus_; }

 private:
  bool wait_job(const std::string& job, int timeout_ms = 30'000);
  void pump(int timeout_ms);
  std::unique_ptr<sdbus::IConnection> bus_;
  std::unique_ptr<sdbus::IProxy> manager_;
  std::map<std::string, std::string> removed_;  // job path -> result, until claimed
};

}  // namespace bench
