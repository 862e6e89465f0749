// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/reaper.h"

#include "doubles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

using namespace nerve;
using namespace std::chrono_literals;
using nerve::test::found;
using nerve::test::kCgroupId;
using ::testing::_;
using ::testing::AnyNumber;
using ::testing::DoAll;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::InvokeWithoutArgs;
using ::testing::Return;
using ::testing::ReturnPointee;
using ::testing::SaveArg;

namespace {

constexpr int kWatch = 7;
constexpr auto kGrace = 5s;  // the grace of test::running_record()
constexpr std::uint64_t kShorterGraceUsec = 1'000'000;  // a reap grace under the launch's: StopUnit

// A reap of a running attempt whose unit and cgroup match the record, until a test says otherwise.
// The cgroup stays populated until empty_cgroup(). KillUnit may be called with any signal unless a
// test expects otherwise.
class AReapOp : public ::testing::Test, protected test::World {
 protected:
  Record record = test::running_record();
  std::optional<Receipt> receipt;
  int receipts = 0;
  bool cgroup_populated = true;
  std::function<void()> cgroup_changed;
  Done<void> stop_done;
  const Clock::time_point start = timers.now();

  AReapOp() {
    ON_CALL(systemd, lookup(record.unit)).WillByDefault(Return(found(record)));
    ON_CALL(systemd, stop_unit(record.unit, _)).WillByDefault(SaveArg<1>(&stop_done));
    ON_CALL(systemd, kill_unit).WillByDefault(Return(Result<void>()));
    ON_CALL(cgroups, id(record.cgroup)).WillByDefault(Return(kCgroupId));
    ON_CALL(cgroups, watch(record.cgroup, _)).WillByDefault(DoAll(SaveArg<1>(&cgroup_changed), Return(kWatch)));
    ON_CALL(cgroups, populated(record.cgroup)).WillByDefault(ReturnPointee(&cgroup_populated));
    ON_CALL(cgroups, pids(record.cgroup)).WillByDefault(Return(std::vector<pid_t>{101, 102}));
    ON_CALL(cgroups, kill_if).WillByDefault(Return(true));
    EXPECT_CALL(systemd, kill_unit).Times(AnyNumber());
  }

  void reap(std::uint64_t grace_usec = 0, int signal = 0, Cause cause = Cause::Reaped) {
    ReapOp::start(deps, record, grace_usec, signal, cause, [this](Receipt r) {
      receipt = std::move(r);
      ++receipts;
    });
  }
  void empty_cgroup() {
    cgroup_populated = false;
    ASSERT_TRUE(cgroup_changed) << "the cgroup is not watched";
    cgroup_changed();
  }
  // An action that notes when (on the manual clock) the call was made.
  auto note_time(std::optional<Clock::duration>& at) {
    return InvokeWithoutArgs([this, &at] { at = timers.now() - start; });
  }
};

}  // namespace

TEST_F(AReapOp, EndsNoScopeWithoutAnyQueryOrSignalForARecordOfAnotherBoot) {
  record.boot_id = "ffffffffffffffffffffffffffffffff";
  EXPECT_CALL(systemd, lookup).Times(0);
  EXPECT_CALL(systemd, stop_unit).Times(0);
  EXPECT_CALL(systemd, kill_unit).Times(0);
  EXPECT_CALL(cgroups, kill_if).Times(0);
  reap();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::NoScope);
}

TEST_F(AReapOp, EndsPendingRetryWithoutStoppingWhenTheQueryFails) {
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(test::query_failed("org.freedesktop.DBus.Error.Timeout")));
  EXPECT_CALL(systemd, stop_unit).Times(0);
  reap();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::PendingRetry);
  EXPECT_THAT(receipt->error, HasSubstr("Timeout"));
}

TEST_F(AReapOp, TouchesNothingWhenRefused) {
  UnitState other = *found(record);
  other.invocation_id = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(Result<UnitState>(other)));
  EXPECT_CALL(systemd, stop_unit).Times(0);
  EXPECT_CALL(systemd, kill_unit).Times(0);
  EXPECT_CALL(cgroups, kill_if).Times(0);
  reap();
  timers.advance(1min);
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Refused);
  EXPECT_FALSE(receipt->error.empty());
}

TEST_F(AReapOp, WatchesTheCgroupThenSendsSigtermAndSigcontToEveryProcess) {
  EXPECT_CALL(systemd, stop_unit).Times(0);
  InSequence in_order;
  EXPECT_CALL(cgroups, watch(record.cgroup, _));
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGTERM)).WillOnce(Return(Result<void>()));
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGCONT)).WillOnce(Return(Result<void>()));
  reap();
  EXPECT_FALSE(receipt);
}

TEST_F(AReapOp, SendsSigtermItselfWhenTheReapsGraceIsLongerThanTheLaunchs) {
  EXPECT_CALL(systemd, stop_unit).Times(0);
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGTERM)).WillOnce(Return(Result<void>()));
  reap(60'000'000);
}

TEST_F(AReapOp, WatchesTheCgroupThenStopsTheUnitWhenTheReapsGraceIsShorterThanTheLaunchs) {
  EXPECT_CALL(systemd, kill_unit(_, SIGTERM)).Times(0);
  InSequence in_order;
  EXPECT_CALL(cgroups, watch(record.cgroup, _));
  EXPECT_CALL(systemd, stop_unit(record.unit, _));
  reap(kShorterGraceUsec);
  EXPECT_FALSE(receipt);
}

TEST_F(AReapOp, CompletesUnkilledWhenTheCgroupEmptiesAfterTheStop) {
  reap();
  ASSERT_FALSE(receipt);
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_FALSE(receipt->killed);
  EXPECT_EQ(receipt->error, "");
}

// The receipt says oom when the usage snapshot counts an OOM kill and the run ended
// by itself (exited, owner gone); an explicit end (cancel, reap, timeout) keeps its own cause. No
// memory controller on this host: the kernel's memory.events is replaced by the usage double.
class AReapOpAfterAnOomKill : public AReapOp, public ::testing::WithParamInterface<std::pair<Cause, Cause>> {};

TEST_P(AReapOpAfterAnOomKill, RecordsTheCauseOom) {
  Usage u;
  u.cpu_usage_usec = 10;
  u.oom_kills = 1;
  u.memory_peak_bytes = 33554432;
  ON_CALL(cgroups, usage(record.cgroup, _)).WillByDefault(Return(std::optional<Usage>(u)));
  reap(0, 0, GetParam().first);
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_EQ(receipt->cause, GetParam().second);
  ASSERT_TRUE(receipt->usage);
  EXPECT_EQ(receipt->usage->oom_kills, 1u);
  EXPECT_TRUE(receipt->usage_final);
}

INSTANTIATE_TEST_SUITE_P(Causes, AReapOpAfterAnOomKill,
                         ::testing::Values(std::pair{Cause::Exited, Cause::Oom}, std::pair{Cause::OwnerGone, Cause::Oom},
                                           std::pair{Cause::Cancelled, Cause::Cancelled},
                                           std::pair{Cause::Reaped, Cause::Reaped},
                                           std::pair{Cause::Timeout, Cause::Timeout}),
                         [](const auto& info) { return to_string(info.param.first); });

TEST_F(AReapOp, WithoutAnOomKillKeepsTheCauseItWasStartedWith) {
  Usage u;
  u.cpu_usage_usec = 10;
  u.oom_kills = 0;
  ON_CALL(cgroups, usage(record.cgroup, _)).WillByDefault(Return(std::optional<Usage>(u)));
  reap(0, 0, Cause::Exited);
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->cause, Cause::Exited);
}

TEST_F(AReapOp, CompletesWhenTheStopJobEndsWithTheCgroupEmpty) {
  reap(kShorterGraceUsec);
  cgroup_populated = false;
  stop_done(Result<void>());
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
}

TEST_F(AReapOp, NamesTheAttemptAndMeasuresItsDurationOnTheClock) {
  record.attempt = 2;
  reap();
  timers.advance(2s);
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->run, record.run);
  EXPECT_EQ(receipt->attempt, 2u);
  EXPECT_EQ(receipt->unit, record.unit);
  EXPECT_EQ(receipt->invocation_id, record.invocation_id);
  EXPECT_EQ(receipt->duration_usec, 2'000'000u);
}

TEST_F(AReapOp, SendsSigkillThroughSystemdWhenTheGraceIsOver) {
  std::optional<Clock::duration> at;
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL)).WillOnce(DoAll(note_time(at), Return(Result<void>())));
  reap();
  timers.advance(1min);
  EXPECT_EQ(at, kGrace);
}

TEST_F(AReapOp, WritesCgroupKillWithTheRecordedIdOneSecondAfterTheGrace) {
  std::optional<Clock::duration> at;
  EXPECT_CALL(cgroups, kill_if(record.cgroup, kCgroupId)).WillOnce(DoAll(note_time(at), Return(true)));
  reap();
  timers.advance(1min);
  EXPECT_EQ(at, kGrace + 1s);
}

TEST_F(AReapOp, EndsPendingRetryNamingThePidsLeftTenSecondsAfterTheGrace) {
  reap();
  timers.advance(kGrace + 10s - 1ms);
  ASSERT_FALSE(receipt);
  timers.advance(1ms);
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::PendingRetry);
  EXPECT_THAT(receipt->error, HasSubstr("101 102"));
  EXPECT_TRUE(receipt->killed);
}

TEST_F(AReapOp, CompletesAsKilledWhenTheCgroupEmptiesAfterTheSigkill) {
  reap();
  timers.advance(kGrace);
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_TRUE(receipt->killed);
}

TEST_F(AReapOp, StopsTheUnitOnceWhenItsCgroupEmptiesAfterTheSigkillOfAKillUnitReap) {
  ::testing::MockFunction<void()> sigkilled;
  {
    ::testing::InSequence order;
    EXPECT_CALL(sigkilled, Call());
    EXPECT_CALL(systemd, stop_unit(record.unit, _)).Times(1);
  }
  reap();  // the launch's grace: KillUnit
  timers.advance(kGrace);
  sigkilled.Call();
  empty_cgroup();
  cgroup_changed();  // a late event of the emptied cgroup
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipts, 1);
  EXPECT_TRUE(receipt->killed);
}

TEST_F(AReapOp, SendsStopUnitOnceWhenItStoppedTheUnitAndHadToKill) {
  EXPECT_CALL(systemd, stop_unit(record.unit, _)).Times(1);
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL)).Times(1);
  reap(kShorterGraceUsec);
  timers.advance(std::chrono::microseconds(kShorterGraceUsec));
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_TRUE(receipt->killed);
}

TEST_F(AReapOp, UsesTheGraceOfTheRecordWhenTheReapGivesNone) {
  record.grace_usec = 3'000'000;
  std::optional<Clock::duration> at;
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL)).WillOnce(DoAll(note_time(at), Return(Result<void>())));
  reap(0);
  timers.advance(1min);
  EXPECT_EQ(at, 3s);
}

TEST_F(AReapOp, UsesTheGraceOfTheReapWhenGiven) {
  std::optional<Clock::duration> at;
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL)).WillOnce(DoAll(note_time(at), Return(Result<void>())));
  reap(1'000'000);
  timers.advance(1min);
  EXPECT_EQ(at, 1s);
}

TEST_F(AReapOp, CancelsItsTimersAndUnwatchesTheCgroupWhenFinished) {
  EXPECT_CALL(cgroups, unwatch(kWatch)).Times(1);
  EXPECT_CALL(systemd, kill_unit(_, SIGKILL)).Times(0);
  EXPECT_CALL(cgroups, kill_if).Times(0);
  reap();
  ASSERT_GT(timers.pending(), 0u);
  empty_cgroup();
  EXPECT_EQ(timers.pending(), 0u);
  cgroup_populated = true;  // even a new process in a reused folder cannot wake the finished reap
  timers.advance(1min);
}

TEST_F(AReapOp, ReportsOnceWhenTheStopJobEndsAfterTheReapFinished) {
  reap(kShorterGraceUsec);
  empty_cgroup();
  stop_done(Result<void>());
  EXPECT_EQ(receipts, 1);
}

TEST_F(AReapOp, KillsALeftoverCgroupThroughCgroupKillWhenTheUnitIsGone) {
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(test::not_loaded()));
  EXPECT_CALL(systemd, stop_unit).Times(0);
  {
    InSequence in_order;
    EXPECT_CALL(cgroups, watch(record.cgroup, _));
    EXPECT_CALL(cgroups, kill_if(record.cgroup, kCgroupId)).WillOnce(Return(true));
  }
  reap();
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_TRUE(receipt->killed);
}

TEST_F(AReapOp, EndsPendingRetryWhenALeftoverCgroupStaysPopulated) {
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(test::not_loaded()));
  reap();
  timers.advance(10s);
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::PendingRetry);
}

TEST_F(AReapOp, WaitsForTheStopJobWhenTheUnitHasNoCgroup) {
  record.cgroup.clear();
  record.cgroup_id = 0;
  UnitState no_cgroup = *found(record);
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(Result<UnitState>(no_cgroup)));
  EXPECT_CALL(cgroups, watch).Times(0);
  reap(kShorterGraceUsec);
  ASSERT_FALSE(receipt);
  stop_done(Result<void>());
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
}

TEST_F(AReapOp, EndsPendingRetryWhenTheStopJobOfAUnitWithoutCgroupFails) {
  record.cgroup.clear();
  record.cgroup_id = 0;
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(found(record)));
  reap(kShorterGraceUsec);
  stop_done(Error{systemd_error::JobFailed, "its job ended with result 'timeout'"});
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::PendingRetry);
  EXPECT_THAT(receipt->error, HasSubstr("timeout"));
}

TEST_F(AReapOp, PassesACancelSignalToEveryProcessAndStopsTheUnitOnlyOnceItIsEmpty) {
  ::testing::MockFunction<void()> emptied;
  {
    ::testing::InSequence order;
    EXPECT_CALL(systemd, kill_unit(record.unit, SIGINT)).WillOnce(Return(Result<void>()));
    EXPECT_CALL(emptied, Call());
    // Then, so that a scope systemd never saw empty cannot stay active:
    EXPECT_CALL(systemd, stop_unit(record.unit, _));
  }
  reap(0, SIGINT);
  ASSERT_FALSE(receipt);
  emptied.Call();
  empty_cgroup();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
}

TEST_F(AReapOp, StopsAUnitWhoseCgroupIsNotKnownYetWithStopUnitEvenWithTheFullGrace) {
  // nerved died right after asking for the scope: the record has no cgroup and the start job may
  // still be pending. Only StopUnit replaces that job; a KillUnit would find nothing to signal.
  record.cgroup.clear();
  record.cgroup_id = 0;
  record.invocation_id.clear();
  UnitState pending = *found(record);
  pending.control_group.clear();
  pending.active_state = "activating";
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(Result<UnitState>(pending)));
  EXPECT_CALL(systemd, kill_unit(_, SIGTERM)).Times(0);
  EXPECT_CALL(systemd, stop_unit(record.unit, _));
  reap(0);
  ASSERT_FALSE(receipt) << "completed before the stop job ended";
  stop_done(Result<void>());
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
}

TEST_F(AReapOp, EscalatesACancelToSigkillWhenTheGraceIsOver) {
  std::optional<Clock::duration> at;
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGINT)).WillOnce(Return(Result<void>()));
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL)).WillOnce(DoAll(note_time(at), Return(Result<void>())));
  reap(0, SIGINT);
  timers.advance(1min);
  EXPECT_EQ(at, kGrace);
}

TEST_F(AReapOp, TreatsASigtermCancelAsAPlainReap) {
  EXPECT_CALL(systemd, stop_unit(record.unit, _));
  EXPECT_CALL(systemd, kill_unit(_, SIGTERM)).Times(0);
  reap(kShorterGraceUsec, SIGTERM);
}

// Regression: when no cgroup is known (an intent record, and a unit whose ControlGroup is "") the grace
// timers used to ask cgroups.populated("") -- the cgroup *root* -- so a stop job that never answered
// was read as "gone" and the reap ended complete having confirmed nothing. An unconfirmed stop is
// pending_retry, and cgroup "" is never asked about.
TEST_F(AReapOp, EndsPendingRetryWhenTheStopJobOfAUnitWithoutCgroupNeverEnds) {
  record.cgroup.clear();
  record.cgroup_id = 0;
  EXPECT_CALL(systemd, lookup(record.unit)).WillOnce(Return(found(record)));
  EXPECT_CALL(cgroups, populated("")).Times(0);
  reap(kShorterGraceUsec);
  timers.advance(1s + kKillWait);
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::PendingRetry);
}

namespace {

constexpr int kLeafWatch = 8;

// A reap of a running attempt whose scope has its leaves: the run's processes in run/ (populated
// until empty_leaf()), the holder in hold/, so the scope stays populated until the reap kills it
// (cgroup.kill of the scope) and empty_scope() says it has emptied.
class AReapOfALeaf : public AReapOp {
 protected:
  bool leaf_populated = true;
  std::function<void()> leaf_changed;
  Usage leaf_usage;

  AReapOfALeaf() {
    record = test::running_record_with_leaf();
    leaf_usage.cpu_usage_usec = 1'000'000;
    ON_CALL(systemd, lookup(record.unit)).WillByDefault(Return(found(record)));
    ON_CALL(systemd, stop_unit(record.unit, _)).WillByDefault(SaveArg<1>(&stop_done));
    ON_CALL(cgroups, watch(record.leaf, _)).WillByDefault(DoAll(SaveArg<1>(&leaf_changed), Return(kLeafWatch)));
    ON_CALL(cgroups, populated(record.leaf)).WillByDefault(ReturnPointee(&leaf_populated));
    ON_CALL(cgroups, usage(record.leaf, test::kLeafId)).WillByDefault(ReturnPointee(&leaf_usage));
    // The scope's own figures include the holder's: they must never be the receipt's.
    Usage scope_usage;
    scope_usage.cpu_usage_usec = 1;
    ON_CALL(cgroups, usage(record.cgroup, _)).WillByDefault(Return(scope_usage));
  }
  void empty_leaf() {
    leaf_populated = false;
    ASSERT_TRUE(leaf_changed) << "run/ is not watched";
    leaf_changed();
  }
  void empty_scope() { empty_cgroup(); }
};

}  // namespace

TEST_F(AReapOfALeaf, ReadsTheLeafThenKillsTheScopeOnceTheLeafIsEmpty) {
  reap();
  EXPECT_CALL(cgroups, kill_if(record.cgroup, kCgroupId)).WillOnce(Return(true));
  leaf_usage.cpu_usage_usec = 2'000'000;  // what run/ says after its last process ended
  empty_leaf();
  EXPECT_FALSE(receipt) << "finished before the scope (the holder) was confirmed gone";
  EXPECT_CALL(systemd, stop_unit(record.unit, _));
  empty_scope();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_FALSE(receipt->killed);
  EXPECT_TRUE(receipt->usage_final);
  ASSERT_TRUE(receipt->usage);
  EXPECT_EQ(receipt->usage->cpu_usage_usec, 2'000'000u);
}

// The holder is this nerved's own child (so its pid names no other process): once run/ is empty and
// read, a scope that holds nothing else alive holds none of the run's processes, and the reap ends
// without waiting for the kernel's report that the killed holder is gone.
TEST_F(AReapOfALeaf, CompletesOnceOnlyItsOwnKilledHolderIsLeftInTheScope) {
  ::testing::NiceMock<test::MockHolders> holders;
  deps.holders = &holders;
  ON_CALL(holders, spawned(test::kHolderPid)).WillByDefault(Return(true));
  ON_CALL(cgroups, live_pids(record.cgroup)).WillByDefault(Return(Result<std::vector<pid_t>>(std::vector<pid_t>{test::kHolderPid})));
  reap();
  EXPECT_CALL(cgroups, kill_if(record.cgroup, kCgroupId)).WillOnce(Return(true));
  EXPECT_CALL(systemd, stop_unit(record.unit, _));
  empty_leaf();
  ASSERT_TRUE(receipt) << "waited for the scope to empty though only the holder was left";
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_TRUE(receipt->usage_final);
}

TEST_F(AReapOfALeaf, WaitsForTheScopeWhenAProcessOtherThanItsHolderIsLeftInIt) {
  ::testing::NiceMock<test::MockHolders> holders;
  deps.holders = &holders;
  ON_CALL(holders, spawned(test::kHolderPid)).WillByDefault(Return(true));
  // A process of the run moved itself into another cgroup of the scope: cgroup.kill ends it too,
  // but only the scope's emptiness proves it gone.
  ON_CALL(cgroups, live_pids(record.cgroup))
      .WillByDefault(Return(Result<std::vector<pid_t>>(std::vector<pid_t>{test::kHolderPid, 4242})));
  reap();
  empty_leaf();
  EXPECT_FALSE(receipt);
  empty_scope();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
}

TEST_F(AReapOfALeaf, WaitsForTheScopeWhenItsHolderIsNotOneThisNervedSpawned) {
  ::testing::NiceMock<test::MockHolders> holders;  // spawned() is false: a holder from before a restart
  deps.holders = &holders;
  ON_CALL(cgroups, live_pids(record.cgroup)).WillByDefault(Return(Result<std::vector<pid_t>>(std::vector<pid_t>{test::kHolderPid})));
  reap();
  empty_leaf();
  EXPECT_FALSE(receipt);
  empty_scope();
  ASSERT_TRUE(receipt);
}

TEST_F(AReapOfALeaf, SendsNoSignalWhenTheLeafIsEmptyAlready) {
  leaf_populated = false;  // the run ended by itself
  EXPECT_CALL(systemd, kill_unit).Times(0);
  EXPECT_CALL(cgroups, kill_if(record.leaf, _)).Times(0);
  EXPECT_CALL(cgroups, kill_if(record.cgroup, kCgroupId)).WillOnce(Return(true));
  reap(0, 0, Cause::Exited);
  EXPECT_CALL(systemd, stop_unit(record.unit, _));
  empty_scope();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  EXPECT_EQ(receipt->cause, Cause::Exited);
  EXPECT_TRUE(receipt->usage_final);
  EXPECT_FALSE(receipt->killed);
}

TEST_F(AReapOfALeaf, KillsOnlyTheLeafWhenTheGraceIsOverSoTheHolderOutlivesTheRun) {
  reap();
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL)).Times(0);
  EXPECT_CALL(cgroups, kill_if(record.cgroup, _)).Times(0);
  EXPECT_CALL(cgroups, kill_if(record.leaf, test::kLeafId)).WillOnce(Return(true));
  timers.advance(kGrace);
  ::testing::Mock::VerifyAndClearExpectations(&cgroups);
  EXPECT_CALL(cgroups, kill_if(record.cgroup, kCgroupId)).WillOnce(Return(true));
  empty_leaf();
  empty_scope();
  ASSERT_TRUE(receipt);
  EXPECT_TRUE(receipt->killed);
  EXPECT_TRUE(receipt->usage_final);
}

TEST_F(AReapOfALeaf, FallsBackToKillUnitWhenTheLeafCannotBeKilled) {
  reap();
  EXPECT_CALL(cgroups, kill_if(record.leaf, test::kLeafId)).WillOnce(Return(false));
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL));
  timers.advance(kGrace);
}

TEST_F(AReapOfALeaf, TakesTheHolderAsNoProcessOfTheRunWhenTheGraceIsOver) {
  reap();
  empty_leaf();  // the scope stays populated: its holder is being killed
  EXPECT_CALL(systemd, kill_unit(record.unit, SIGKILL)).Times(0);
  EXPECT_CALL(cgroups, kill_if(record.leaf, _)).Times(0);
  timers.advance(kGrace);
  empty_scope();
  ASSERT_TRUE(receipt);
  EXPECT_FALSE(receipt->killed);
}

TEST_F(AReapOfALeaf, EndsPendingRetryWhenTheScopeStaysPopulatedAfterTheLeafEmptied) {
  reap();
  empty_leaf();
  timers.advance(kGrace + 10s);
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::PendingRetry);
  EXPECT_THAT(receipt->error, HasSubstr("101 102"));
}

TEST_F(AReapOfALeaf, UnwatchesBothCgroupsWhenFinished) {
  reap();
  EXPECT_CALL(cgroups, unwatch(kWatch));
  EXPECT_CALL(cgroups, unwatch(kLeafWatch));
  empty_leaf();
  empty_scope();
}

TEST_F(AReapOfALeaf, ReadsARecordWithoutALeafFromItsScopeAsBefore) {
  record.leaf.clear();
  record.leaf_id = 0;
  reap();
  EXPECT_FALSE(leaf_changed) << "a leaf was watched for a record without one";
  empty_scope();
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->outcome, Outcome::Complete);
  ASSERT_TRUE(receipt->usage);
  EXPECT_EQ(receipt->usage->cpu_usage_usec, 1u);
}
