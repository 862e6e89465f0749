#include "lifecycle.h"

#include "errors.h"
#include "run_id.h"

#include <spdlog/spdlog.h>

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
                   [this](const std::string& run) { reap_in_background(run, "reap after owner exit", Cause::OwnerGone); }),
      deadlines_(deps_.timers, [this](const std::string& run) { reap_in_background(run, "timeout reap", Cause::Timeout); }),
      launches_(deps_, quarantine_, owner_reaps_, deadlines_),
      reconciler_(deps_, queue_, quarantine_, reaps_, owner_reaps_, launches_, deadlines_),
      queries_(deps_),
      nested_(deps_) {}

void Lifecycle::contain(ContainRequest req, Done<ContainReply> done) {
  std::string run = req.run;
  auto parent = nested_.adopt(req.caller_pid ? req.caller_pid : req.pid, run);
  if (!parent) return done(parent.error());
  req.parent = *parent;
  queue_.serial<Result<ContainReply>>(
      run, [this, req = std::move(req)](Done<ContainReply> finish) { launches_.contain(req, finish); }, std::move(done));
}

void Lifecycle::final_reap(const std::string& run, int signal, std::uint64_t grace_usec, Cause cause,
                           Done<Receipt> done) {
  // Children first (depth first: each child's reap reaps its own children first), then the run; then
  // any child that was started while the run was being reaped.
  reap_children(run, [this, run, signal, grace_usec, cause, done = std::move(done)]() mutable {
    queue_.serial<Result<Receipt>>(
        run,
        [this, run, signal, grace_usec, cause](Done<Receipt> finish) {
          deadlines_.disarm(run);
          reaps_.reap(run, signal, grace_usec, cause, finish);
        },
        [this, run, done = std::move(done)](Result<Receipt> r) { reap_children(run, [r, done] { done(r); }); });
  });
}

void Lifecycle::reap_children(const std::string& run, std::function<void()> then) {
  auto children = nested_.take_children(run);
  if (children.empty()) return then();
  auto left = std::make_shared<std::size_t>(children.size());
  for (const auto& child : children)
    final_reap(child, 0, 0, Cause::Reaped, [run, child, left, then](Result<Receipt> r) {
      if (!r && r.error().name != error::NoSuchRun)
        spdlog::error("run {}: reap of its child run {} failed: {}", run, child, r.error().message);
      else if (r)
        spdlog::info("run {}: child run {} reaped first: {}", run, child, to_string(r->outcome));
      if (--*left == 0) then();
    });
}

void Lifecycle::reap_in_background(const std::string& run, const std::string& why, Cause cause) {
  final_reap(run, 0, 0, cause, [run, why](Result<Receipt> r) {
    if (!r && r.error().name != error::NoSuchRun) spdlog::error("run {}: {} failed: {}", run, why, r.error().message);
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

void Lifecycle::abandon(const std::string& run, std::function<void()> done) {
  queue_.serial<Result<void>>(
      run, [this, run](Done<void> finish) { launches_.abandon(run, finish); }, [done](Result<void>) { done(); });
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

}  // namespace nerve
