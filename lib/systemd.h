// What nerved needs of the systemd user manager, behind one small interface.
//
// The logic (launch, reap) reaches systemd only through Systemd, so its unit tests run against a
// GMock double; SdbusSystemd is the real thing, talking to org.freedesktop.systemd1 on the bus
// nerved is on, with sdbus-c++ (never systemctl or systemd-run). Queries are synchronous with a
// bounded timeout (each is about a millisecond); anything that waits for a job is asynchronous and
// completes on the event loop when the job's JobRemoved arrives.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sdbus {
class IConnection;
class IProxy;
}  // namespace sdbus

namespace nerve {

struct UnitState {
  std::string invocation_id;  // 32 hex digits, or "" when the unit has none
  std::string active_state;   // active, activating, deactivating, inactive, failed
  std::string control_group;  // "" when the unit has no cgroup (any more)
  std::string description;
};

enum class LookupStatus { Found, NoSuchUnit, Failed };
struct Lookup {
  LookupStatus status = LookupStatus::Failed;
  UnitState unit;
  std::string error;  // for Failed: the bus error, named
};

struct ScopeSpec {
  std::string unit;
  std::string description;
  pid_t pid = 0;
  std::uint64_t stop_timeout_usec = 0;
};

// How a job ended: ok when JobRemoved said "done". 'result' is JobRemoved's result, or "" when the
// call itself failed (then 'error' names the bus error).
struct JobOutcome {
  bool ok = false;
  std::string result;
  std::string error;
  bool no_such_unit = false;  // the call failed because the unit is not loaded
};

class Systemd {
 public:
  virtual ~Systemd() = default;
  // The manager's Version property; "" with 'error' set when it does not answer.
  virtual std::string version(std::string* error) = 0;
  virtual Lookup lookup(const std::string& unit) = 0;
  // The names of loaded units matching a glob (ListUnitsByPatterns). false with 'error' on failure.
  virtual bool list_scopes(const std::string& pattern, std::vector<std::string>* units, std::string* error) = 0;
  // StartTransientUnit(unit, "fail", {Description, PIDs (or PIDFDs), KillMode=control-group,
  // TimeoutStopUSec, CollectMode=inactive-or-failed}); 'done' runs when its job is removed.
  virtual void start_scope(const ScopeSpec& spec, std::function<void(JobOutcome)> done) = 0;
  virtual void stop_unit(const std::string& unit, std::function<void(JobOutcome)> done) = 0;
  // KillUnit(unit, "all", signo). "" on success, the bus error otherwise.
  virtual std::string kill_unit(const std::string& unit, int signo) = 0;
};

class SdbusSystemd : public Systemd {
 public:
  // 'bus' is the connection nerved's event loop processes.
  explicit SdbusSystemd(sdbus::IConnection& bus);
  ~SdbusSystemd() override;

  std::string version(std::string* error) override;
  Lookup lookup(const std::string& unit) override;
  bool list_scopes(const std::string& pattern, std::vector<std::string>* units, std::string* error) override;
  void start_scope(const ScopeSpec& spec, std::function<void(JobOutcome)> done) override;
  void stop_unit(const std::string& unit, std::function<void(JobOutcome)> done) override;
  std::string kill_unit(const std::string& unit, int signo) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nerve
