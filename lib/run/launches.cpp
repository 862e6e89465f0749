// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/launches.h"

#include "base/errors.h"
#include "run/run_log.h"

namespace nerve {

Error run_finished(const Record& record) {
  return Error{error::RunFinished, "run " + quote_value(record.run) + " was reaped (state " + to_string(record.state) +
                                       "); use another run id, or 'nervectl forget' it first"};
}

void Launches::contain(ContainRequest req, Done<ContainReply> done) {
  if (!deps_.unavailable.empty()) return done(Error{error::ContainmentUnavailable, deps_.unavailable});
  check_manager([this, req = std::move(req), done](Result<void> answered) mutable {
    if (!answered) return done(answered.error());
    decide(std::move(req), done);
  });
}

void Launches::check_manager(Done<void> done) {
  if (manager_answered_) return done({});
  deps_.systemd.version([this, done](Result<std::string> version) {
    if (!version)
      return done(Error{error::ContainmentUnavailable,
                        "the systemd user manager does not answer on the session bus (" + version.error().message +
                            "); the command was not started. Log in to a user session, or enable lingering "
                            "(loginctl enable-linger), or run under tests/harness/with-user-manager.sh"});
    manager_answered_ = true;
    done({});
  });
}

void Launches::decide(ContainRequest req, Done<ContainReply> done) {
  std::string run = req.run;
  quarantine_.load(run, [this, req = std::move(req), done](Result<std::optional<Record>> prior) mutable {
    if (!prior) return done(prior.error());
    if (!*prior) return attempt(std::move(req), 1, done);
    if (is_final((*prior)->state)) return done(run_finished(**prior));
    relaunch(std::move(**prior), std::move(req), done);
  });
}

void Launches::relaunch(Record old, ContainRequest req, Done<ContainReply> done) {
  // The engine recreated its client. The earlier attempt's scope must be gone first; it gets the new
  // launch's grace: the engine asking again decides how long it waits.
  owner_reaps_.unwatch(old.run);
  exits_.unwatch(old.run);
  log_run(spdlog::level::info, old,
          "attempt is " + to_string(old.state) + "; reaping it before attempt " + std::to_string(old.attempt + 1));
  std::uint64_t grace = req.grace_usec;
  ReapOp::start(deps_, old, grace, Cause::Relaunched, [this, old, req = std::move(req), done](Receipt r) mutable {
    log_run(spdlog::level::info, old,
            "reaped before relaunch (cause " + to_string(r.cause.value_or(Cause::Relaunched)) +
                "): " + to_string(r.outcome) + (r.error.empty() ? "" : " (" + r.error + ")"));
    // The ended attempt keeps its receipt (what it used, read after its last process ended).
    if (r.outcome != Outcome::PendingRetry && r.outcome != Outcome::Refused)
      if (auto saved = deps_.store.save_superseded_receipt(r); !saved)
        log_run(spdlog::level::err, old, "cannot write the receipt of the relaunched attempt: " + saved.error().message);
    if (r.outcome == Outcome::PendingRetry)
      return done(Error{error::ScopeFailed, "attempt " + std::to_string(old.attempt) + " of run " +
                                                quote_value(old.run) + " (" + old.unit + ") is not confirmed gone: " +
                                                r.error + "; the command was not started, try again"});
    attempt(std::move(req), old.attempt + 1, done);
  });
}

void Launches::attempt(ContainRequest req, unsigned number, Done<ContainReply> done) {
  std::string run = req.run;
  ContainOp::start(deps_, std::move(req), number, [this, run, done](Result<ContainReply> reply) {
    if (!reply) {
      // Perhaps the manager went away: ask it again before the next launch.
      if (reply.error().name == error::ScopeFailed) manager_answered_ = false;
      return done(reply);
    }
    // From now on the run ends with its owner (unless --keep).
    if (auto rec = records_.load(run); rec && *rec) {
      owner_reaps_.watch(**rec);
      deadlines_.arm(**rec);
      exits_.watch(**rec);
    } else
      spdlog::error("run {}: cannot read the record back to watch its owner: {}", run,
                    rec ? "it is gone" : rec.error().message);
    done(reply);
  });
}

void Launches::clean_attempt(Record rec, std::function<void(Receipt)> done) {
  owner_reaps_.unwatch(rec.run);
  exits_.unwatch(rec.run);
  ReapOp::start(deps_, rec, 0, Cause::Reaped, [this, rec, done](Receipt r) mutable {
    if (r.outcome != Outcome::PendingRetry && rec.state != RunState::Failed) {
      if (auto marked = records_.transition(rec, RunState::Failed); !marked)
        log_run(spdlog::level::err, rec, "cannot mark the attempt failed: " + marked.error().message);
    }
    done(std::move(r));
  });
}

void Launches::abandon(const std::string& run, Done<void> done) {
  auto rec = records_.load(run);
  if (!rec || !*rec || ((*rec)->state != RunState::Launching && (*rec)->state != RunState::Running)) return done({});
  clean_attempt(**rec, [rec = **rec, done](Receipt r) {
    log_run(spdlog::level::info, rec, "abandoned: " + to_string(r.outcome));
    done({});
  });
}

}  // namespace nerve
