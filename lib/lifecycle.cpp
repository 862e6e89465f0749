#include "lifecycle.h"

#include "durable_file.h"
#include "errors.h"
#include "fault.h"
#include "run_id.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <memory>

namespace nerve {

std::optional<Record> Lifecycle::load(const std::string& run, std::optional<BusError>* err, bool quarantine_corrupt) {
  try {
    return deps_.store.load(run);
  } catch (const RecordCorrupt& e) {
    if (!quarantine_corrupt) {
      *err = BusError{error::RecordFailed, "the record of run " + quote_value(run) + " is unreadable: " + e.what()};
      return std::nullopt;
    }
    std::string moved = quarantine(run);
    spdlog::error("run {}: unreadable record ({}) moved to {}", run, e.what(), moved);
    *err = BusError{error::RecordFailed, "the record of run " + quote_value(run) + " was unreadable (" + e.what() +
                                             ") and was moved to " + moved + "; try again"};
  } catch (const std::exception& e) {
    *err = BusError{error::RecordFailed, "the record of run " + quote_value(run) + " under " +
                                             deps_.store.run_path(run) + " cannot be read: " + e.what()};
  }
  return std::nullopt;
}

std::string Lifecycle::quarantine(const std::string& run) {
  std::string to;
  try {
    to = deps_.store.quarantine(run);
  } catch (const FsError& e) {
    return "(nowhere: " + std::string(e.what()) + ")";
  }
  recover(run);
  return to;
}

void Lifecycle::recover(const std::string& run) {
  // The record is gone, but a scope of the run may still live. Ours are named nerve-<run>-<nonce>
  // .scope and carry "nerve run <run> attempt <N> nonce=<nonce>" in their Description: write a new
  // record for the newest such scope, so it is reaped with the run (a relaunch reaps it first).
  std::vector<std::string> units;
  std::string err;
  if (!deps_.systemd.list_scopes("nerve-" + run + "-*.scope", &units, &err)) {
    spdlog::error("run {}: cannot list its scopes after quarantine: {}", run, err);
    return;
  }
  std::optional<Record> best;
  for (const auto& unit : units) {
    Lookup l = deps_.systemd.lookup(unit);
    if (l.status != LookupStatus::Found || l.unit.control_group.empty()) continue;
    auto parsed = parse_scope_description(l.unit.description);
    if (!parsed || parsed->run != run || scope_unit_name(run, parsed->nonce) != unit) continue;
    auto id = deps_.cgroups.id(l.unit.control_group);
    if (!id) continue;
    if (best && best->attempt >= parsed->attempt) continue;
    Record r;
    r.run = run;
    r.attempt = parsed->attempt;
    r.unit = unit;
    r.nonce = parsed->nonce;
    r.boot_id = deps_.boot_id;
    r.invocation_id = l.unit.invocation_id;
    r.cgroup = l.unit.control_group;
    r.cgroup_id = *id;
    r.state = RunState::Running;
    r.grace_usec = kDefaultGraceUsec;
    r.owner.kind = "none";  // unknown: kept until reaped
    r.created_at = r.updated_at = now_rfc3339();
    best = r;
  }
  if (!best) return;
  try {
    deps_.store.save(*best);
    spdlog::warn("run {}: live scope {} recovered into a new record (owner unknown: reap the run to end it)", run,
                 best->unit);
  } catch (const FsError& e) {
    spdlog::error("run {}: live scope {} found, but its record cannot be written: {}", run, best->unit, e.what());
  }
}

// ---- launch ---------------------------------------------------------------------------------------

void Lifecycle::contain(ContainRequest req, ContainDone done) {
  std::string run = req.run;
  // What watch_owner needs, from the request: reading the record back could fail (out of fds) and
  // leave a running run unwatched.
  Record watched;
  watched.run = run;
  watched.state = RunState::Running;
  watched.keep = req.keep;
  watched.owner = req.owner;
  queue_.submit(run, [this, watched, req = std::move(req), done = std::move(done)](std::function<void()> release) mutable {
    contain_locked(std::move(req), [this, watched, done = std::move(done), release](auto reply, auto err) {
      // From now on the run ends with its owner (unless --keep).
      if (reply) {
        Record w = watched;
        w.attempt = reply->attempt;
        watch_owner(w);
      }
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
  if (unrecorded_.count(req.run))
    return done(std::nullopt, BusError{error::RunFinished, "run " + quote_value(req.run) +
                                                               " was reaped; its record is written as soon as the disk "
                                                               "allows; use another run id"});
  if (prior && is_final(prior->state))
    return done(std::nullopt, BusError{error::RunFinished, "run " + quote_value(req.run) + " was reaped (state " +
                                                               to_string(prior->state) +
                                                               "); use another run id, or 'nervectl forget' it first"});
  if (!prior) return ContainOp::start(deps_, std::move(req), 1, std::move(done));

  // A relaunch: the engine recreated its client. The earlier attempt's scope must be gone first.
  Record old = *prior;
  deps_.owners.unwatch(old.run);
  spdlog::info("run {}: attempt {} ({}) is {}; reaping it before attempt {}", old.run, old.attempt, old.unit,
               to_string(old.state), old.attempt + 1);
  // The earlier attempt gets the new launch's grace: the engine asking again decides how long it waits.
  std::uint64_t grace = req.grace_usec;
  ReapOp::start(deps_, old, grace, [this, old, req = std::move(req), done = std::move(done)](Receipt r) mutable {
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

void Lifecycle::watch_owner(const Record& record) {
  if (record.keep || record.state != RunState::Running) return;
  if (record.owner.kind == "none") {
    spdlog::warn("run {}: its owner is unknown (the launcher's parent had gone); it runs until reaped", record.run);
    return;
  }
  std::string run = record.run;
  deps_.owners.watch(run, record.owner, [this, run, attempt = record.attempt, owner = record.owner] {
    spdlog::info("run {}: {} is gone; reaping the run", run, describe(owner));
    reap_attempt(run, attempt, [this, run](std::optional<Receipt>, std::optional<BusError> err) {
      if (!err) return;
      spdlog::error("run {}: reap after owner exit failed: {}", run, err->message);
      if (err->name != error::NoSuchRun) retry_unless_pending(run);  // e.g. out of fds: the run must still end
    });
  });
}

// ---- reap -----------------------------------------------------------------------------------------

void Lifecycle::cancel(const std::string& run, int signal, std::uint64_t grace_usec, ReapDone done) {
  queue_.submit(run, [this, run, signal, grace_usec, done = std::move(done)](std::function<void()> release) mutable {
    reap_locked(run, signal, grace_usec, [done = std::move(done), release](auto receipt, auto err) {
      release();
      done(std::move(receipt), std::move(err));
    });
  });
}

void Lifecycle::reap_locked(const std::string& run, int signal, std::uint64_t grace_usec, ReapDone done) {
  if (auto it = unrecorded_.find(run); it != unrecorded_.end() && it->second) return record_receipt(run, std::move(done));
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
  final_reap(std::move(*record), signal, grace_usec, std::move(done));
}

void Lifecycle::final_reap(Record record, int signal, std::uint64_t grace_usec, ReapDone done) {
  if (record.state == RunState::Reaping) {
    // A crash may have come between the final receipt and the "reaped" record: that reap is done,
    // and its receipt stands. Only close the record.
    std::optional<Receipt> earlier;
    try {
      earlier = deps_.store.load_receipt(record.run);
    } catch (const std::exception& e) {
      spdlog::warn("run {}: receipt unreadable ({}); reaping again", record.run, e.what());
    }
    if (earlier && is_final(earlier->outcome) && earlier->attempt == record.attempt && earlier->unit == record.unit) {
      record.state = RunState::Reaped;
      record.updated_at = now_rfc3339();
      try {
        deps_.store.save(record);
      } catch (const FsError& e) {
        spdlog::error("run {}: cannot close the record: {}", record.run, e.what());
      }
      return done(earlier, std::nullopt);
    }
  } else {
    // The fence: from here on, the run is final, whatever happens to this reap.
    record.state = RunState::Reaping;
    record.updated_at = now_rfc3339();
    try {
      deps_.store.save(record);
    } catch (const FsError& e) {
      // The disk refuses the fence (full, failing): kill first. The run is final in memory (no launch
      // of it is accepted) and is recorded as soon as the disk allows (docs/records.md, item 7).
      spdlog::error("run {}: cannot write the fence: {}; reaping anyway, the record follows when the disk allows",
                    record.run, e.what());
      unrecorded_[record.run];
    }
  }
  deps_.owners.unwatch(record.run);
  ReapOp::start(deps_, record, grace_usec, signal, [this, rec = record, done = std::move(done)](Receipt receipt) mutable {
    spdlog::info("run {} attempt {} unit {} invocation {}: reap {}{}", rec.run, rec.attempt, rec.unit,
                 rec.invocation_id.empty() ? "-" : rec.invocation_id, to_string(receipt.outcome),
                 receipt.error.empty() ? "" : ": " + receipt.error);
    fault_point("before-receipt");
    try {
      deps_.store.save_receipt(receipt);
      if (is_final(receipt.outcome)) {
        rec.state = RunState::Reaped;
        rec.updated_at = now_rfc3339();
        deps_.store.save(rec);
      }
    } catch (const FsError& e) {
      spdlog::error("run {}: cannot write the receipt: {}", rec.run, e.what());
      if (is_final(receipt.outcome)) unrecorded_[rec.run] = receipt;  // written by the retry
      schedule_retry(rec.run);
      return done(std::nullopt, BusError{error::RecordFailed, "run " + quote_value(rec.run) + " was reaped (" +
                                                                  to_string(receipt.outcome) +
                                                                  ") but its receipt cannot be written: " + e.what()});
    }
    unrecorded_.erase(rec.run);
    if (is_final(receipt.outcome)) {
      if (auto it = retries_.find(rec.run); it != retries_.end()) {
        deps_.timers.cancel_timer(it->second.first);
        retries_.erase(it);
      }
    } else {
      schedule_retry(rec.run);
    }
    done(std::move(receipt), std::nullopt);
  });
}

void Lifecycle::record_receipt(const std::string& run, ReapDone done) {
  // The run was reaped but the disk did not take its receipt: write it now, and close the record.
  Receipt receipt = *unrecorded_[run];
  try {
    auto record = deps_.store.load(run);
    deps_.store.save_receipt(receipt);
    if (record) {
      record->state = RunState::Reaped;
      record->updated_at = now_rfc3339();
      deps_.store.save(*record);
    }
  } catch (const std::exception& e) {
    schedule_retry(run);
    return done(std::nullopt, BusError{error::RecordFailed, "run " + quote_value(run) + " was reaped (" +
                                                                to_string(receipt.outcome) +
                                                                ") but its receipt cannot be written yet: " + e.what()});
  }
  spdlog::info("run {}: receipt written after the disk allowed it", run);
  unrecorded_.erase(run);
  if (auto it = retries_.find(run); it != retries_.end()) {
    deps_.timers.cancel_timer(it->second.first);
    retries_.erase(it);
  }
  done(receipt, std::nullopt);
}

void Lifecycle::retry_unless_pending(const std::string& run) {
  if (auto it = retries_.find(run); it != retries_.end() && it->second.first) return;
  schedule_retry(run);
}

void Lifecycle::schedule_retry(const std::string& run) {
  auto& slot = retries_[run];
  Clock::duration delay = slot.second == Clock::duration::zero() ? Clock::duration(kRetryFirst)
                                                                 : std::min<Clock::duration>(slot.second * 2, kRetryMax);
  if (slot.first) deps_.timers.cancel_timer(slot.first);
  slot.second = delay;
  spdlog::info("run {}: reap pending; next try in {} ms", run,
               std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
  slot.first = deps_.timers.add_timer(delay, [this, run] {
    if (auto it = retries_.find(run); it != retries_.end()) it->second.first = 0;
    reap(run, 0, [this, run](std::optional<Receipt>, std::optional<BusError> err) {
      if (!err) return;
      spdlog::error("run {}: retried reap failed: {}", run, err->message);
      if (err->name != error::NoSuchRun) retry_unless_pending(run);
    });
  });
}

// ---- reconcile ------------------------------------------------------------------------------------

void Lifecycle::reconcile(ReconcileDone done) {
  std::vector<std::string> skipped;
  std::vector<std::string> runs;
  try {
    runs = deps_.store.runs(&skipped);
  } catch (const FsError& e) {
    spdlog::error("reconcile: {}", e.what());
  }
  struct Pass {
    std::vector<ReconcileLine> lines;
    std::size_t pending = 0;
    ReconcileDone done;
  };
  auto pass = std::make_shared<Pass>();
  pass->done = std::move(done);
  for (const auto& why : skipped) {
    spdlog::warn("reconcile: skipped {}", why);
    pass->lines.push_back({"", "skipped", why});
  }
  pass->pending = runs.size() + 1;
  auto finish_one = [pass] {
    if (--pass->pending == 0) pass->done(std::move(pass->lines));
  };
  for (const auto& run : runs) {
    queue_.submit(run, [this, run, pass, finish_one](std::function<void()> release) {
      reconcile_locked(run, [pass, finish_one, release](ReconcileLine line) {
        if (line.action != "final")
          spdlog::info("reconcile: run {}: {}{}", line.run, line.action, line.detail.empty() ? "" : ": " + line.detail);
        pass->lines.push_back(std::move(line));
        release();
        finish_one();
      });
    });
  }
  finish_one();
}

void Lifecycle::reconcile_locked(const std::string& run, std::function<void(ReconcileLine)> done) {
  std::optional<Record> record;
  try {
    record = deps_.store.load(run);
  } catch (const RecordCorrupt& e) {
    return done({run, "quarantined", std::string(e.what()) + "; moved to " + quarantine(run)});
  } catch (const std::exception& e) {
    // Unreadable for now (out of fds, ...): the run must not stay unwatched; look at it again later.
    retry_reconcile(run);
    return done({run, "skipped", std::string(e.what()) + "; trying again later"});
  }
  if (!record) return done({run, "skipped", "no lifecycle.json"});
  Record rec = std::move(*record);
  auto reaped = [done, run](std::string why) {
    return [done, run, why](std::optional<Receipt> r, std::optional<BusError> err) {
      if (err) return done({run, "reaped", why + "; " + err->message});
      done({run, "reaped", why + ": " + to_string(r->outcome) + (r->error.empty() ? "" : " (" + r->error + ")")});
    };
  };
  switch (rec.state) {
    case RunState::Reaped:
      return done({run, "final", ""});
    case RunState::Reaping:
      return final_reap(std::move(rec), 0, 0, reaped("its reap had not finished"));
    default:
      break;
  }
  if (rec.boot_id != deps_.boot_id) return final_reap(std::move(rec), 0, 0, reaped("recorded in another boot"));
  // A run without a known owner is treated like --keep: only an explicit reap ends it.
  bool unowned = rec.keep || rec.owner.kind == "none";
  bool owner_alive = deps_.owners.alive(rec.owner);
  if (!owner_alive && !unowned)
    return final_reap(std::move(rec), 0, 0, reaped(describe(rec.owner) + " is gone"));
  if (rec.state == RunState::Running) {
    if (unowned) return done({run, "kept", rec.keep ? "launched with --keep; reap it explicitly" : "it has no known owner; reap it explicitly"});
    watch_owner(rec);
    return done({run, "adopted", describe(rec.owner) + " is alive; watching it"});
  }
  // launching or failed, owner alive: that attempt never ran its command. Clean its scope, if any, but
  // do not fence: the engine may launch the run again.
  clean_attempt(rec, [done, run, attempt = rec.attempt](Receipt r) {
    done({run, "cleaned", "attempt " + std::to_string(attempt) + " never started its command: " +
                              to_string(r.outcome) + (r.error.empty() ? "" : " (" + r.error + ")")});
  });
}

void Lifecycle::retry_reconcile(const std::string& run) {
  auto& delay = reconcile_retries_[run];
  delay = delay == Clock::duration::zero() ? Clock::duration(kRetryFirst)
                                           : std::min<Clock::duration>(delay * 2, kRetryMax);
  deps_.timers.add_timer(delay, [this, run] {
    queue_.submit(run, [this, run](std::function<void()> release) {
      reconcile_locked(run, [this, release](ReconcileLine line) {
        spdlog::info("reconcile (again): run {}: {}{}", line.run, line.action, line.detail.empty() ? "" : ": " + line.detail);
        if (line.action != "skipped" || line.detail.find("trying again") == std::string::npos)
          reconcile_retries_.erase(line.run);
        release();
      });
    });
  });
}

void Lifecycle::clean_attempt(Record rec, std::function<void(Receipt)> done) {
  deps_.owners.unwatch(rec.run);
  ReapOp::start(deps_, rec, 0, [this, rec, done = std::move(done)](Receipt r) mutable {
    if (r.outcome != Outcome::PendingRetry && rec.state != RunState::Failed) {
      rec.state = RunState::Failed;
      rec.updated_at = now_rfc3339();
      try {
        deps_.store.save(rec);
      } catch (const FsError& e) {
        spdlog::error("run {}: cannot mark attempt {} failed: {}", rec.run, rec.attempt, e.what());
      }
    }
    done(std::move(r));
  });
}

void Lifecycle::reap_attempt(const std::string& run, unsigned attempt, ReapDone done) {
  queue_.submit(run, [this, run, attempt, done = std::move(done)](std::function<void()> release) mutable {
    auto finish = [done = std::move(done), release](std::optional<Receipt> r, std::optional<BusError> err) {
      release();
      done(std::move(r), std::move(err));
    };
    // Queued behind a relaunch, this reap is moot: it must never reach the later attempt (item 2).
    std::optional<BusError> err;
    auto rec = load(run, &err, false);
    if (rec && rec->attempt != attempt) {
      spdlog::info("run {}: the reap of attempt {} is moot, the run is at attempt {}", run, attempt, rec->attempt);
      return finish(std::nullopt, std::nullopt);
    }
    reap_locked(run, 0, 0, std::move(finish));
  });
}

void Lifecycle::abandon(const std::string& run, unsigned attempt, std::function<void()> done) {
  queue_.submit(run, [this, run, attempt, done = std::move(done)](std::function<void()> release) mutable {
    std::optional<BusError> err;
    auto rec = load(run, &err);
    if (!rec || (rec->state != RunState::Launching && rec->state != RunState::Running) ||
        (attempt && rec->attempt != attempt)) {
      release();
      return done();
    }
    clean_attempt(*rec, [run, release, done = std::move(done)](Receipt r) {
      spdlog::info("run {}: abandoned attempt {}: {}", run, r.attempt, to_string(r.outcome));
      release();
      done();
    });
  });
}

void Lifecycle::forget(const std::string& run) {
  require_valid_run_id(run);
  if (queue_.busy(run)) error::raise(error::RunBusy, "run " + quote_value(run) + " has a call in progress; try again");
  std::optional<BusError> err;
  auto record = load(run, &err);
  if (err) error::raise(err->name.c_str(), err->message);
  if (!record) error::raise(error::NoSuchRun, "no run " + quote_value(run) + " (no record under " + deps_.store.run_path(run) + ")");
  if (record->state != RunState::Reaped)
    error::raise(error::RunNotFinished, "run " + quote_value(run) + " is " + to_string(record->state) +
                                            "; reap it before forgetting it");
  try {
    deps_.store.remove(run);
  } catch (const FsError& e) {
    error::raise(error::RecordFailed, std::string("cannot remove run ") + quote_value(run) + ": " + e.what());
  }
  spdlog::info("run {}: forgotten", run);
}

// ---- queries --------------------------------------------------------------------------------------

std::string Lifecycle::status_json(const std::string& run) {
  require_valid_run_id(run);
  std::optional<BusError> err;
  auto record = load(run, &err, false);
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
