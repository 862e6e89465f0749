// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/reconcile.h"

#include "system/journal.h"
#include "run/run_log.h"

#include <algorithm>
#include <memory>

namespace nerve {

namespace {

void log_line(const ReconcileLine& line) {
  RunFields fields;
  fields.run = line.run;
  fields.message_id = message_id::Reconcile;
  ScopedRunFields scope(fields);
  if (line.action != ReconcileAction::Final)
    spdlog::info("reconcile: run {}: {}{}", line.run, to_string(line.action),
                 line.detail.empty() ? "" : ": " + line.detail);
}

}  // namespace

void Reconciler::pass(std::function<void(std::vector<ReconcileLine>)> done) {
  std::vector<std::string> skipped;
  auto runs = deps_.store.reload(&skipped);  // every record read again, into memory (run_store.h)
  if (!runs) spdlog::error("reconcile: {}", runs.error().message);
  struct Pass {
    std::vector<ReconcileLine> lines;
    std::size_t pending = 0;
    std::function<void(std::vector<ReconcileLine>)> done;
  };
  auto pass = std::make_shared<Pass>();
  pass->done = std::move(done);
  for (const auto& why : skipped) {
    spdlog::warn("reconcile: skipped {}", why);
    pass->lines.push_back({"", ReconcileAction::Skipped, why});
  }
  std::vector<std::string> ids = runs ? *runs : std::vector<std::string>{};
  pass->pending = ids.size() + 1;
  auto finish_one = [pass] {
    if (--pass->pending == 0) pass->done(std::move(pass->lines));
  };
  for (const auto& run : ids) {
    // Every run's slot is taken now (a launch of it waits for its line), but the work is paced:
    // one run per turn of the loop, which serves calls in between.
    queue_.serial<ReconcileLine>(
        run, [this, run](std::function<void(ReconcileLine)> finish) { paced([this, run, finish] { one(run, finish); }); },
        [pass, finish_one](ReconcileLine line) {
          log_line(line);
          pass->lines.push_back(std::move(line));
          finish_one();
        });
  }
  finish_one();
}

void Reconciler::paced(std::function<void()> work) {
  paced_.push_back(std::move(work));
  if (paced_.size() == 1) deps_.timers.add_timer(Clock::duration::zero(), [this] { next_paced(); });
}

void Reconciler::next_paced() {
  for (std::size_t i = 0; i < kPerTurn && !paced_.empty(); ++i) {
    auto work = std::move(paced_.front());
    paced_.pop_front();
    work();
  }
  if (!paced_.empty()) deps_.timers.add_timer(Clock::duration::zero(), [this] { next_paced(); });
}

void Reconciler::again_later(const std::string& run, Clock::duration delay) {
  deps_.timers.add_timer(delay, [this, run, delay] {
    auto next = std::min<Clock::duration>(delay * 2, kRetryMax);
    queue_.serial<ReconcileLine>(
        run, [this, run, next](std::function<void(ReconcileLine)> finish) { one(run, finish, next); }, log_line);
  });
}

void Reconciler::one(const std::string& run, std::function<void(ReconcileLine)> done, Clock::duration delay) {
  auto record = deps_.store.load(run);
  if (!record && record.error().name == store_error::Corrupt)
    return quarantine_.move_aside(run, [run, done, why = record.error().message](std::string moved) {
      done({run, ReconcileAction::Quarantined, why + "; moved to " + moved});
    });
  if (!record) {
    if (delay == Clock::duration::zero()) delay = kRetryFirst;
    again_later(run, delay);
    return done({run, ReconcileAction::Skipped,
                 record.error().message + "; tried again in " +
                     std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(delay).count()) + " ms"});
  }
  if (!*record) return done({run, ReconcileAction::Skipped, "no lifecycle.json"});
  Record rec = std::move(**record);
  switch (rec.state) {
    case RunState::Reaped: return done({run, ReconcileAction::Final, ""});
    case RunState::Reaping: return reap(std::move(rec), "its reap had not finished", done);
    default: break;
  }
  if (rec.boot_id != deps_.boot_id) return reap(std::move(rec), "recorded in another boot", done);
  if (OwnerReaps::owned(rec) && !deps_.owners.alive(rec.owner)) {
    std::string why = describe(rec.owner) + " is gone";
    return reap(std::move(rec), why, done);
  }
  unfinished(std::move(rec), done);
}

void Reconciler::unfinished(Record rec, std::function<void(ReconcileLine)> done) {
  const std::string run = rec.run;
  if (rec.state == RunState::Running && rec.released) {
    if (has_leaf(rec)) {
      auto populated = deps_.cgroups.populated(rec.leaf);
      if (populated && !*populated)
        return reap(std::move(rec), "its processes ended while nerved was not watching", done, Cause::Exited);
    }
    deadlines_.arm(rec);  // a deadline passed while nerved was down fires at once
    exits_.watch(rec);
    if (rec.reap_on_exit && launched_) launched_(rec);  // its reap on exit comes after this line
    // A run without a known owner is treated like --keep: only an explicit reap ends it.
    if (!OwnerReaps::owned(rec))
      return done({run, ReconcileAction::Kept,
                   rec.keep ? "launched with --keep; reap it explicitly" : "it has no known owner; reap it explicitly"});
    owner_reaps_.watch(rec);
    return done({run, ReconcileAction::Adopted, describe(rec.owner) + " is alive; watching it"});
  }
  // launching, failed, or running but never released (nerved died before it told the caller to exec),
  // owner alive: that attempt never ran its command. Clean its scope, if any, but do not fence: the
  // engine may launch the run again.
  launches_.clean_attempt(rec, [done, run, attempt = rec.attempt](Receipt r) {
    done({run, ReconcileAction::Cleaned, "attempt " + std::to_string(attempt) + " never started its command: " +
                                             to_string(r.outcome) + (r.error.empty() ? "" : " (" + r.error + ")")});
  });
}

void Reconciler::reap(Record record, std::string why, std::function<void(ReconcileLine)> done, Cause cause) {
  std::string run = record.run;
  reaps_.reap_record(std::move(record), 0, 0, cause, [done, run, why](Result<Receipt> r) {
    if (!r) return done({run, ReconcileAction::Reaped, why + "; " + r.error().message});
    done({run, ReconcileAction::Reaped,
          why + ": " + to_string(r->outcome) + (r->error.empty() ? "" : " (" + r->error + ")")});
  });
}

}  // namespace nerve
