// SPDX-License-Identifier: LGPL-2.1-or-later
// One attempt of a run: put the caller's process into a new transient scope, then say it may exec.
//
// Write order (each step durable before the next):
//   1. intent record: state "launching", attempt, unit name with its nonce, boot id, owner;
//   2. start a holder (holder.h), then StartTransientUnit(PIDs=[pid, holder], Delegate=yes,
//      KillMode=control-group, TimeoutStopUSec=grace), wait for the job's JobRemoved with result "done";
//   3. read InvocationID, ControlGroup and ActiveState; check the pid's "0::" line in /proc/PID/cgroup
//      is that cgroup and the unit is active (systemd can silently move a pid, systemd/systemd#26925,
//      and a scope can briefly go inactive, systemd/systemd#36781); read the cgroup id; then make the
//      scope's leaves (cgroups.h, make_leaves): the pid into run/, the holder into hold/, the
//      controllers enabled;
//   4. running record: invocation id, cgroup, cgroup id, leaf and its id, state "running",
//      "released" true (one lazy write), then the reply. Only now does the caller exec its command.
//      A nerved that dies before 4 leaves the launching intent, which says the command never started
//      (reconcile.h cleans that attempt; the run may be launched again). (Records of an older nerved
//      may say running and not released: the same, see reconcile.h.)
// If any step fails the caller gets a named error and does not exec, and the record says "failed"
// (and the holder is killed). That includes the holder: one that cannot be started is
// ContainmentUnavailable (nerve-hold missing), one that is not in the scope, or leaves that cannot be
// made, ScopeFailed; a run never goes on without its leaf, whose figures its receipt needs.
#pragma once

#include "run/deps.h"
#include "record/record.h"
#include "base/result.h"
#include "record/run_records.h"
#include "base/run_controls.h"

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

struct ContainRequest {
  std::string run;
  pid_t pid = 0;
  std::uint64_t grace_usec = 0;
  bool keep = false;
  Owner owner;
  RunControls controls;  // properties, slice, timeout (run_controls.h)
  std::string parent;    // the run the caller is inside (nested run, set by Lifecycle); "" = none
  pid_t caller_pid = 0;  // whose cgroup tells the parent run (Launch: the engine); 0 = pid
  bool reap_on_exit = false;  // Launch'd with reap_on_exit: kept in the record, for after a restart
};

struct ContainReply {
  std::string unit;
  std::string invocation_id;
  std::string cgroup;  // the cgroup the contained process is in: the run/ leaf when the scope has one
  unsigned attempt = 0;
};

class ContainOp : public std::enable_shared_from_this<ContainOp> {
 public:
  static void start(Deps& deps, ContainRequest req, unsigned attempt, Done<ContainReply> done);
  ContainOp(Deps& deps, ContainRequest req, unsigned attempt, Done<ContainReply> done);

 private:
  void begin();
  void on_started(const Result<void>& job);
  void ask_lookup();
  void on_lookup(const Result<UnitState>& lookup);
  // The membership and identity checks of step 3: the cgroup's id when all hold, else what is wrong.
  Result<std::uint64_t> check(const UnitState& unit);
  // Step 3's leaves (with holders: always in nerved): ScopeFailed when the holder is not in the scope
  // or the leaves cannot be made.
  Result<void> make_leaves(const UnitState& unit);
  // Step 4, just before the reply: the record says running, and that the caller may exec.
  Result<void> release();
  void fail(const char* name, std::string message);
  bool refused_property(const Error& e) const;
  // The run's property (or slice) systemd's refusal MESSAGE names, as given; all of them when it names none.
  std::string refused_properties(const std::string& message) const;
  Result<void> save(RunState state);

  Deps& deps_;
  RunRecords records_;
  ContainRequest req_;
  Record record_;
  Done<ContainReply> done_;
  bool intent_saved_ = false;
  // ContainOp's own deadline for the start job (kStartJobTimeout), whatever the Systemd below does:
  // on expiry ScopeFailed, and a late end of the job is ignored (a stalled manager may never end it).
  TimerId job_deadline_ = 0;
  bool job_expired_ = false;
  // The scope's lookup after its start job, asked again when it times out (a manager busy with
  // thousands of units; the scope itself is fine): kScopeLookupTries in all.
  int lookups_left_ = kScopeLookupTries;
  pid_t holder_ = 0;  // the scope's holder, until it is known to be in hold/ (or killed)
};

}  // namespace nerve
