// SPDX-License-Identifier: LGPL-2.1-or-later
// Launch decisions: for a Contain (or a Launch) of a run, a first attempt, a relaunch, or a refusal;
// and the end of an attempt whose command never started.
//
// - No cgroup2, or a user manager that does not answer: ContainmentUnavailable, nothing written. The
//   manager is asked for its version before the first launch and again after a launch failed; not
//   before every launch.
// - A final run (reaping, reaped): RunFinished; a new id or `nervectl forget` is needed.
// - No record: attempt 1 (contain.h). A record of an earlier attempt: the engine recreated its
//   client; that attempt's scope is reaped first (not a final reap, no fence), with the new launch's
//   grace, and attempt N+1 starts only once it is confirmed gone (else ScopeFailed, nothing started).
// - Once running, the run's owner is watched (owner_reaps.h), and so is its leaf (exit_watch.h).
// - abandon: an attempt whose command never ran (exec failed) has its scope reaped and its record
//   marked failed, without the fence, so the run may be launched again.
#pragma once

#include "run/contain.h"
#include "run/deadlines.h"
#include "run/deps.h"
#include "run/exit_watch.h"
#include "run/owner_reaps.h"
#include "run/quarantine.h"
#include "run/reaper.h"
#include "base/result.h"
#include "record/run_records.h"

#include <functional>
#include <string>

namespace nerve {

// RunFinished for a final record: no new attempt may start.
Error run_finished(const Record& record);

class Launches {
 public:
  Launches(Deps& deps, Quarantine& quarantine, OwnerReaps& owner_reaps, Deadlines& deadlines, ExitWatch& exits)
      : deps_(deps), records_(deps.store), quarantine_(quarantine), owner_reaps_(owner_reaps), deadlines_(deadlines),
        exits_(exits) {}

  // With the run's slot held. req.run must be valid and req.pid set from the caller's credentials.
  void contain(ContainRequest req, Done<ContainReply> done);
  // With the run's slot held: abandons the run's current attempt if it is launching or running.
  void abandon(const std::string& run, Done<void> done);
  // Reaps the attempt's scope (not a final reap) and marks its record failed; 'done' gets the receipt.
  void clean_attempt(Record record, std::function<void(Receipt)> done);

 private:
  void check_manager(Done<void> done);
  void decide(ContainRequest req, Done<ContainReply> done);
  void relaunch(Record old, ContainRequest req, Done<ContainReply> done);
  void attempt(ContainRequest req, unsigned number, Done<ContainReply> done);

  Deps& deps_;
  RunRecords records_;
  Quarantine& quarantine_;
  OwnerReaps& owner_reaps_;
  Deadlines& deadlines_;
  ExitWatch& exits_;
  bool manager_answered_ = false;  // since the last failed launch
};

}  // namespace nerve
