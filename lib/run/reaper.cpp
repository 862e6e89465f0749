#include "base/timestamps.h"
#include "run/reaper.h"

#include "run/fault.h"
#include "run/run_log.h"

#include <csignal>

namespace nerve {

namespace {
// Rule 1 needs no query at all: a record of another boot is never looked up, never signalled.
bool looked_up(const Deps& deps, const Record& record) { return record.boot_id == deps.boot_id && !record.unit.empty(); }
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
  std::optional<std::uint64_t> live_id;
  if (!cgroup_.empty()) live_id = deps_.cgroups.id(cgroup_);
  ReapDecision d = decide_reap(record_, deps_.boot_id, lookup, live_id);
  switch (d.action) {
    case ReapAction::NoScope: return finish(Outcome::NoScope, d.reason);
    case ReapAction::Retry: return finish(Outcome::PendingRetry, d.reason);
    case ReapAction::Refuse: return finish(Outcome::Refused, d.reason);
    case ReapAction::KillCgroup: {
      signalled_ = Signalled::ByCgroupKill;  // the unit is unknown to systemd: nothing to stop
      watch_ = deps_.cgroups.watch(cgroup_, guarded(&ReapOp::check_empty));
      snapshot(false);
      advance(Phase::Killing);
      deps_.cgroups.kill_if(cgroup_, record_.cgroup_id);
      timers_.push_back(deps_.timers.add_timer(kKillWait, guarded(&ReapOp::on_grace_over)));
      return check_empty();
    }
    case ReapAction::Stop: return stop_scope();
  }
}

void ReapOp::stop_scope() {
  // Watch before anything can change, so no event falls between the watch and the first read.
  if (!cgroup_.empty()) {
    watch_ = deps_.cgroups.watch(cgroup_, guarded(&ReapOp::check_empty));
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
      if (self->populated()) self->kill_cgroup();
    });
  }));
  timers_.push_back(deps_.timers.add_timer(grace + kKillWait, guarded(&ReapOp::on_grace_over)));
  if (!cgroup_.empty()) check_empty();
}

void ReapOp::on_grace() {
  if (!populated()) return;
  advance(Phase::Killing);
  log_run(spdlog::level::info, record_, "processes left after the grace, sending SIGKILL");
  kill_unit(SIGKILL);
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

void ReapOp::kill_cgroup() {
  advance(Phase::Killing);
  if (deps_.cgroups.kill_if(cgroup_, record_.cgroup_id))
    log_run(spdlog::level::info, record_, "wrote cgroup.kill in " + cgroup_);
  else
    log_run(spdlog::level::warn, record_, "cgroup.kill not written (cgroup " + cgroup_ + " gone, replaced or unsupported)");
}

void ReapOp::check_empty() {
  if (finished() || cgroup_.empty()) return;
  // A cgroup that cannot be read is not known to be empty: wait on (the timers end the wait).
  auto populated = deps_.cgroups.populated(cgroup_);
  snapshot(populated && !*populated);
  if (!populated || *populated) return;
  if (signalled_ == Signalled::ByKillUnit) {
    // Signalled with KillUnit: the cgroup is empty now. Stop the unit too, so that a scope systemd
    // never saw become empty (e.g. its process died before it was moved in) cannot stay active.
    // finish() comes next, so this is sent once.
    deps_.systemd.stop_unit(record_.unit, [](Result<void>) {});
  }
  finish(Outcome::Complete, "");
}

void ReapOp::snapshot(bool after_empty) {
  if (cgroup_.empty()) return;
  // systemd removes the folder soon after it empties: a failed read keeps the last snapshot.
  if (auto u = deps_.cgroups.usage(cgroup_, record_.cgroup_id)) {
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
