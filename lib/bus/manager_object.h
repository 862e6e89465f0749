// SPDX-License-Identifier: LGPL-2.1-or-later
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
#include "run/run_metrics.h"
#include "base/run_controls.h"
#include "bus/run_options.h"
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
  std::string backend = "systemd";  // the Backend property (nerved/backend.h)
  std::string backend_detail;       // the BackendDetail property
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
  // GetMetrics answers with 'metrics', and each answered Contain and Launch is counted in it; then
  // 'changed' is called (nerved's metrics file). Without it, GetMetrics answers Internal.
  void serve_metrics(RunMetrics& metrics, std::function<void()> changed = {}) {
    metrics_ = &metrics;
    metrics_changed_ = std::move(changed);
  }

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
  void GetMetrics(sdbus::Result<std::string>&& result, std::string format) override;
  void SetSliceProperties(sdbus::Result<>&& result, std::string slice,
                          std::vector<sdbus::Struct<std::string, std::string>> properties) override;
  std::string RunsDirectory() override { return settings_.runs_dir; }
  std::string BootID() override { return settings_.boot_id; }
  std::string Version() override;
  bool SealingAvailable() override;
  std::string SealingDetail() override;
  uint64_t DefaultGraceUSec() override { return settings_.default_grace_usec; }
  std::string Backend() override { return settings_.backend; }
  std::string BackendDetail() override { return settings_.backend_detail; }

  // Contain once its caller is known: the caller's pid and uid checked, sealing, the owner.
  void contain_as(const AsyncReply<std::string, std::string, std::string, uint32_t>& reply, RunOptions opts,
                  const BusCaller& caller);
  // The owner named by owner_bus_name: a unique name of the parent of the process 'caller'. Asks its pid
  // (BusCallers: asynchronous, kept), then 'done' with the Owner, or InvalidArgument quoting it.
  void bus_owner(const std::string& name, pid_t caller, std::function<void(Result<Owner>)> done);
  // Launch once its caller is known.
  void launch_as(const AsyncReply<sdbus::ObjectPath, uint32_t>& reply, LaunchRequest req, const std::string& sender,
                 const BusCaller& caller);
  // A request before its options: 'run', nerved's slice, properties and grace.
  ContainRequest run_defaults(const std::string& run) const;
  // Gives 'reply' a ticket of the current message's sender (call_gate.h); false, with LimitExceeded
  // answered, when that sender has too many calls in flight.
  template <typename... Outs>
  bool admit(const AsyncReply<Outs...>& reply);
  // Admits the current call and runs 'work' in its client's turn (call_gate.h); an exception it throws
  // becomes the error reply of 'method'.
  template <typename... Outs>
  void in_turn(const char* method, AsyncReply<Outs...> reply, std::function<void()> work);
  // Runs 'work' with the current call's caller once it is known (BusCallers: at once for a known
  // client); a failure to know it, or an exception 'work' throws, becomes the error reply of 'method'.
  template <typename... Outs>
  void with_caller(const char* method, const AsyncReply<Outs...>& reply, std::function<void(const BusCaller&)> work);
  // with_caller, and AccessDenied unless the caller has nerved's own uid.
  template <typename... Outs>
  void with_own_caller(const char* method, const AsyncReply<Outs...>& reply, std::function<void()> work);
  std::string current_sender();
  // Counts the answer of the Contain or Launch whose slot is 'reply' in the metrics, with its latency.
  template <typename... Outs>
  void count_start(const AsyncReply<Outs...>& reply, StartMethod method);
  // Reap, Cancel and ReapAttempt ('attempt' 0: any).
  void final_reap(const char* method, sdbus::Result<std::string, std::string>&& result, const std::string& run,
                  int signal, uint64_t grace_usec, Cause cause, unsigned attempt = 0);

  Lifecycle& lifecycle_;
  ProcessLauncher& launcher_;
  Systemd& systemd_;
  ManagerSettings settings_;
  CallGate gate_;
  BusCallers callers_;  // the uid and pid of each client, asked once
  std::function<void(const std::string&)> frozen_changed_;
  RunMetrics* metrics_ = nullptr;
  std::function<void()> metrics_changed_;
};

}  // namespace nerve
