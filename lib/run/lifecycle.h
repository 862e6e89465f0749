// SPDX-License-Identifier: LGPL-2.1-or-later
// The lifecycle of runs: what nerved does for each call, and on its own, without the bus.
//
// Lifecycle puts the parts together and serialises the operations of one run (run_queue.h); each
// part is one concept: launch decisions (launches.h, contain.h), final reaps with receipts and
// retries (final_reap.h, reaper.h), reaps when an owner goes (owner_reaps.h), reconciliation with
// quarantine and recovery (reconcile.h, quarantine.h), and read-only queries (run_queries.h), which
// take no slot. Every answer is a Result (result.h); manager_object.h puts this on the bus.
#pragma once

#include "run/deadlines.h"
#include "run/deps.h"
#include "run/exit_watch.h"
#include "run/final_reap.h"
#include "run/launches.h"
#include "run/nested_runs.h"
#include "run/owner_reaps.h"
#include "run/quarantine.h"
#include "run/reconcile.h"
#include "run/run_queries.h"
#include "run/run_queue.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nerve {

struct LifecycleOptions {
  // The first delay before a pending reap is tried again (then doubling, up to kRetryMax).
  Clock::duration retry_first = kRetryFirst;
};

class Lifecycle {
 public:
  explicit Lifecycle(Deps deps, LifecycleOptions options = {});
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  // A Contain or Launch has arrived: starts the kernel's grace period of its migration now, so it
  // runs while nerved checks, spawns and writes the intent (migration_primer.h). Never fails.
  void prime_migration();
  // req.run must be valid (check_run_id) and req.pid set from the caller's credentials.
  void contain(ContainRequest req, Done<ContainReply> done);
  // Final reap of 'run' (cause reaped). grace_usec 0: the grace given at launch.
  void reap(const std::string& run, std::uint64_t grace_usec, Done<Receipt> done) {
    final_reap(run, 0, grace_usec, Cause::Reaped, std::move(done));
  }
  // A final reap (cause cancelled) that first passes 'signal' to every process of the scope (0: StopUnit's TERM).
  void cancel(const std::string& run, int signal, std::uint64_t grace_usec, Done<Receipt> done) {
    final_reap(run, signal, grace_usec, Cause::Cancelled, std::move(done));
  }
  // final_reap of attempt 'attempt' only: Error Superseded, nothing done, when the run is at another
  // attempt at its turn (a relaunch came between; ReapAttempt).
  void final_reap_attempt(const std::string& run, unsigned attempt, int signal, std::uint64_t grace_usec, Cause cause,
                          Done<Receipt> done);
  // The final reap of 'run', its children first (nested_runs.h).
  void final_reap(const std::string& run, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done);
  // A final reap nobody waits for (owner gone, retry, reap on exit, timeout); a failure is logged with
  // 'why' and, unless the run is unknown, tried again later. With 'attempt' (not 0),
  // the reap is moot (logged, nothing done) when the record is at another attempt at its turn: a
  // relaunch came between.
  void reap_in_background(const std::string& run, const std::string& why, Cause cause, unsigned attempt = 0);
  // Why the run ended or is ending, as RunExited tells it: the cause of its final reap in progress,
  // else of its final receipt, else timeout past its deadline, else exited.
  Cause exit_cause(const std::string& run);
  // FreezeUnit (freeze) or ThawUnit on the scope of a running run.
  void freezer(const std::string& run, bool freeze, Done<void> done);
  // Every record without a final receipt, once (reconcile.h).
  void reconcile(std::function<void(std::vector<ReconcileLine>)> done);
  // Told of each running Launch'd run with reap_on_exit that a reconciliation finds (reconcile.h).
  void on_launched_run(std::function<void(const Record&)> fn) { reconciler_.on_launched_run(std::move(fn)); }
  // A Launch'd command between its release and the news that it exec'd (process_launcher.h): while it
  // is starting, its run/ emptying is not "its processes have all ended" (a failed exec empties it
  // too, and must stay a failed start the run may be launched again after). command_started says it
  // exec'd: a run/ that emptied meanwhile gets its final reap now (cause exited); with 'started'
  // false it did not, and abandon follows.
  void command_starting(const std::string& run) { starting_[run] = 0; }
  void command_started(const std::string& run, bool started);
  // Attempt 'attempt' of a run, whose command never started (launches.h); moot at another attempt.
  // 'done' gets true when the run had become final meanwhile (a Cancel or Reap won the race).
  void abandon(const std::string& run, unsigned attempt, std::function<void(bool final)> done);
  // RunFinished when the run is final: Launch refuses it before forking anything.
  Result<void> may_launch(const std::string& run);
  // Removes a final run's files, so its id can be used again.
  Result<void> forget(const std::string& run);

  // Read-only queries (run_queries.h): no slot, nothing changed.
  void status_json(const std::string& run, Done<std::string> done) { queries_.status_json(run, std::move(done)); }
  Result<std::vector<RunSummary>> list() { return queries_.list(); }
  Result<void> exists(const std::string& run) { return queries_.exists(run); }

 private:
  Deps deps_;
  RunQueue queue_;
  RunRecords records_;
  Quarantine quarantine_;
  FinalReaps reaps_;
  OwnerReaps owner_reaps_;
  Deadlines deadlines_;
  ExitWatch exits_;
  Launches launches_;
  Reconciler reconciler_;
  RunQueries queries_;
  NestedRuns nested_;
  std::map<std::string, unsigned> starting_;  // run -> the attempt whose run/ emptied while starting (0: none)

  // Final reaps of the children of 'run' (nested_runs.h), all at once; then 'then', told whether
  // there were any. FinalReaps calls it between a run's fence and its stop.
  void reap_children(const std::string& run, std::function<void(bool had_children)> then);
  // final_reap of 'attempt' (0: any); 'done' learns whether the reap was moot.
  void final_reap_of(const std::string& run, unsigned attempt, int signal, std::uint64_t grace_usec, Cause cause,
                     std::function<void(Result<Receipt>, bool moot)> done);
  // Whether a reap or abandon of 'attempt' (0: any) finds the run at another attempt (logged).
  bool moot(const std::string& run, unsigned attempt, const std::string& why);
};

}  // namespace nerve
