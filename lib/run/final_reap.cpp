// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/final_reap.h"

#include "base/defaults.h"
#include "base/errors.h"
#include "run/escaped_scopes.h"
#include "run/fault.h"
#include "run/run_log.h"

#include <algorithm>

namespace nerve {

namespace {
// A Reap of a running run whose command (the contained leader) is no longer in its cgroup: the
// command had ended by itself (`nervectl launch --wait` reaps then, so does an engine after its
// child's exit).
bool leader_exited(Deps& deps, const Record& record) {
  if (record.state != RunState::Running || record.boot_id != deps.boot_id || record.leader_pid <= 0 ||
      record.cgroup.empty())
    return false;
  auto pids = deps.cgroups.pids(record.cgroup);
  return std::find(pids.begin(), pids.end(), record.leader_pid) == pids.end();
}

Cause effective_cause(Deps& deps, const Record& record, Cause asked) {
  if (asked != Cause::Exited && asked != Cause::OwnerGone && asked != Cause::Reaped) return asked;
  auto due = deadline(record);
  if (due && std::chrono::system_clock::now() >= *due) return Cause::Timeout;
  return asked == Cause::Reaped && leader_exited(deps, record) ? Cause::Exited : asked;
}
}  // namespace

void FinalReaps::reap(const std::string& run, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done) {
  quarantine_.load(run, [this, run, signal, grace_usec, cause, done](Result<std::optional<Record>> record) {
    if (!record) return done(record.error());
    if (!*record) return done(records_.no_such_run(run));
    if ((*record)->state == RunState::Reaped)
      if (auto receipt = records_.final_receipt(run)) return done(*receipt);
    reap_record(std::move(**record), signal, grace_usec, cause, done);
  });
}

std::optional<Cause> FinalReaps::active_cause(const std::string& run) const {
  auto it = active_.find(run);
  return it == active_.end() ? std::nullopt : std::optional<Cause>(it->second);
}

void FinalReaps::reap_record(Record record, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done) {
  if (running_ < kConcurrentReaps) return start_reap(std::move(record), signal, grace_usec, cause, std::move(done));
  active_[record.run] = cause;
  waiting_.push_back([this, record = std::move(record), signal, grace_usec, cause, done = std::move(done)]() mutable {
    active_.erase(record.run);  // start_reap marks it again if it reaps
    start_reap(std::move(record), signal, grace_usec, cause, std::move(done));
  });
}

void FinalReaps::next_turns() {
  if (turn_planned_ || waiting_.empty()) return;
  turn_planned_ = true;
  deps_.timers.add_timer(Clock::duration::zero(), [this] {
    turn_planned_ = false;
    while (running_ < kConcurrentReaps && !waiting_.empty()) {
      auto start = std::move(waiting_.front());
      waiting_.pop_front();
      start();
    }
  });
}

void FinalReaps::start_reap(Record record, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done) {
  cause = effective_cause(deps_, record, cause);
  if (auto kept = unrecorded_.find(record.run); kept != unrecorded_.end())
    return reaped(record, kept->second, done);  // reaped already: only its receipt is left to write
  std::shared_ptr<LookupAhead> ahead;
  if (record.state == RunState::Reaping) {
    // A crash may have come between the final receipt and the "reaped" record: that reap is done,
    // and its receipt stands. Only close the record.
    auto earlier = records_.final_receipt(record.run);
    if (earlier && earlier->attempt == record.attempt && earlier->unit == record.unit) {
      if (auto closed = records_.transition(record, RunState::Reaped); !closed)
        log_run(spdlog::level::err, record, "cannot close the record: " + closed.error().message);
      return done(*earlier);
    }
  } else {
    // Asked before the fence is written, so that systemd answers while nerved writes; the
    // decision it feeds is taken after the fence, before any signal.
    ahead = LookupAhead::ask(deps_, record);
    fence(record);
  }
  deps_.owners.unwatch(record.run);
  active_[record.run] = cause;
  // The run's children are reaped after its fence and before anything of the run is signalled; the
  // fence also refuses any new child (nested_runs.h).
  auto stop = [this, record, signal, grace_usec, cause, done, ahead](bool had_children) mutable {
    // The children's reaps took their graces: an answer asked before them is stale.
    if (had_children) ahead = nullptr;
    fault_point(record.parent, "before-stop", "before-child-stop");
    stop_run(record, signal, grace_usec, cause, done, std::move(ahead));
  };
  if (!children_first_) return stop(false);
  children_first_(record.run, std::move(stop));
}

void FinalReaps::stop_run(Record record, int signal, std::uint64_t grace_usec, Cause cause, Done<Receipt> done,
                          std::shared_ptr<LookupAhead> ahead) {
  ++running_;
  // Scopes the run's processes asked the manager for are reaped first (escaped_scopes.h).
  reap_escaped_scopes(deps_, record, grace_usec, signal, cause,
                      [this, record, grace_usec, signal, cause, done, ahead](EscapedReaps escaped) mutable {
    ReapOp::start(deps_, record, grace_usec, signal, cause, [this, record, done, escaped](Receipt receipt) {
      active_.erase(record.run);
      --running_;
      next_turns();
      receipt.escaped = escaped.scopes;
      if (!escaped.error.empty() && receipt.outcome == Outcome::Complete) {
        receipt.outcome = Outcome::PendingRetry;
        receipt.error = escaped.error;
      }
      reaped(record, std::move(receipt), done);
    }, std::move(ahead));
  });
}

void FinalReaps::fence(Record& record) {
  if (auto fenced = records_.transition(record, RunState::Reaping); !fenced) {
    // The disk refuses the fence (full, failing): kill first, record as soon as the disk allows
    // (docs/records.md, "When the fence cannot be written"). A run must never outlive its owner
    // because of the disk.
    log_run(spdlog::level::err, record,
            "cannot write the fence: " + fenced.error().message + "; reaping anyway, the record follows when the disk allows");
    return;
  }
  fault_point(record.parent, "after-fence", "after-child-fence");
}

void FinalReaps::reaped(Record record, Receipt receipt, Done<Receipt> done) {
  log_run(spdlog::level::info, record,
          "reap " + to_string(receipt.outcome) + (receipt.error.empty() ? "" : ": " + receipt.error),
          message_id::Reap);
  fault_point("before-receipt");
  // A final receipt is durable before the record says reaped (which is lazy: the receipt implies it).
  Result<void> written = deps_.store.save_receipt(receipt, is_final(receipt.outcome) ? Sync::Durable : Sync::Lazy);
  if (written) fault_point(record.parent, "after-receipt", "after-child-receipt");
  if (written && is_final(receipt.outcome)) written = records_.transition(record, RunState::Reaped);
  Cause cause = receipt.cause.value_or(Cause::Reaped);
  if (!written) {
    if (is_final(receipt.outcome)) unrecorded_[record.run] = receipt;
    schedule_retry(record, cause);
    return done(Error{error::RecordFailed, "run " + quote_value(record.run) + " was reaped (" +
                                               to_string(receipt.outcome) +
                                               ") but its receipt cannot be written: " + written.error().message});
  }
  unrecorded_.erase(record.run);
  if (is_final(receipt.outcome))
    cancel_retry(record.run);
  else
    schedule_retry(record, cause);
  done(std::move(receipt));
}

void FinalReaps::schedule_retry(const Record& record, Cause cause) {
  log_run(spdlog::level::info, record,
          "reap pending; next try in " +
              std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(arm_retry(record.run, cause)).count()) +
              " ms");
}

void FinalReaps::retry_later(const std::string& run, Cause cause) {
  if (auto it = retries_.find(run); it != retries_.end() && it->second.timer) return;
  auto delay = arm_retry(run, cause);
  spdlog::info("run {}: final reap failed; next try in {} ms", run,
               std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
}

Clock::duration FinalReaps::arm_retry(const std::string& run, Cause cause) {
  Retry& slot = retries_[run];
  slot.delay = slot.delay == Clock::duration::zero() ? retry_first_
                                                     : std::min<Clock::duration>(slot.delay * 2, kRetryMax);
  if (slot.timer) deps_.timers.cancel_timer(slot.timer);
  slot.timer = deps_.timers.add_timer(slot.delay, [this, run, cause] {
    if (auto it = retries_.find(run); it != retries_.end()) it->second.timer = 0;
    requeue_(run, cause);
  });
  return slot.delay;
}

void FinalReaps::cancel_retry(const std::string& run) {
  auto it = retries_.find(run);
  if (it == retries_.end()) return;
  if (it->second.timer) deps_.timers.cancel_timer(it->second.timer);
  retries_.erase(it);
}

}  // namespace nerve
