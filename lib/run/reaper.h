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
// grace is over, nerved itself sends KillUnit(all, SIGKILL) (so the receipt's "killed" is exact); one
// second later, cgroup.kill through a checked folder fd; if the cgroup is still not empty kKillWait
// after the grace, the reap ends as pending_retry and names the pids left. Nothing sleeps; every
// wait is a watch, a timer or a systemd call's completion.
// A frozen cgroup (Freeze) handles no signal but SIGKILL: the reap first thaws it (cgroup.freeze 0
// through the checked folder fd). What the run used (usage.h) is read through the same checked fd
// when the reap starts and on every cgroup.events change; the receipt keeps the last snapshot read,
// and says whether it was read after the cgroup emptied (usage_final). Its cause is the one given,
// or oom instead of exited / owner_gone when the snapshot counts an OOM kill. The op lives as long as one of its
// callbacks is pending (each holds it); finish() cancels its timers and watch.
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
  void kill_cgroup();
  void decide_and_act();
  void check_empty();
  void snapshot(bool after_empty);
  bool populated();
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
  int watch_ = -1;
  std::vector<TimerId> timers_;

  // Where the reap is; it only moves forward (advance). Stopping: deciding, then the stop sent and
  // the grace running. Killing: SIGKILL or cgroup.kill sent (the receipt's "killed"). Finished: the
  // receipt given; every callback that comes later does nothing.
  enum class Phase { Stopping, Killing, Finished };
  // How the decision ended the scope: StopUnit (sent, nothing more for the unit), KillUnit (the unit is
  // stopped too once its cgroup is empty), or cgroup.kill alone (the unit is unknown to systemd).
  enum class Signalled { ByStopUnit, ByKillUnit, ByCgroupKill };
  void advance(Phase to) {
    if (to > phase_) phase_ = to;
  }
  bool finished() const { return phase_ == Phase::Finished; }
  Phase phase_ = Phase::Stopping;
  Signalled signalled_ = Signalled::ByStopUnit;
};

}  // namespace nerve
