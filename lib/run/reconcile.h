// SPDX-License-Identifier: LGPL-2.1-or-later
// Reconciliation: every record without a final receipt is looked at once, idempotently, at startup
// and on `nervectl reconcile`, each within its run's slot (runs are queued at once, so no launch of a
// run is answered before its line). The runs are looked at one per turn of the event loop, never
// all at once: nerved answers calls while a long pass goes on.
//
// For each run, in order: unreadable record: quarantined (quarantine.h); reaped: final; reaping: its
// reap is finished; another boot: reaped (no_scope, nothing signalled); owner gone (and not kept):
// reaped; running and released (contain.h), with a leaf that is empty (its processes ended while
// nerved was down; the holder kept the figures): reaped with cause exited; running and released with
// a live owner: adopted (its owner watched again), or kept when launched with --keep or without a
// known owner (either way its leaf is watched again, exit_watch.h, and a Launch'd command with
// reap_on_exit is watched again); launching, failed, or running but never released (nerved died
// before its reply), with a live owner: that attempt never ran its command, so its scope is cleaned,
// without the fence (the engine may launch the run again).
#pragma once

#include "base/defaults.h"
#include "base/string_table.h"
#include "run/deps.h"
#include "run/exit_watch.h"
#include "run/final_reap.h"
#include "run/launches.h"
#include "run/owner_reaps.h"
#include "run/quarantine.h"
#include "run/run_queue.h"

#include <array>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace nerve {

// What was done for one run; its name is the word of the bus API (Reconcile's lines).
enum class ReconcileAction { Reaped, Adopted, Kept, Cleaned, Final, Quarantined, Skipped };
constexpr auto string_table(ReconcileAction) {
  return std::to_array<Named<ReconcileAction>>({
      {ReconcileAction::Reaped, "reaped"},
      {ReconcileAction::Adopted, "adopted"},
      {ReconcileAction::Kept, "kept"},
      {ReconcileAction::Cleaned, "cleaned"},
      {ReconcileAction::Final, "final"},
      {ReconcileAction::Quarantined, "quarantined"},
      {ReconcileAction::Skipped, "skipped"},
  });
}

// One line of a reconciliation pass: what was done for one run ("" for a folder entry skipped).
struct ReconcileLine {
  std::string run;
  ReconcileAction action;
  std::string detail;  // the outcome and its reason, or why nothing was done
};

class Reconciler {
 public:
  Reconciler(Deps& deps, RunQueue& queue, Quarantine& quarantine, FinalReaps& reaps, OwnerReaps& owner_reaps,
             Launches& launches, Deadlines& deadlines, ExitWatch& exits)
      : deps_(deps), queue_(queue), quarantine_(quarantine), reaps_(reaps), owner_reaps_(owner_reaps),
        launches_(launches), deadlines_(deadlines), exits_(exits) {}

  // One pass over every run; 'done' gets its lines once every run's line is in.
  void pass(std::function<void(std::vector<ReconcileLine>)> done);
  // Called with each running record that has reap_on_exit (a Launch'd run): its command is watched
  // again by whoever launches commands (process_launcher.h), so it is still reaped on exit.
  void on_launched_run(std::function<void(const Record&)> fn) { launched_ = std::move(fn); }

 private:
  // Runs 'work' on a later turn of the loop, kPerTurn per turn, in order.
  void paced(std::function<void()> work);
  void next_paced();
  static constexpr std::size_t kPerTurn = 1;  // a run may write its fence (an fsync): the bus comes between

  // With the run's slot held.
  void one(const std::string& run, std::function<void(ReconcileLine)> done, Clock::duration delay = {});
  // A run whose record could not be read for a passing reason (e.g. out of fds) is reconciled again
  // after 'delay' (doubling up to kRetryMax while it stays unreadable).
  void again_later(const std::string& run, Clock::duration delay);
  void unfinished(Record record, std::function<void(ReconcileLine)> done);
  void reap(Record record, std::string why, std::function<void(ReconcileLine)> done, Cause cause = Cause::Reconciled);

  Deps& deps_;
  RunQueue& queue_;
  Quarantine& quarantine_;
  FinalReaps& reaps_;
  OwnerReaps& owner_reaps_;
  Launches& launches_;
  Deadlines& deadlines_;
  ExitWatch& exits_;
  std::function<void(const Record&)> launched_;
  std::deque<std::function<void()>> paced_;
};

}  // namespace nerve
