// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's final reap: the fence, the reap itself (reaper.h), the receipt and the closed record, and
// retries with back-off of a reap that ended pending_retry.
//
// Order (docs/records.md): the record goes to "reaping" (the fence: from then on the run is final,
// whatever happens to the reap) durably before anything is signalled (when the disk refuses the fence,
// the run is killed anyway and recorded as soon as the disk allows: docs/records.md); then the run's
// children are reaped (the children-first step, nested_runs.h: each child fenced before it is
// signalled), also when the fence was found already written (a restart: the tree is finished); then
// the scopes its processes asked the manager for (escaped_scopes.h); then ReapOp; then receipt.json;
// then, for a final outcome, the record goes to "reaped". A record found in "reaping" whose final
// receipt for the same attempt is already written is only closed. If the fence or the receipt
// cannot be written, or the outcome is pending_retry, the reap is tried again after kRetryFirst,
// doubling up to kRetryMax (defaults.h), until it is final; a retry keeps the cause of the reap.
// The cause (record.h) is the one of the path that asked, except that a run past its deadline
// (created_at + timeout_usec) that exited, lost its owner or was reaped ended by its timeout (its
// timeout reap may have been queued behind the other one); and a Reap of a running run whose leader (the command) is no
// longer in its cgroup is `exited`: the command had ended by itself.
#pragma once

#include "base/defaults.h"
#include "run/deps.h"
#include "run/quarantine.h"
#include "run/reaper.h"
#include "base/result.h"
#include "record/run_records.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace nerve {

class FinalReaps {
 public:
  // 'requeue' asks for a final reap of a run again, through its queue (for retries, the first after
  // 'retry_first').
  FinalReaps(Deps& deps, Quarantine& quarantine, std::function<void(const std::string&, Cause)> requeue,
             Clock::duration retry_first = kRetryFirst)
      : deps_(deps), records_(deps.store), quarantine_(quarantine), requeue_(std::move(requeue)),
        retry_first_(retry_first) {}

  // With the run's slot held: loads the record (an unreadable one is quarantined: RecordFailed);
  // a run with a final receipt gets that receipt, untouched; any other is reaped.
  void reap(const std::string& run, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done);
  // With the run's slot held: fences 'record' (or closes it, see above) and reaps it. At most
  // kConcurrentReaps reaps run at once; a reap past them waits its turn (in order, its slot held).
  void reap_record(Record record, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done);
  // The children-first step: 'reap' reaps the children of a run (after its fence, before its stop)
  // and then calls 'then', telling whether it had any. Without one, a run is stopped at once.
  using ChildrenFirst = std::function<void(const std::string& run, std::function<void(bool had_children)> then)>;
  void children_first(ChildrenFirst reap) { children_first_ = std::move(reap); }
  // The cause of the final reap of 'run' in progress, if one is.
  std::optional<Cause> active_cause(const std::string& run) const;

  // Tries the final reap of 'run' again later (back-off as for pending reaps), unless a try is
  // already planned: for a reap that failed before its outcome (e.g. the record unreadable for lack
  // of fds).
  void retry_later(const std::string& run, Cause cause);

 private:
  void start_reap(Record record, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done);
  // Writes the fence of 'record' (durable); when the disk refuses it, logs that and goes on.
  void fence(Record& record);
  // After the fence and the children: the run itself (ReapOp), then reaped().
  void stop_run(Record record, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done,
                std::shared_ptr<LookupAhead> ahead);
  // Starts waiting reaps while fewer than kConcurrentReaps run (on a later loop turn: no recursion).
  void next_turns();
  void reaped(Record record, Receipt receipt, Done<Receipt> done);
  void schedule_retry(const Record& record, Cause cause);
  // (Re)arms the retry timer of 'run' with the next back-off delay, which it returns.
  Clock::duration arm_retry(const std::string& run, Cause cause);
  void cancel_retry(const std::string& run);

  Deps& deps_;
  RunRecords records_;
  Quarantine& quarantine_;
  std::function<void(const std::string&, Cause)> requeue_;
  ChildrenFirst children_first_;
  std::map<std::string, Cause> active_;
  std::size_t running_ = 0;                      // ReapOps in flight
  std::deque<std::function<void()>> waiting_;    // reaps waiting for one of them to end
  bool turn_planned_ = false;
  Clock::duration retry_first_;
  struct Retry {
    TimerId timer = 0;
    Clock::duration delay{};
  };
  std::map<std::string, Retry> retries_;
  // Receipts of runs reaped while the disk refused them (the fence, then the receipt): written by the
  // retry as soon as the disk takes them, without reaping again (docs/records.md).
  std::map<std::string, Receipt> unrecorded_;
};

}  // namespace nerve
