#include "lifecycle.h"

#include "errors.h"
#include "run_id.h"

#include <spdlog/spdlog.h>

#include <memory>

namespace nerve {

Lifecycle::Lifecycle(Deps deps, LifecycleOptions options)
    : deps_(std::move(deps)),
      records_(deps_.store),
      quarantine_(deps_),
      reaps_(
          deps_, quarantine_, [this](const std::string& run) { reap_in_background(run, "retried reap"); },
          options.retry_first),
      owner_reaps_(deps_.owners,
                   [this](const std::string& run, unsigned attempt) {
                     reap_in_background(run, "reap after owner exit", attempt);
                   }),
      launches_(deps_, quarantine_, owner_reaps_),
      reconciler_(deps_, queue_, quarantine_, reaps_, owner_reaps_, launches_),
      queries_(deps_) {}

void Lifecycle::contain(ContainRequest req, Done<ContainReply> done) {
  std::string run = req.run;
  queue_.serial<Result<ContainReply>>(
      run, [this, req = std::move(req)](Done<ContainReply> finish) { launches_.contain(req, finish); }, std::move(done));
}

void Lifecycle::cancel(const std::string& run, int signal, std::uint64_t grace_usec, Done<Receipt> done) {
  queue_.serial<Result<Receipt>>(
      run, [this, run, signal, grace_usec](Done<Receipt> finish) { reaps_.reap(run, signal, grace_usec, finish); },
      std::move(done));
}

bool Lifecycle::moot(const std::string& run, unsigned attempt, const std::string& why) {
  if (attempt == 0) return false;
  auto record = records_.load(run);
  if (!record || !*record || (*record)->attempt == attempt) return false;
  spdlog::info("run {}: {} of attempt {} is moot: the run is at attempt {}", run, why, attempt, (*record)->attempt);
  return true;
}

void Lifecycle::reap_in_background(const std::string& run, const std::string& why, unsigned attempt) {
  auto is_moot = std::make_shared<bool>(false);
  queue_.serial<Result<Receipt>>(
      run,
      [this, run, why, attempt, is_moot](Done<Receipt> finish) {
        if ((*is_moot = moot(run, attempt, why))) return finish(records_.no_such_run(run));
        reaps_.reap(run, 0, 0, finish);
      },
      [this, run, why, is_moot](Result<Receipt> r) {
        if (r || *is_moot || r.error().name == error::NoSuchRun) return;
        spdlog::error("run {}: {} failed: {}", run, why, r.error().message);
        reaps_.retry_later(run);  // e.g. out of fds: the run must still end (issue 8 item 1)
      });
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

}  // namespace nerve
