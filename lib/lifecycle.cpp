#include "lifecycle.h"

#include "durable_file.h"
#include "errors.h"
#include "run_id.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace nerve {

std::optional<Record> Lifecycle::load(const std::string& run, std::optional<BusError>* err) {
  try {
    return deps_.store.load(run);
  } catch (const std::exception& e) {
    *err = BusError{error::RecordFailed, "the record of run " + quote_value(run) + " under " +
                                             deps_.store.run_path(run) + " cannot be read: " + e.what()};
    return std::nullopt;
  }
}

void Lifecycle::contain(ContainRequest req, ContainDone done) {
  std::string run = req.run;
  queue_.submit(run, [this, req = std::move(req), done = std::move(done)](std::function<void()> release) mutable {
    contain_locked(std::move(req), [done = std::move(done), release](auto reply, auto err) {
      release();
      done(std::move(reply), std::move(err));
    });
  });
}

void Lifecycle::contain_locked(ContainRequest req, ContainDone done) {
  if (!deps_.unavailable.empty())
    return done(std::nullopt, BusError{error::ContainmentUnavailable, deps_.unavailable});
  std::string why;
  if (deps_.systemd.version(&why).empty())
    return done(std::nullopt,
                BusError{error::ContainmentUnavailable,
                         "the systemd user manager does not answer on the session bus (" + why +
                             "); the command was not started. Log in to a user session, or enable lingering "
                             "(loginctl enable-linger), or run under tests/harness/with-user-manager.sh"});
  std::optional<BusError> err;
  auto prior = load(req.run, &err);
  if (err) return done(std::nullopt, err);
  if (prior && is_final(prior->state))
    return done(std::nullopt, BusError{error::RunFinished, "run " + quote_value(req.run) + " was reaped (state " +
                                                               to_string(prior->state) +
                                                               "); use another run id, or 'nervectl forget' it first"});
  if (!prior) return ContainOp::start(deps_, std::move(req), 1, std::move(done));

  // A relaunch: the engine recreated its client. The earlier attempt's scope must be gone first.
  Record old = *prior;
  spdlog::info("run {}: attempt {} ({}) is {}; reaping it before attempt {}", old.run, old.attempt, old.unit,
               to_string(old.state), old.attempt + 1);
  ReapOp::start(deps_, old, 0, [this, old, req = std::move(req), done = std::move(done)](Receipt r) mutable {
    spdlog::info("run {} attempt {} unit {}: reaped before relaunch: {}{}", old.run, old.attempt, old.unit,
                 to_string(r.outcome), r.error.empty() ? "" : " (" + r.error + ")");
    if (r.outcome == Outcome::PendingRetry)
      return done(std::nullopt, BusError{error::ScopeFailed, "attempt " + std::to_string(old.attempt) + " of run " +
                                                                 quote_value(old.run) + " (" + old.unit +
                                                                 ") is not confirmed gone: " + r.error +
                                                                 "; the command was not started, try again"});
    ContainOp::start(deps_, std::move(req), old.attempt + 1, std::move(done));
  });
}

void Lifecycle::reap(const std::string& run, std::uint64_t grace_usec, ReapDone done) {
  queue_.submit(run, [this, run, grace_usec, done = std::move(done)](std::function<void()> release) mutable {
    reap_locked(run, grace_usec, [done = std::move(done), release](auto receipt, auto err) {
      release();
      done(std::move(receipt), std::move(err));
    });
  });
}

void Lifecycle::reap_locked(const std::string& run, std::uint64_t grace_usec, ReapDone done) {
  std::optional<BusError> err;
  auto record = load(run, &err);
  if (err) return done(std::nullopt, err);
  if (!record)
    return done(std::nullopt, BusError{error::NoSuchRun, "no run " + quote_value(run) + " (no record under " +
                                                             deps_.store.run_path(run) + ")"});
  if (record->state == RunState::Reaped) {
    try {
      if (auto receipt = deps_.store.load_receipt(run); receipt && is_final(receipt->outcome))
        return done(receipt, std::nullopt);
    } catch (const std::exception& e) {
      spdlog::warn("run {}: receipt unreadable ({}); reaping again", run, e.what());
    }
  }
  // The fence: from here on, the run is final, whatever happens to this reap.
  record->state = RunState::Reaping;
  record->updated_at = now_rfc3339();
  try {
    deps_.store.save(*record);
  } catch (const FsError& e) {
    return done(std::nullopt, BusError{error::RecordFailed, std::string("cannot fence run ") + quote_value(run) +
                                                                " before reaping it: " + e.what()});
  }
  Record rec = *record;
  ReapOp::start(deps_, rec, grace_usec, [this, rec, done = std::move(done)](Receipt receipt) mutable {
    spdlog::info("run {} attempt {} unit {} invocation {}: reap {}{}", rec.run, rec.attempt, rec.unit,
                 rec.invocation_id, to_string(receipt.outcome), receipt.error.empty() ? "" : ": " + receipt.error);
    try {
      deps_.store.save_receipt(receipt);
      if (is_final(receipt.outcome)) {
        rec.state = RunState::Reaped;
        rec.updated_at = now_rfc3339();
        deps_.store.save(rec);
      }
    } catch (const FsError& e) {
      spdlog::error("run {}: cannot write the receipt: {}", rec.run, e.what());
      return done(std::nullopt, BusError{error::RecordFailed, "run " + quote_value(rec.run) + " was reaped (" +
                                                                  to_string(receipt.outcome) +
                                                                  ") but its receipt cannot be written: " + e.what()});
    }
    done(std::move(receipt), std::nullopt);
  });
}

std::string Lifecycle::status_json(const std::string& run) {
  require_valid_run_id(run);
  std::optional<BusError> err;
  auto record = load(run, &err);
  if (err) error::raise(err->name.c_str(), err->message);
  if (!record) error::raise(error::NoSuchRun, "no run " + quote_value(run) + " (no record under " + deps_.store.run_path(run) + ")");
  using nlohmann::json;
  json out;
  out["record"] = json::parse(to_json_text(*record));
  out["receipt"] = nullptr;
  try {
    if (auto r = deps_.store.load_receipt(run)) out["receipt"] = json::parse(to_json_text(*r));
  } catch (const std::exception& e) {
    out["receipt_error"] = e.what();
  }
  json live = {{"known", false}, {"active_state", ""}, {"ours", false}, {"populated", false}, {"pids", json::array()}};
  if (record->boot_id == deps_.boot_id && !record->unit.empty()) {
    Lookup l = deps_.systemd.lookup(record->unit);
    if (l.status == LookupStatus::Found) {
      live["known"] = true;
      live["active_state"] = l.unit.active_state;
      live["ours"] = !record->invocation_id.empty() && l.unit.invocation_id == record->invocation_id;
    } else if (l.status == LookupStatus::Failed) {
      live["error"] = l.error;
    }
    if (!record->cgroup.empty()) {
      auto id = deps_.cgroups.id(record->cgroup);
      if (id && *id == record->cgroup_id) {
        live["populated"] = deps_.cgroups.populated(record->cgroup);
        live["pids"] = deps_.cgroups.pids(record->cgroup);
      }
    }
  }
  out["live"] = live;
  return out.dump();
}

std::vector<RunSummary> Lifecycle::list() {
  std::vector<std::string> skipped;
  std::vector<RunSummary> out;
  for (const auto& run : deps_.store.runs(&skipped)) {
    RunSummary s{run, "", "", ""};
    try {
      if (auto r = deps_.store.load(run)) {
        s.state = to_string(r->state);
        s.unit = r->unit;
      } else {
        s.state = "empty";
      }
      if (auto rc = deps_.store.load_receipt(run)) s.outcome = to_string(rc->outcome);
    } catch (const std::exception& e) {
      s.state = "unreadable";
      spdlog::warn("run {}: {}, ignoring", run, e.what());
    }
    out.push_back(std::move(s));
  }
  for (const auto& why : skipped) spdlog::warn("runs folder: {}, ignoring", why);
  return out;
}

}  // namespace nerve
