// The lifecycle of runs: what nerved does for each bus call, and on its own, without the bus.
//
// Lifecycle checks input, serialises the calls of one run (run_queue.h), decides between a first
// attempt, a relaunch and a refusal, and hands the work to ContainOp (contain.h) and ReapOp
// (reaper.h). It writes receipts and moves records through their states (record.h, docs/records.md).
// It also acts without being asked: it reaps a run when its owner exits (owners.h), retries
// pending_retry reaps with back-off, and reconciles every unfinished record at startup. Errors reach
// the caller as BusError values named in errors.h. manager_object.h puts this on the bus.
#pragma once

#include "contain.h"
#include "deps.h"
#include "reaper.h"
#include "run_queue.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

inline constexpr std::uint64_t kDefaultGraceUsec = 10'000'000;
inline constexpr auto kRetryFirst = std::chrono::seconds(1);
inline constexpr auto kRetryMax = std::chrono::minutes(5);

struct RunSummary {
  std::string run;
  std::string state;
  std::string unit;
  std::string outcome;  // "" while there is no receipt
};

// One line of a reconciliation pass: what was done for one run.
struct ReconcileLine {
  std::string run;
  std::string action;  // reaped, adopted, kept, cleaned, final, quarantined, skipped
  std::string detail;  // the outcome and its reason, or why nothing was done
};

class Lifecycle {
 public:
  explicit Lifecycle(Deps deps) : deps_(std::move(deps)) {}

  using ContainDone = ContainOp::Done;
  using ReapDone = std::function<void(std::optional<Receipt>, std::optional<BusError>)>;
  using ReconcileDone = std::function<void(std::vector<ReconcileLine>)>;

  // req.run must be valid (require_valid_run_id) and req.pid set from the caller's credentials.
  void contain(ContainRequest req, ContainDone done);
  // Final reap of 'run'. grace_usec 0: the grace given at launch.
  void reap(const std::string& run, std::uint64_t grace_usec, ReapDone done) { cancel(run, 0, grace_usec, std::move(done)); }
  // A final reap that first passes 'signal' to every process of the scope (0: TERM; how: reaper.h).
  void cancel(const std::string& run, int signal, std::uint64_t grace_usec, ReapDone done);
  // Every record without a final receipt, once, idempotently (startup and `nervectl reconcile`).
  // Runs are submitted to their queues at once, so no launch of a run is answered before its line.
  void reconcile(ReconcileDone done);
  // An attempt whose command never started (its exec failed): its scope, if any, is reaped and the
  // record marked failed, without the fence, so the run may be launched again.
  // 'attempt' (0: whichever is current): an abandon queued behind a relaunch does nothing.
  void abandon(const std::string& run, unsigned attempt, std::function<void()> done);
  // A final reap of 'attempt' only: when the run has gone on to a later attempt (a relaunch came
  // first in the run's queue), nothing is done and 'done' gets neither receipt nor error.
  void reap_attempt(const std::string& run, unsigned attempt, ReapDone done);
  // Removes a final run's files, so its id can be used again. Throws sdbus::Error (named).
  void forget(const std::string& run);

  // status_json and list throw sdbus::Error (named) for bad input.
  std::string status_json(const std::string& run);
  std::vector<RunSummary> list();

  Deps& deps() { return deps_; }

 private:
  // Loads the record; an unreadable one is quarantined only when 'quarantine_corrupt' (not by queries).
  std::optional<Record> load(const std::string& run, std::optional<BusError>* err, bool quarantine_corrupt = true);
  void contain_locked(ContainRequest req, ContainDone done);
  void reap_locked(const std::string& run, int signal, std::uint64_t grace_usec, ReapDone done);
  void final_reap(Record record, int signal, std::uint64_t grace_usec, ReapDone done);
  void reconcile_locked(const std::string& run, std::function<void(ReconcileLine)> done);
  // Reaps the attempt's scope (not final) and marks the record failed; 'done' gets the reap's receipt.
  void clean_attempt(Record record, std::function<void(Receipt)> done);
  void watch_owner(const Record& record);
  void schedule_retry(const std::string& run);
  // A reap nerved started itself failed before it could begin (the record unreadable for now): retry.
  void retry_unless_pending(const std::string& run);
  // Writes the receipt of a run reaped while the disk refused it (unrecorded_), and closes the record.
  void record_receipt(const std::string& run, ReapDone done);
  // A record that could not be read at reconciliation (not corrupt: e.g. out of fds) is looked at again.
  void retry_reconcile(const std::string& run);
  // Moves an unreadable lifecycle.json aside (returns where it went), then recovers a live scope.
  std::string quarantine(const std::string& run);
  // Writes a new record for the newest live scope of the run found by its name and Description.
  void recover(const std::string& run);

  Deps deps_;
  RunQueue queue_;
  std::map<std::string, std::pair<TimerId, Clock::duration>> retries_;
  std::map<std::string, Clock::duration> reconcile_retries_;
  // Runs reaped (or being reaped) whose fence or receipt the disk did not take yet: final in memory,
  // with the receipt once the reap is over (docs/records.md, "When the fence cannot be written").
  std::map<std::string, std::optional<Receipt>> unrecorded_;
};

}  // namespace nerve
