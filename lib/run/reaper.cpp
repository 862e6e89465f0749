// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "run/reaper.h"

#include "run/fault.h"
#include "run/run_log.h"

#include <algorithm>
#include <csignal>

namespace nerve {

namespace {
// Rules 1 and 2 need no query at all: a record of another boot, or of the other backend, is never
// looked up, never signalled.
bool looked_up(const Deps& deps, const Record& record) {
  return record.boot_id == deps.boot_id && record.backend == deps.backend && !record.unit.empty();
}
}  // namespace

std::shared_ptr<LookupAhead> LookupAhead::ask(Deps& deps, const Record& record) {
  if (!looked_up(deps, record)) return nullptr;
  auto ahead = std::make_shared<LookupAhead>();
  deps.systemd.lookup(record.unit, [ahead](Result<UnitState> answer) {
    if (!ahead->waiting_) return void(ahead->answer_ = std::move(answer));
    auto waiting = std::move(ahead->waiting_);
    waiting(std::move(answer));
  });
  return ahead;
}

void LookupAhead::take(Done<UnitState> done) {
  if (!answer_) return void(waiting_ = std::move(done));
  done(std::move(*answer_));
}

void ReapOp::start(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Cause cause, Done done,
                   std::shared_ptr<LookupAhead> ahead) {
  auto op = std::make_shared<ReapOp>(deps, record, grace_usec, signal, cause, std::move(done));
  op->begin(std::move(ahead));
}

ReapOp::ReapOp(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Cause cause, Done done)
    : deps_(deps),
      record_(record),
      grace_usec_(grace_usec ? grace_usec : record.grace_usec),
      signal_(signal == SIGTERM ? 0 : signal),
      cause_(cause),
      done_(std::move(done)),
      started_(deps.timers.now()) {}

std::function<void()> ReapOp::guarded(void (ReapOp::*fn)()) {
  return [self = shared_from_this(), fn] {
    if (!self->finished()) self->shielded("the reap", [&] { (self.get()->*fn)(); });
  };
}

void ReapOp::shielded(const char* step, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    log_run(spdlog::level::err, record_, std::string(step) + " failed: " + e.what());
    finish(Outcome::PendingRetry, std::string(step) + " failed: " + e.what());
  }
}

void ReapOp::begin(std::shared_ptr<LookupAhead> ahead) {
  if (!looked_up(deps_, record_)) return decided(Error{"nerve.Reap.NotAsked", "systemd was not asked"});
  auto decided = [self = shared_from_this()](Result<UnitState> lookup) { self->decided(lookup); };
  if (ahead) return ahead->take(decided);
  shielded("the lookup of the scope", [&] { deps_.systemd.lookup(record_.unit, decided); });
}

void ReapOp::decided(const Result<UnitState>& lookup) {
  shielded("the reap decision", [&] { decide(lookup); });
}

void ReapOp::decide(const Result<UnitState>& lookup) {
  cgroup_ = record_.cgroup.empty() && lookup ? lookup->control_group : record_.cgroup;
  if (!has_leaf(record_) && record_.state == RunState::Launching && !cgroup_.empty()) {
    // nerved died between the leaves and the running record: the scope has them all the same.
    if (auto id = deps_.cgroups.id(leaf_of(cgroup_))) record_.leaf = leaf_of(cgroup_), record_.leaf_id = *id;
  }
  if (has_leaf(record_)) leaf_ = record_.leaf;
  std::optional<std::uint64_t> live_id;
  if (!cgroup_.empty()) live_id = deps_.cgroups.id(cgroup_);
  ReapDecision d = decide_reap(record_, deps_.boot_id, deps_.backend, lookup, live_id);
  switch (d.action) {
    case ReapAction::NoScope: return finish(Outcome::NoScope, d.reason);
    case ReapAction::Retry: return finish(Outcome::PendingRetry, d.reason);
    case ReapAction::Refuse: return finish(Outcome::Refused, d.reason);
    case ReapAction::KillCgroup: {
      signalled_ = Signalled::ByCgroupKill;  // the unit is unknown to systemd: nothing to stop
      watch_cgroups();
      snapshot(false);
      kill_run();
      timers_.push_back(deps_.timers.add_timer(kKillWait, guarded(&ReapOp::on_grace_over)));
      return check_empty();
    }
    case ReapAction::Stop: return stop_scope();
  }
}

void ReapOp::stop_scope() {
  // Watch before anything can change, so no event falls between the watch and the first read.
  if (!cgroup_.empty()) {
    watch_cgroups();
    snapshot(false);
    // A frozen process handles no TERM until thawed: thaw first (writing 0 to a thawed cgroup is a no-op).
    if (deps_.cgroups.thaw_if(cgroup_, record_.cgroup_id)) log_run(spdlog::level::debug, record_, "thawed " + cgroup_);
  }
  send_stop();
  if (finished()) return;
  fault_point("after-stop");
  auto grace = std::chrono::microseconds(grace_usec_);
  auto self = shared_from_this();
  timers_.push_back(deps_.timers.add_timer(grace, guarded(&ReapOp::on_grace)));
  timers_.push_back(deps_.timers.add_timer(grace + kCgroupKillAfter, [self] {
    if (self->finished() || self->cgroup_.empty()) return;
    self->shielded("cgroup.kill", [&] {
      if (self->run_populated()) self->kill_run();
    });
  }));
  timers_.push_back(deps_.timers.add_timer(grace + kKillWait, guarded(&ReapOp::on_grace_over)));
  if (!cgroup_.empty()) check_empty();
}

void ReapOp::on_grace() {
  if (!run_populated()) return;
  advance(Phase::Killing);
  log_run(spdlog::level::info, record_, "processes left after the grace, sending SIGKILL");
  // With a leaf, only the run's processes: the holder keeps the scope until run/ is read.
  if (leaf_.empty() || !deps_.cgroups.kill_if(leaf_, record_.leaf_id)) kill_unit(SIGKILL);
}

void ReapOp::watch_cgroups() {
  // Watch before anything can change, so no event falls between the watch and the first read.
  watch_ = deps_.cgroups.watch(cgroup_, guarded(&ReapOp::check_empty));
  if (!leaf_.empty()) leaf_watch_ = deps_.cgroups.watch(leaf_, guarded(&ReapOp::check_empty));
}

void ReapOp::send_stop() {
  // StopUnit makes systemd SIGKILL after the scope's TimeoutStopUSec, the launch's grace, which systemd
  // 252 cannot change on a running scope. Use it only when this reap's grace is shorter, so that
  // nerved's own timer always decides (and knows) when SIGKILL is sent. Otherwise, and for a
  // cancellation's signal, send the signal to every process with KillUnit; systemd collects the scope
  // once it is empty.
  // Without a known cgroup (a start job may still be pending: nerved died right after asking for the
  // scope), only StopUnit is sure: it replaces the start job, and its own job tells when it is over.
  bool stop_unit = cgroup_.empty() || (signal_ == 0 && grace_usec_ < record_.grace_usec);
  // The run's processes have all ended already (a run that ended by itself): nothing to signal;
  // check_empty ends the scope and then stops the unit.
  if (!leaf_.empty() && !run_populated()) return void(signalled_ = Signalled::NotNeeded);
  signalled_ = stop_unit ? Signalled::ByStopUnit : Signalled::ByKillUnit;
  if (!stop_unit) return kill_unit(signal_ ? signal_ : SIGTERM);
  deps_.systemd.stop_unit(record_.unit, [self = shared_from_this()](Result<void> job) {
    if (!self->finished()) self->on_stop_job(job);
  });
}

void ReapOp::on_stop_job(const Result<void>& job) {
  bool gone = job || is_no_such_unit(job.error());
  if (!gone) log_run(spdlog::level::warn, record_, "stop job failed: " + job.error().message);
  if (cgroup_.empty()) {
    // No cgroup to watch: the job is all we can wait for.
    if (gone) return finish(Outcome::Complete, "");
    return finish(Outcome::PendingRetry, "stop job of " + record_.unit + " failed: " + job.error().message);
  }
  check_empty();
}

void ReapOp::kill_unit(int signo) {
  deps_.systemd.kill_unit(record_.unit, signo, [self = shared_from_this(), signo](Result<void> r) {
    if (!r) {
      log_run(spdlog::level::warn, self->record_, "KillUnit(" + std::to_string(signo) + ") failed: " + r.error().message);
    } else if (signo != SIGKILL && signo != SIGCONT && !self->finished()) {
      self->kill_unit(SIGCONT);  // as systemd does on stop: wake stopped processes
    }
  });
}

void ReapOp::kill_run() {
  advance(Phase::Killing);
  const std::string& target = leaf_.empty() ? cgroup_ : leaf_;
  if (deps_.cgroups.kill_if(target, leaf_.empty() ? record_.cgroup_id : record_.leaf_id))
    log_run(spdlog::level::info, record_, "wrote cgroup.kill in " + target);
  else
    log_run(spdlog::level::warn, record_, "cgroup.kill not written (cgroup " + target + " gone, replaced or unsupported)");
}

void ReapOp::end_scope() {
  // run/ is empty and read: the holder (and any process that moved itself elsewhere in the scope)
  // goes with the whole scope, so that it empties and systemd removes it.
  leaf_emptied_ = true;
  if (deps_.cgroups.kill_if(cgroup_, record_.cgroup_id)) return;
  log_run(spdlog::level::warn, record_, "cgroup.kill not written in " + cgroup_ + "; KillUnit(SIGKILL) ends the holder");
  kill_unit(SIGKILL);
}

void ReapOp::check_empty() {
  if (finished() || cgroup_.empty()) return;
  // A cgroup that cannot be read is not known to be empty: wait on (the timers end the wait).
  if (!leaf_.empty() && !leaf_emptied_) {
    // While run/ is populated its figures only grow, and the holder keeps them until read: read
    // them once, when it is empty (stop_scope's first read stays, for a scope that loses its holder).
    auto run = deps_.cgroups.populated(leaf_);
    if (!run || *run) return;
    snapshot(true);
    end_scope();
    if (holder_alone()) return scope_emptied();
  }
  auto populated = deps_.cgroups.populated(cgroup_);
  if (leaf_.empty()) snapshot(populated && !*populated);
  if (!populated || *populated) return;
  scope_emptied();
}

bool ReapOp::holder_alone() {
  if (!deps_.holders) return false;
  auto pids = deps_.cgroups.live_pids(cgroup_);
  if (!pids || pids->empty()) return false;  // unknown, or only processes past their exit: populated decides
  return std::ranges::all_of(*pids, [this](pid_t p) { return deps_.holders->spawned(p); });
}

void ReapOp::scope_emptied() {
  if (signalled_ == Signalled::ByKillUnit || signalled_ == Signalled::NotNeeded) {
    // Signalled with KillUnit (or not at all): the cgroup is empty now. Stop the unit too, so that a
    // scope systemd never saw become empty (e.g. its process died before it was moved in) cannot stay
    // active. finish() comes next, so this is sent once.
    deps_.systemd.stop_unit(record_.unit, [](Result<void>) {});
  }
  finish(Outcome::Complete, "");
}

void ReapOp::snapshot(bool after_empty) {
  if (cgroup_.empty()) return;
  // With a leaf, the run's figures are in run/, which the holder keeps until they are read. Without
  // one, systemd removes the folder soon after it empties: a failed read keeps the last snapshot.
  bool leaf = !leaf_.empty();
  if (auto u = deps_.cgroups.usage(leaf ? leaf_ : cgroup_, leaf ? record_.leaf_id : record_.cgroup_id)) {
    usage_ = std::move(u);
    usage_final_ = after_empty;
  }
}

bool ReapOp::populated() {
  // Without a known cgroup nothing can be confirmed empty: take it as populated.
  if (cgroup_.empty()) return true;
  auto populated = deps_.cgroups.populated(cgroup_);
  return !populated || *populated;
}

bool ReapOp::run_populated() {
  if (leaf_.empty() || leaf_emptied_) return !leaf_emptied_ && populated();
  auto populated = deps_.cgroups.populated(leaf_);
  return !populated || *populated;
}

void ReapOp::on_grace_over() {
  if (cgroup_.empty())
    return finish(Outcome::PendingRetry, "the stop job of " + record_.unit + " did not end, and the unit has no cgroup to check");
  if (!populated()) {
    snapshot(true);
    return finish(Outcome::Complete, "");
  }
  std::string pids;
  for (pid_t p : deps_.cgroups.pids(cgroup_)) pids += (pids.empty() ? "" : " ") + std::to_string(p);
  finish(Outcome::PendingRetry, "cgroup " + cgroup_ + " still holds processes after SIGKILL: " + pids);
}

void ReapOp::finish(Outcome outcome, std::string error) {
  if (finished()) return;
  bool killed = phase_ == Phase::Killing;
  advance(Phase::Finished);
  auto self = shared_from_this();  // the timers and the watch below may hold the last other references
  for (auto t : timers_) deps_.timers.cancel_timer(t);
  deps_.cgroups.unwatch(watch_);
  if (leaf_watch_ >= 0) deps_.cgroups.unwatch(leaf_watch_);
  Receipt r;
  r.run = record_.run;
  r.attempt = record_.attempt;
  r.unit = record_.unit;
  r.invocation_id = record_.invocation_id;
  r.outcome = outcome;
  r.error = std::move(error);
  r.killed = killed;
  r.cause = cause_;
  bool oom = usage_ && usage_->oom_kills.value_or(0) > 0;
  if (oom && (cause_ == Cause::Exited || cause_ == Cause::OwnerGone)) r.cause = Cause::Oom;
  r.usage = usage_;
  r.usage_final = usage_final_;
  r.duration_usec = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(deps_.timers.now() - started_).count());
  r.reaped_at = now_rfc3339();
  auto done = std::move(done_);
  done(std::move(r));
}

}  // namespace nerve
