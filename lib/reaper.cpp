#include "reaper.h"

#include "fault.h"

#include <spdlog/spdlog.h>

#include <csignal>

namespace nerve {

void ReapOp::start(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Done done) {
  std::shared_ptr<ReapOp> op(new ReapOp(deps, record, grace_usec, signal, std::move(done)));
  op->self_ = op;
  op->begin();
}

ReapOp::ReapOp(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Done done)
    : deps_(deps),
      record_(record),
      grace_usec_(grace_usec ? grace_usec : record.grace_usec),
      signal_(signal == SIGTERM ? 0 : signal),
      done_(std::move(done)),
      started_(deps.timers.now()) {}

void ReapOp::begin() {
  // An unexpected failure (out of fds reading the cgroup tree, ...) is this reap's pending_retry,
  // never an exception out of the event loop.
  try {
    decide_and_act();
  } catch (const std::exception& e) {
    finish(Outcome::PendingRetry, std::string("reap of ") + record_.unit + " failed: " + e.what());
  }
}

void ReapOp::decide_and_act() {
  // Rule 1 needs no query at all: a record of another boot is never looked up, never signalled.
  Lookup lookup;
  if (record_.boot_id == deps_.boot_id && !record_.unit.empty()) lookup = deps_.systemd.lookup(record_.unit);
  cgroup_ = record_.cgroup.empty() && lookup.status == LookupStatus::Found ? lookup.unit.control_group
                                                                           : record_.cgroup;
  std::optional<std::uint64_t> live_id;
  if (!cgroup_.empty()) live_id = deps_.cgroups.id(cgroup_);
  ReapDecision d = decide_reap(record_, deps_.boot_id, lookup, live_id);
  switch (d.action) {
    case ReapAction::NoScope: return finish(Outcome::NoScope, d.reason);
    case ReapAction::Retry: return finish(Outcome::PendingRetry, d.reason);
    case ReapAction::Refuse: return finish(Outcome::Refused, d.reason);
    case ReapAction::KillCgroup: {
      unit_stop_sent_ = true;  // the unit is unknown to systemd: nothing to stop
      watch_ = deps_.cgroups.watch(cgroup_, [this] { check_empty(); });
      killed_ = true;
      deps_.cgroups.kill_if(cgroup_, record_.cgroup_id);
      timers_.push_back(deps_.timers.add_timer(kKillWait, [this] { on_grace_over(); }));
      return check_empty();
    }
    case ReapAction::Stop: return stop_scope(cgroup_);
  }
}

void ReapOp::stop_scope(const std::string& cgroup) {
  // Watch before anything can change, so no event falls between the watch and the first read.
  if (!cgroup.empty()) watch_ = deps_.cgroups.watch(cgroup, [this] { check_empty(); });
  send_stop();
  if (finished_) return;
  fault_point("after-stop");
  auto grace = std::chrono::microseconds(grace_usec_);
  timers_.push_back(deps_.timers.add_timer(grace, [this] {
    if (finished_ || !populated()) return;
    killed_ = true;
    spdlog::info("run {} unit {}: processes left after the grace, sending SIGKILL", record_.run, record_.unit);
    if (auto err = deps_.systemd.kill_unit(record_.unit, SIGKILL); !err.empty())
      spdlog::warn("run {} unit {}: KillUnit failed: {}", record_.run, record_.unit, err);
  }));
  timers_.push_back(deps_.timers.add_timer(grace + kCgroupKillAfter, [this] {
    if (finished_ || cgroup_.empty() || !populated()) return;
    kill_cgroup();
  }));
  timers_.push_back(deps_.timers.add_timer(grace + kKillWait, [this] { on_grace_over(); }));
  if (!cgroup.empty()) check_empty();
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
  unit_stop_sent_ = stop_unit;
  if (!stop_unit) {
    int sig = signal_ ? signal_ : SIGTERM;
    if (auto err = deps_.systemd.kill_unit(record_.unit, sig); !err.empty())
      spdlog::warn("run {} unit {}: KillUnit({}) failed: {}", record_.run, record_.unit, sig, err);
    else if (sig != SIGKILL && sig != SIGCONT)
      deps_.systemd.kill_unit(record_.unit, SIGCONT);  // as systemd does on stop: wake stopped processes
    return;
  }
  auto self = self_;
  deps_.systemd.stop_unit(record_.unit, [this, self](JobOutcome job) {
    if (finished_) return;
    if (!job.ok && !job.no_such_unit)
      spdlog::warn("run {} unit {}: stop job ended with {}{}", record_.run, record_.unit,
                   job.result.empty() ? "an error" : job.result, job.error.empty() ? "" : ": " + job.error);
    if (cgroup_.empty()) {
      // No cgroup to watch: the job is all we can wait for.
      if (job.ok || job.no_such_unit) return finish(Outcome::Complete, "");
      return finish(Outcome::PendingRetry, "stop job of " + record_.unit + " failed: " + job.error + job.result);
    }
    check_empty();
  });
}

void ReapOp::kill_cgroup() {
  killed_ = true;
  bool written = false;
  try {
    written = deps_.cgroups.kill_if(cgroup_, record_.cgroup_id);
  } catch (const std::exception& e) {
    spdlog::warn("run {} unit {}: cannot open cgroup {}: {}", record_.run, record_.unit, cgroup_, e.what());
  }
  if (written)
    spdlog::info("run {} unit {}: wrote cgroup.kill in {}", record_.run, record_.unit, cgroup_);
  else
    spdlog::warn("run {} unit {}: cgroup.kill not written (cgroup {} gone, replaced or unsupported)",
                 record_.run, record_.unit, cgroup_);
}

void ReapOp::check_empty() {
  if (finished_ || cgroup_.empty()) return;
  if (populated()) return;
  if (!unit_stop_sent_) {
    // Signalled with KillUnit: the cgroup is empty now. Stop the unit too, so that a scope systemd
    // never saw become empty (e.g. its process died before it was moved in) cannot stay active.
    unit_stop_sent_ = true;
    deps_.systemd.stop_unit(record_.unit, [](JobOutcome) {});
  }
  finish(Outcome::Complete, "");
}

bool ReapOp::populated() {
  // Without a known cgroup nothing can be confirmed empty: take it as populated. So is a cgroup whose
  // state cannot be read now (out of fds): the grace timers run on and decide.
  if (cgroup_.empty()) return true;
  try {
    return deps_.cgroups.populated(cgroup_);
  } catch (const std::exception& e) {
    spdlog::warn("run {} unit {}: cannot read cgroup {}: {}", record_.run, record_.unit, cgroup_, e.what());
    return true;
  }
}

void ReapOp::on_grace_over() {
  if (finished_) return;
  if (cgroup_.empty())
    return finish(Outcome::PendingRetry, "the stop job of " + record_.unit + " did not end, and the unit has no cgroup to check");
  if (!populated()) return finish(Outcome::Complete, "");
  std::string pids;
  std::vector<pid_t> left;
  try {
    left = deps_.cgroups.pids(cgroup_);
  } catch (const std::exception&) {
  }
  for (pid_t p : left) pids += (pids.empty() ? "" : " ") + std::to_string(p);
  finish(Outcome::PendingRetry, "cgroup " + cgroup_ + " still holds processes after SIGKILL: " + pids);
}

void ReapOp::finish(Outcome outcome, std::string error) {
  if (finished_) return;
  finished_ = true;
  for (auto t : timers_) deps_.timers.cancel_timer(t);
  deps_.cgroups.unwatch(watch_);
  Receipt r;
  r.run = record_.run;
  r.attempt = record_.attempt;
  r.unit = record_.unit;
  r.invocation_id = record_.invocation_id;
  r.outcome = outcome;
  r.error = std::move(error);
  r.killed = killed_;
  r.duration_usec = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(deps_.timers.now() - started_).count());
  r.reaped_at = now_rfc3339();
  auto keep = std::move(self_);  // released when this function returns
  done_(std::move(r));
}

}  // namespace nerve
