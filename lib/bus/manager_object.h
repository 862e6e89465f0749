// org.nerve.Lifecycle1.Manager on the bus: the generated adaptor, implemented by calling Lifecycle
// and ProcessLauncher. Each method only checks its arguments and the caller's credentials, and turns
// Results into replies (bus_reply.h); the logic is in lifecycle.h. Methods that wait for systemd or
// a reap are asynchronous, so the event loop goes on serving other calls meanwhile.
#pragma once

#include "bus/bus_caller.h"
#include "bus/bus_reply.h"
#include "bus/call_gate.h"
#include "run/lifecycle.h"
#include "generated/nerve-adaptor.h"
#include "run/process_launcher.h"
#include "base/run_controls.h"
#include "system/systemd.h"

#include <sdbus-c++/sdbus-c++.h>

namespace nerve {

inline constexpr const char* kBusName = "org.nerve.Lifecycle1";
inline constexpr const char* kObjectPath = "/org/nerve/Lifecycle1";

struct ManagerSettings {
  std::string runs_dir;  // the RunsDirectory property
  std::string boot_id;   // the BootID property
  std::string default_slice = kDefaultSlice;  // the slice of a run that names none
  std::uint64_t default_grace_usec = kDefaultGraceUsec;  // the grace of a launch that gives none (nerved.conf)
  std::vector<std::string> default_properties;  // "KEY=VALUE" every run starts with; its own win (nerved.conf)
  std::size_t calls_per_client = kCallsPerClient;  // calls in flight per client (call_gate.h)
};

// Also the org.freedesktop.DBus.ObjectManager of the run objects below it (run_objects.h).
class ManagerObject
    : public sdbus::AdaptorInterfaces<org::nerve::Lifecycle1::Manager_adaptor, sdbus::ObjectManager_adaptor> {
 public:
  ManagerObject(sdbus::IConnection& bus, Timers& timers, Lifecycle& lifecycle, ProcessLauncher& launcher,
                Systemd& systemd, ManagerSettings settings);
  using Manager_adaptor::emitRunExited;
  ~ManagerObject();
  // Called with a run whose freezer state was changed by Freeze or Thaw (its object's Frozen).
  void on_frozen_changed(std::function<void(const std::string&)> fn) { frozen_changed_ = std::move(fn); }

 private:
  void Contain(sdbus::Result<std::string, std::string, std::string, uint32_t>&& result, std::string run,
               uint64_t grace_usec, std::map<std::string, sdbus::Variant> options) override;
  void Reap(sdbus::Result<std::string, std::string>&& result, std::string run, uint64_t grace_usec) override;
  void ReapAttempt(sdbus::Result<std::string, std::string>&& result, std::string run, uint32_t attempt, int32_t signal,
                   uint64_t grace_usec) override;
  void Freeze(sdbus::Result<>&& result, std::string run) override { freezer(std::move(result), run, true); }
  void Thaw(sdbus::Result<>&& result, std::string run) override { freezer(std::move(result), run, false); }
  void freezer(sdbus::Result<>&& result, const std::string& run, bool freeze);
  void Cancel(sdbus::Result<std::string, std::string>&& result, std::string run, int32_t signal,
              uint64_t grace_usec) override;
  void Launch(sdbus::Result<sdbus::ObjectPath, uint32_t>&& result, std::string run, std::vector<std::string> argv,
              std::vector<std::string> env, std::string cwd, std::vector<sdbus::UnixFd> stdio,
              std::map<std::string, sdbus::Variant> options) override;
  void GetRunPath(sdbus::Result<sdbus::ObjectPath>&& result, std::string run) override;
  void Reconcile(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>&& result) override;
  void Forget(sdbus::Result<>&& result, std::string run) override;
  void GetRun(sdbus::Result<std::string>&& result, std::string run) override;
  void ListRuns(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>>&& result)
      override;
  void SetSliceProperties(sdbus::Result<>&& result, std::string slice,
                          std::vector<sdbus::Struct<std::string, std::string>> properties) override;
  std::string RunsDirectory() override { return settings_.runs_dir; }
  std::string BootID() override { return settings_.boot_id; }
  std::string Version() override;
  bool SealingAvailable() override;
  std::string SealingDetail() override;

  // The request of a Contain: the caller's pid and owner, and its options.
  ContainRequest contain_request(const std::string& run, uint64_t grace_usec,
                                 const std::map<std::string, sdbus::Variant>& options);
  // The owner named by the option owner_bus_name, checked against the caller 'pid'.
  Owner bus_owner(const sdbus::Variant& value, pid_t pid);
  // The pid of the process behind a bus name, or 0.
  pid_t pid_of_bus_name(const std::string& name);
  // Checks Launch's arguments and turns them into a request.
  LaunchRequest launch_request(const std::string& run, std::vector<std::string> argv, std::vector<std::string> env,
                               std::string cwd, const std::vector<sdbus::UnixFd>& stdio,
                               const std::map<std::string, sdbus::Variant>& options);
  // Launch's options: grace_usec, reap_on_exit, keep, sealed.
  static void set_launch_options(LaunchRequest& req, const std::map<std::string, sdbus::Variant>& options);
  // The slice and default properties of a run before its own options.
  RunControls default_controls() const;
  // Gives 'reply' a ticket of the current message's sender (call_gate.h); false, with LimitExceeded
  // answered, when that sender has too many calls in flight.
  template <typename... Outs>
  bool admit(const AsyncReply<Outs...>& reply);
  // Admits the current call and runs 'work' in its client's turn (call_gate.h); an exception it throws
  // becomes the error reply of 'method'.
  template <typename... Outs>
  void in_turn(const char* method, AsyncReply<Outs...> reply, std::function<void()> work);
  std::string current_sender();
  // AccessDenied unless the current message comes from nerved's own uid.
  void check_current_caller();
  // Reap and Cancel.
  // Reap, Cancel and ReapAttempt ('attempt' 0: any).
  void final_reap(sdbus::Result<std::string, std::string>&& result, const std::string& run, int signal,
                  uint64_t grace_usec, Cause cause, unsigned attempt = 0);

  Lifecycle& lifecycle_;
  ProcessLauncher& launcher_;
  Systemd& systemd_;
  ManagerSettings settings_;
  CallGate gate_;
  BusCallers callers_;  // the uid and pid of each client, asked once
  std::function<void(const std::string&)> frozen_changed_;
};

}  // namespace nerve
