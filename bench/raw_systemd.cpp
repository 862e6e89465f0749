// SPDX-License-Identifier: LGPL-2.1-or-later
#include "raw_systemd.h"

#include "clock.h"
#include "procs.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>

namespace bench {

namespace {

constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
using Property = sdbus::Struct<std::string, sdbus::Variant>;
using AuxUnit = sdbus::Struct<std::string, std::vector<Property>>;

}  // namespace

RawSystemd::RawSystemd() : bus_(sdbus::createSessionBusConnection()) {
  bus_->setMethodCallTimeout(60'000'000);
  manager_ = sdbus::createProxy(*bus_, "org.freedesktop.systemd1", "/org/freedesktop/systemd1");
  manager_->uponSignal("JobRemoved").onInterface(kManager).call(
      [this](uint32_t, sdbus::ObjectPath job, std::string, std::string result) { removed_[job] = result; });
  manager_->finishRegistration();
  try {
    manager_->callMethod("Subscribe").onInterface(kManager);
  } catch (const sdbus::Error& e) {
    if (e.getName() != "org.freedesktop.systemd1.AlreadySubscribed") throw;
  }
}

std::string RawSystemd::next_unit() {
  static std::atomic<unsigned> n{0};
  return "bench-raw-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".scope";
}

// Dispatches what the connection already holds (a synchronous call may have queued signals);
// only when there was nothing, waits for the socket. The caller checks its condition in between.
void RawSystemd::pump(int timeout_ms) {
  bool any = false;
  while (bus_->processPendingRequest()) any = true;
  if (any) return;
  auto pd = bus_->getEventLoopPollData();
  pollfd p{pd.fd, pd.events, 0};
  ::poll(&p, 1, timeout_ms);
}

bool RawSystemd::wait_job(const std::string& job, int timeout_ms) {
  auto t0 = Clock::now();
  for (;;) {
    if (auto it = removed_.find(job); it != removed_.end()) {
      bool done = it->second == "done";
      removed_.erase(it);
      return done;
    }
    int left = timeout_ms - static_cast<int>(ms_since(t0));
    if (left <= 0) return false;
    pump(left);
  }
}

bool RawSystemd::start_scope(const std::string& unit, pid_t pid) {
  std::vector<Property> props{
      {"PIDs", sdbus::Variant(std::vector<uint32_t>{static_cast<uint32_t>(pid)})},
      {"KillMode", sdbus::Variant(std::string("control-group"))},
      {"TimeoutStopUSec", sdbus::Variant(uint64_t{10'000'000})},
      {"CollectMode", sdbus::Variant(std::string("inactive-or-failed"))},
  };
  sdbus::ObjectPath job;
  manager_->callMethod("StartTransientUnit").onInterface(kManager)
      .withArguments(unit, std::string("fail"), props, std::vector<AuxUnit>{})
      .storeResultsTo(job);
  return wait_job(job);
}

bool RawSystemd::stop_until_empty(const std::string& unit, const std::string& cgroup) {
  EmptyWatch w(cgroup);
  sdbus::ObjectPath job;
  manager_->callMethod("StopUnit").onInterface(kManager).withArguments(unit, std::string("replace")).storeResultsTo(job);
  bool empty = w.wait();
  return wait_job(job) && empty;
}

bool RawSystemd::kill_until_empty(const std::string& unit, const std::string& cgroup, int sig) {
  EmptyWatch w(cgroup);
  manager_->callMethod("KillUnit").onInterface(kManager).withArguments(unit, std::string("all"), int32_t{sig});
  return w.wait();
}

std::size_t RawSystemd::count_units(const std::string& pattern) {
  using UnitInfo = sdbus::Struct<std::string, std::string, std::string, std::string, std::string, std::string,
                                 sdbus::ObjectPath, uint32_t, std::string, sdbus::ObjectPath>;
  std::vector<UnitInfo> units;
  manager_->callMethod("ListUnitsByPatterns").onInterface(kManager)
      .withArguments(std::vector<std::string>{}, std::vector<std::string>{pattern})
      .storeResultsTo(units);
  return units.size();
}

pid_t RawSystemd::pid_of(const std::string& bus_name) {
  auto dbus = sdbus::createProxy(*bus_, "org.freedesktop.DBus", "/org/freedesktop/DBus");
  uint32_t pid = 0;
  dbus->callMethod("GetConnectionUnixProcessID").onInterface("org.freedesktop.DBus").withArguments(bus_name)
      .storeResultsTo(pid);
  return static_cast<pid_t>(pid);
}

std::string RawSystemd::manager_version() {
  return manager_->getProperty("Version").onInterface(kManager).get<std::string>();
}

}  // namespace bench
