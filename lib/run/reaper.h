// SPDX-License-Identifier: LGPL-2.1-or-later
// One reap of one attempt's scope: decide (reap_decision.h), then stop and confirm empty.
//
// Stop: watch the cgroup's cgroup.events first, then send the stop: StopUnit (systemd sends TERM to
// every process of the scope, KillMode=control-group) when this reap's grace is shorter than the
// scope's TimeoutStopUSec (the launch's grace, which systemd 252 cannot change on a running scope);
// otherwise KillUnit(all, SIGTERM), so that systemd never sends SIGKILL before the reap's grace is
// over; and always StopUnit when the cgroup is not known yet (a start job may be pending). A
// cancellation sends its own signal with KillUnit. Once the cgroup is empty after a KillUnit, the unit
// is stopped too, so no empty scope stays active. Then wait on events: the cgroup becoming
// empty ("populated 0", or the folder gone) ends the reap as complete. If processes remain when the
// grace is over, nerved itself sends SIGKILL (so the receipt's "killed" is exact); one second later,
// cgroup.kill through a checked folder fd; if the cgroup is still not empty kKillWait after the grace,
// the reap ends as pending_retry and names the pids left. Nothing sleeps; every wait is a watch, a
// timer or a systemd call's completion.
//
// A record with a leaf (record.h: the run's processes in <scope>/run, the scope kept by a holder in
// <scope>/hold, holder.h) is reaped in two steps. First the run's processes: the signals above go to
// the whole scope (the holder ignores them all), a run/ that is already empty gets none, and the
// SIGKILL at the end of the grace is cgroup.kill of run/ through its checked fd (KillUnit(SIGKILL)
// only if that cannot be written), so the holder outlives them; "the run's processes remain" is
// run/'s "populated". When run/ is empty its figures are read (usage_final) and then the whole scope
// is ended with cgroup.kill through its checked fd (the holder, and any process that moved itself
// elsewhere in the scope); the scope's "populated 0" or its folder gone is the proof, as without a
// leaf, or, sooner, a complete listing of the scope's live processes that holds only the holder this
// nerved spawned (holder_alone below); then the unit is stopped. StopUnit's own SIGKILL (systemd's, TimeoutStopUSec after it) only
// ever comes after nerved's: StopUnit is sent only for a grace shorter than TimeoutStopUSec.
// A launching record whose scope has run/ (nerved died between the leaves and the running record)
// is reaped as one with that leaf. A record without a leaf (made before leaves; a contain without
// its holder and leaves refuses, contain.h) is reaped as above, on its scope.
//
// A frozen cgroup (Freeze) handles no signal but SIGKILL: the reap first thaws it (cgroup.freeze 0
// through the checked folder fd). What the run used (usage.h) is read through the same kind of checked
// fd (of run/ with a leaf, else of the scope) when the reap starts and on every cgroup.events change;
// the receipt keeps the last snapshot read, and says whether it was read after the run's cgroup
// emptied (usage_final). Its cause is the one given, or oom instead of exited / owner_gone when the
// snapshot counts an OOM kill. The op lives as long as one of its callbacks is pending (each holds
// it); finish() cancels its timers and watches.
#pragma once

#include "base/defaults.h"
#include "run/deps.h"
#include "run/reap_decision.h"
#include "record/record.h"

#include <chrono>
#include <functional>
#include <memory>

namespace nerve {

// A lookup of a record's scope asked ahead of its reap (final_reap.cpp asks it before it writes the
// fence, so systemd answers while nerved writes): the reap takes its answer instead of asking again.
// Only for a record the reap would look up (this boot's, with a unit); otherwise it is not asked.
class LookupAhead {
 public:
  static std::shared_ptr<LookupAhead> ask(Deps& deps, const Record& record);
  // 'done' gets the answer: now if it came, else when it comes.
  void take(Done<UnitState> done);

 private:
  std::optional<Result<UnitState>> answer_;
  Done<UnitState> waiting_;
};

class ReapOp : public std::enable_shared_from_this<ReapOp> {
 public:
  using Done = std::function<void(Receipt)>;
  // grace_usec 0: the record's grace. signal 0 (or SIGTERM): StopUnit; another: KillUnit with it.
  static void start(Deps& deps, const Record& record, std::uint64_t grace_usec, Cause cause, Done done) {
    start(deps, record, grace_usec, 0, cause, std::move(done));
  }
  // AHEAD: the scope's lookup, already asked (LookupAhead::ask with this record), or null.
  static void start(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Cause cause, Done done,
                    std::shared_ptr<LookupAhead> ahead = nullptr);

  ReapOp(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Cause cause, Done done);

 private:
  void begin(std::shared_ptr<LookupAhead> ahead);
  void decided(const Result<UnitState>& lookup);
  void stop_scope();
  void send_stop();
  void on_stop_job(const Result<void>& job);
  void kill_unit(int signo);
  // cgroup.kill of run/ (with a leaf), else of the scope.
  void kill_run();
  // run/ is empty: cgroup.kill of the whole scope (the holder).
  void end_scope();
  // After end_scope: whether every live process left in the scope is a holder this nerved spawned
  // (and has just killed with the scope). Then none of the run's processes is left anywhere in its
  // scope, which is what the reap proves, and the reap ends without waiting for the kernel to report
  // the holder's end: cgroup.events reports a change at most once per 10 ms per file, which on a busy
  // machine made that wait the longest step of a reap. A holder from before a restart of nerved cannot
  // be told from another process by its pid: the reap then waits for the scope to empty, as without.
  bool holder_alone();
  // The scope is empty (or holds only its killed holder): the reap is complete.
  void scope_emptied();
  void watch_cgroups();
  void decide_and_act();
  void check_empty();
  void snapshot(bool after_empty);
  // Whether the scope's cgroup holds processes (taken as yes when unknown or unreadable).
  bool populated();
  // Whether the run's processes remain: run/ with a leaf (until it has emptied once), else the scope.
  bool run_populated();
  void on_grace_over();
  void finish(Outcome outcome, std::string error);
  void decide(const Result<UnitState>& lookup);
  // The grace is over: SIGKILL to what is left.
  void on_grace();
  // A callback that calls 'fn' on this op unless it has finished; it keeps the op alive.
  std::function<void()> guarded(void (ReapOp::*fn)());
  // Runs 'fn'; an exception in it (e.g. out of fds for a cgroup watch) ends the reap pending_retry,
  // naming 'step', instead of escaping into the event loop with the reap never answered.
  void shielded(const char* step, const std::function<void()>& fn);

  Deps& deps_;
  Record record_;
  std::uint64_t grace_usec_;
  int signal_;
  Cause cause_;
  Done done_;
  std::optional<Usage> usage_;
  bool usage_final_ = false;
  Clock::time_point started_;
  std::string cgroup_;
  std::string leaf_;           // run/ of the scope, for a record with a leaf; "" otherwise
  bool leaf_emptied_ = false;  // run/ was seen empty (and read): the scope has been killed since
  int watch_ = -1;
  int leaf_watch_ = -1;
  std::vector<TimerId> timers_;

  // Where the reap is; it only moves forward (advance). Stopping: deciding, then the stop sent and
  // the grace running. Killing: SIGKILL or cgroup.kill sent (the receipt's "killed"). Finished: the
  // receipt given; every callback that comes later does nothing.
  enum class Phase { Stopping, Killing, Finished };
  // How the decision ended the scope: StopUnit (sent, nothing more for the unit), KillUnit (the unit is
  // stopped too once its cgroup is empty), cgroup.kill alone (the unit is unknown to systemd), or not
  // at all (a leaf whose run/ had emptied already: the scope is ended, then the unit stopped, as after
  // KillUnit).
  enum class Signalled { ByStopUnit, ByKillUnit, ByCgroupKill, NotNeeded };
  void advance(Phase to) {
    if (to > phase_) phase_ = to;
  }
  bool finished() const { return phase_ == Phase::Finished; }
  Phase phase_ = Phase::Stopping;
  Signalled signalled_ = Signalled::ByStopUnit;
};

}  // namespace nerve
