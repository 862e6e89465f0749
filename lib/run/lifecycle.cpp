// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/lifecycle.h"

#include "base/errors.h"
#include "base/run_controls.h"
#include "base/run_id.h"

#include <spdlog/spdlog.h>

#include <memory>

namespace nerve {

Lifecycle::Lifecycle(Deps deps, LifecycleOptions options)
    : deps_(std::move(deps)),
      records_(deps_.store),
      quarantine_(deps_),
      reaps_(
          deps_, quarantine_,
          [this](const std::string& run, Cause cause) { reap_in_background(run, "retried reap", cause); },
          options.retry_first),
      owner_reaps_(deps_.owners,
                   [this](const std::string& run, unsigned attempt) {
                     reap_in_background(run, "reap after owner exit", Cause::OwnerGone, attempt);
                   }),
      deadlines_(deps_.timers, [this](const std::string& run) { reap_in_background(run, "timeout reap", Cause::Timeout); }),
      exits_(deps_.cgroups,
             [this](const std::string& run, unsigned attempt) {
               if (reaps_.active_cause(run)) return;  // its reap is under way: that is what emptied run/
               if (auto s = starting_.find(run); s != starting_.end()) return void(s->second = attempt);
               spdlog::info("run {}: its processes have all ended; reaping it (cause exited)", run);
               reap_in_background(run, "reap after its processes ended", Cause::Exited, attempt);
             }),
      launches_(deps_, quarantine_, owner_reaps_, deadlines_, exits_),
      reconciler_(deps_, queue_, quarantine_, reaps_, owner_reaps_, launches_, deadlines_, exits_),
      queries_(deps_),
      nested_(deps_) {
  // Every final reap, also one the reconciliation finishes after a restart, reaps the run's children
  // between its fence and its stop.
  reaps_.children_first([this](const std::string& run, std::function<void(bool)> then) { reap_children(run, then); });
}

void Lifecycle::prime_migration() { deps_.cgroups.prime_migration(); }

void Lifecycle::contain(ContainRequest req, Done<ContainReply> done) {
  // First, for a caller that did not prime at the call's arrival (one under way covers this one):
  // its grace period runs while the checks and the intent write do.
  prime_migration();
  std::string run = req.run;
  if (auto timeout = take_runtime_max(req.controls); !timeout) return done(timeout.error());
  auto parent = nested_.adopt(req.caller_pid ? req.caller_pid : req.pid, run);
  if (!parent) return done(parent.error());
  req.parent = *parent;
  queue_.serial<Result<ContainReply>>(
      run, [this, req = std::move(req)](Done<ContainReply> finish) { launches_.contain(req, finish); }, std::move(done));
}

void Lifecycle::final_reap(const std::string& run, int signal, std::uint64_t grace_usec, Cause cause,
                           Done<Receipt> done) {
  final_reap_of(run, 0, signal, grace_usec, cause, [done = std::move(done)](Result<Receipt> r, bool) { done(r); });
}

void Lifecycle::final_reap_attempt(const std::string& run, unsigned attempt, int signal, std::uint64_t grace_usec,
                                   Cause cause, Done<Receipt> done) {
  final_reap_of(run, attempt, signal, grace_usec, cause, [this, run, attempt, done](Result<Receipt> r, bool moot) {
    if (!moot) return done(r);
    auto now = records_.load_existing(run);
    if (!now) return done(now.error());
    done(Error{error::Superseded, "run " + quote_value(run) + " is at attempt " + std::to_string(now->attempt) +
                                      ", not " + std::to_string(attempt) + ": a relaunch ended attempt " +
                                      std::to_string(attempt) + " already; nothing was done"});
  });
}

void Lifecycle::final_reap_of(const std::string& run, unsigned attempt, int signal, std::uint64_t grace_usec,
                              Cause cause, std::function<void(Result<Receipt>, bool moot)> done) {
  // A reap of an attempt that is no longer the run's reaps nothing, not even children of the new one.
  if (moot(run, attempt, to_string(cause) + " reap")) return done(records_.no_such_run(run), true);
  // In the run's slot: the fence, then the children (depth first, each fenced before it is
  // signalled: FinalReaps' children-first step, reap_children below), then the run itself; then any
  // child whose Contain was under way when the fence refused new ones.
  auto is_moot = std::make_shared<bool>(false);
  queue_.serial<Result<Receipt>>(
      run,
      [this, run, attempt, signal, grace_usec, cause, is_moot](Done<Receipt> finish) {
        // Checked again in the run's slot: a relaunch may have come between.
        if ((*is_moot = moot(run, attempt, to_string(cause) + " reap"))) return finish(records_.no_such_run(run));
        deadlines_.disarm(run);
        reaps_.reap(run, signal, grace_usec, cause, finish);
      },
      [this, run, is_moot, done = std::move(done)](Result<Receipt> r) {
        if (*is_moot) return done(r, true);
        reap_children(run, [r, done](bool) { done(r, false); });
      });
}

void Lifecycle::reap_children(const std::string& run, std::function<void(bool had_children)> then) {
  auto children = nested_.take_children(run);
  if (children.empty()) return then(false);
  auto left = std::make_shared<std::size_t>(children.size());
  for (const auto& child : children)
    final_reap(child, 0, 0, Cause::Reaped, [run, child, left, then](Result<Receipt> r) {
      if (!r && r.error().name != error::NoSuchRun)
        spdlog::error("run {}: reap of its child run {} failed: {}", run, child, r.error().message);
      else if (r)
        spdlog::info("run {}: child run {} reaped first: {}", run, child, to_string(r->outcome));
      if (--*left == 0) then(true);
    });
}

bool Lifecycle::moot(const std::string& run, unsigned attempt, const std::string& why) {
  if (attempt == 0) return false;
  auto record = records_.load(run);
  if (!record || !*record || (*record)->attempt == attempt) return false;
  spdlog::info("run {}: {} of attempt {} is moot: the run is at attempt {}", run, why, attempt, (*record)->attempt);
  return true;
}

void Lifecycle::reap_in_background(const std::string& run, const std::string& why, Cause cause, unsigned attempt) {
  final_reap_of(run, attempt, 0, 0, cause, [this, run, why, cause](Result<Receipt> r, bool moot) {
    if (r || moot || r.error().name == error::NoSuchRun) return;
    spdlog::error("run {}: {} failed: {}", run, why, r.error().message);
    reaps_.retry_later(run, cause);  // e.g. out of fds: the run must still end
  });
}

Cause Lifecycle::exit_cause(const std::string& run) {
  if (auto active = reaps_.active_cause(run)) return *active;
  if (auto receipt = records_.final_receipt(run); receipt && receipt->cause) return *receipt->cause;
  auto record = records_.load(run);
  if (record && *record) {
    auto due = deadline(**record);
    if (due && std::chrono::system_clock::now() >= *due) return Cause::Timeout;
  }
  return Cause::Exited;
}

void Lifecycle::freezer(const std::string& run, bool freeze, Done<void> done) {
  queue_.serial<Result<void>>(
      run,
      [this, run, freeze](Done<void> finish) {
        auto record = records_.load_existing(run);
        if (!record) return finish(record.error());
        if (is_final(record->state))
          return finish(Error{error::RunFinished, "run " + quote_value(run) + " is " + to_string(record->state)});
        if (record->state != RunState::Running)
          return finish(Error{error::InvalidArgument,
                              "run " + quote_value(run) + " is " + to_string(record->state) + ", not running"});
        const char* verb = freeze ? "frozen" : "thawed";
        deps_.systemd.freezer(record->unit, freeze, [finish, run, unit = record->unit, verb](Result<void> r) {
          if (!r)
            return finish(Error{error::ScopeFailed, "run " + quote_value(run) + " (" + unit + ") cannot be " + verb +
                                                        ": " + r.error().message});
          spdlog::info("run {}: {}", run, verb);
          finish({});
        });
      },
      std::move(done));
}

void Lifecycle::reconcile(std::function<void(std::vector<ReconcileLine>)> done) { reconciler_.pass(std::move(done)); }

void Lifecycle::abandon(const std::string& run, unsigned attempt, std::function<void(bool final)> done) {
  auto final = std::make_shared<bool>(false);
  queue_.serial<Result<void>>(
      run,
      [this, run, attempt, final](Done<void> finish) {
        auto record = records_.load(run);
        if ((*final = record && *record && is_final((**record).state))) return finish({});
        if (moot(run, attempt, "abandon")) return finish({});
        launches_.abandon(run, finish);
      },
      [done, final](Result<void>) { done(*final); });
}

Result<void> Lifecycle::may_launch(const std::string& run) {
  auto record = records_.load(run);
  if (record && *record && is_final((**record).state)) return run_finished(**record);
  return {};  // anything else is for the launch itself to find, in the run's slot
}

Result<void> Lifecycle::forget(const std::string& run) {
  if (auto valid = check_run_id(run); !valid) return valid;
  if (queue_.busy(run)) return Error{error::RunBusy, "run " + quote_value(run) + " has a call in progress; try again"};
  auto record = records_.load_existing(run);
  if (!record) return record.error();
  if (record->state != RunState::Reaped)
    return Error{error::RunNotFinished,
                 "run " + quote_value(run) + " is " + to_string(record->state) + "; reap it before forgetting it"};
  if (auto removed = deps_.store.remove(run); !removed)
    return Error{error::RecordFailed, "cannot remove run " + quote_value(run) + ": " + removed.error().message};
  spdlog::info("run {}: forgotten", run);
  return {};
}

void Lifecycle::command_started(const std::string& run, bool started) {
  auto s = starting_.find(run);
  if (s == starting_.end()) return;
  unsigned emptied = s->second;
  starting_.erase(s);
  if (!started || emptied == 0 || reaps_.active_cause(run)) return;
  spdlog::info("run {}: its processes have all ended; reaping it (cause exited)", run);
  reap_in_background(run, "reap after its processes ended", Cause::Exited, emptied);
}

}  // namespace nerve
