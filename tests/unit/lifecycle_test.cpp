// SPDX-License-Identifier: LGPL-2.1-or-later
#include "lifecycle_fixture.h"

#include "base/errors.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace nerve;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::IsEmpty;
using ::testing::Return;
using ::testing::StartsWith;

namespace {
using ALifecycle = test::LifecycleTest;
}

TEST_F(ALifecycle, ContainsANewRunAsItsFirstAttempt) {
  auto& result = contained("r1");
  ASSERT_TRUE(result.reply);
  EXPECT_EQ(result.reply->attempt, 1u);
  EXPECT_EQ(result.reply->unit, starts.at(0).first.unit);
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
}

TEST_F(ALifecycle, RefusesToContainAReapedRunAndAsksForNoScope) {
  contained("r1");
  ASSERT_TRUE(reap("r1").receipt);
  auto& again = contain("r1");
  ASSERT_TRUE(again.error);
  EXPECT_EQ(again.error->name, error::RunFinished);
  EXPECT_EQ(starts.size(), 1u);
}

TEST_F(ALifecycle, RefusesToContainARunWhoseReapHasBegun) {
  Record fenced = test::running_record();
  fenced.state = RunState::Reaping;
  test::save(store, fenced);
  EXPECT_CALL(systemd, start_scope).Times(0);
  auto& result = contain("r1");
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->name, error::RunFinished);
}

TEST_F(ALifecycle, StopsTheScopeOfTheOldAttemptBeforeItStartsTheNext) {
  const std::string old_unit = contained("r1").reply->unit;
  auto& result = contain("r1");
  start_job_ends();
  ASSERT_TRUE(result.reply) << result.error->message;
  EXPECT_EQ(result.reply->attempt, 2u);
  EXPECT_NE(result.reply->unit, old_unit);
  EXPECT_THAT(events, ElementsAre("start " + old_unit, "stop " + old_unit, "start " + result.reply->unit));
  EXPECT_EQ(test::load(store, "r1")->attempt, 2u);
}

TEST_F(ALifecycle, RefusesARelaunchWhileTheOldScopeIsNotConfirmedGone) {
  contained("r1");
  stop_empties = false;
  auto& result = contain("r1");
  timers.advance(kGrace + kKillWait);
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->name, error::ScopeFailed);
  EXPECT_THAT(result.error->message, HasSubstr("not confirmed gone"));
  EXPECT_EQ(starts.size(), 1u);
}

TEST_F(ALifecycle, AnswersNoSuchRunToAReapOfAnUnknownRun) {
  auto& result = reap("r1");
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->name, error::NoSuchRun);
  EXPECT_THAT(result.error->message, HasSubstr("'r1'"));
}

TEST_F(ALifecycle, FencesTheRunBeforeItStopsTheScope) {
  contained("r1");
  std::optional<RunState> state_at_stop;
  EXPECT_CALL(systemd, kill_unit).WillRepeatedly(Invoke([&](const std::string&, int) {
    if (!state_at_stop) state_at_stop = state_on_disk("r1");
    return Result<void>();
  }));
  EXPECT_CALL(systemd, stop_unit).WillRepeatedly(Invoke([&](const std::string&, auto) {
    if (!state_at_stop) state_at_stop = state_on_disk("r1");
  }));
  reap("r1");
  EXPECT_EQ(state_at_stop, RunState::Reaping);
}

TEST_F(ALifecycle, WritesTheReceiptAndClosesTheRecordWhenTheReapIsFinal) {
  contained("r1");
  auto& result = reap("r1");
  ASSERT_TRUE(result.receipt);
  EXPECT_EQ(result.receipt->outcome, Outcome::Complete);
  EXPECT_EQ(test::load_receipt(store, "r1")->outcome, Outcome::Complete);
  EXPECT_EQ(state_on_disk("r1"), RunState::Reaped);
}

// 5,000 runs whose owners go at once: at most kConcurrentReaps reaps talk to systemd at a
// time (else every call to the manager misses its deadline and every reap ends pending_retry); the
// next one starts when one ends.
TEST_F(ALifecycle, RunsAtMostKConcurrentReapsAtOnceAndStartsTheNextWhenOneEnds) {
  const std::size_t n = kConcurrentReaps + 1;
  std::vector<std::string> units;
  for (std::size_t i = 0; i < n; ++i) {
    leader_cgroup.reset();  // each caller outside the others' scopes: no nested runs
    units.push_back(contained("r" + std::to_string(i)).reply->unit);
  }
  stop_empties = false;
  for (std::size_t i = 0; i < n; ++i) reap("r" + std::to_string(i));
  auto stops_of = [&](const std::string& unit) { return std::count(events.begin(), events.end(), "stop " + unit); };
  std::size_t stopped = 0;
  for (const auto& u : units) stopped += stops_of(u) > 0;
  EXPECT_EQ(stopped, kConcurrentReaps);
  EXPECT_EQ(stops_of(units.back()), 0) << "the last reap started before one of the others ended";
  timers.advance(kGrace + kKillWait + std::chrono::seconds(1));  // the first ones end pending_retry
  EXPECT_GE(stops_of(units.back()), 1) << "the waiting reap did not start when the others ended";
}

TEST_F(ALifecycle, ReturnsTheFirstReceiptUnchangedToASecondReapWithoutAskingSystemd) {
  contained("r1");
  auto& first = reap("r1");
  ASSERT_TRUE(first.receipt);
  timers.advance(1h);
  EXPECT_CALL(systemd, lookup).Times(0);
  EXPECT_CALL(systemd, stop_unit).Times(0);
  EXPECT_CALL(systemd, kill_unit).Times(0);
  auto& second = reap("r1");
  ASSERT_TRUE(second.receipt);
  EXPECT_EQ(to_json_text(*second.receipt), to_json_text(*first.receipt));
}

TEST_F(ALifecycle, StartsAReapOnlyOnceAContainOfTheSameRunHasFinished) {
  auto& launch = contain("r1");
  auto& result = reap("r1");
  const std::string unit = starts.at(0).first.unit;
  EXPECT_THAT(events, ElementsAre("start " + unit));
  EXPECT_FALSE(result.receipt);
  EXPECT_EQ(state_on_disk("r1"), RunState::Launching);
  start_job_ends();
  ASSERT_TRUE(launch.reply);
  EXPECT_THAT(events, ElementsAre("start " + unit, "stop " + unit));
  ASSERT_TRUE(result.receipt);
  EXPECT_EQ(result.receipt->outcome, Outcome::Complete);
}

TEST_F(ALifecycle, RefusesContainmentAndWritesNothingWhenSystemdDoesNotAnswer) {
  EXPECT_CALL(systemd, version)
      .WillOnce(Return(Result<std::string>(Error{"org.freedesktop.DBus.Error.ServiceUnknown",
                                                 "org.freedesktop.DBus.Error.ServiceUnknown: no manager"})));
  EXPECT_CALL(systemd, start_scope).Times(0);
  auto& result = contain("r1");
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->name, error::ContainmentUnavailable);
  EXPECT_THAT(result.error->message, HasSubstr("ServiceUnknown"));
  EXPECT_THAT(store.runs().value(), IsEmpty());
}

TEST_F(ALifecycle, RefusesContainmentWhenTheMachineCannotContain) {
  Deps without_cgroup2 = deps;
  without_cgroup2.unavailable = "no cgroup2 file system at /sys/fs/cgroup";
  Lifecycle refusing(without_cgroup2);
  EXPECT_CALL(systemd, start_scope).Times(0);
  std::optional<Error> error;
  refusing.contain(request("r1"), [&](Result<ContainReply> r) {
    if (!r) error = r.error();
  });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ContainmentUnavailable);
  EXPECT_EQ(error->message, "no cgroup2 file system at /sys/fs/cgroup");
  EXPECT_THAT(store.runs().value(), IsEmpty());
}

TEST_F(ALifecycle, MovesAnUnreadableRecordAsideAndAnswersRecordFailed) {
  std::filesystem::create_directory(store.run_path("r1"));
  std::ofstream(store.run_path("r1") + "/lifecycle.json") << "{\"version\": 1,";
  auto& result = reap("r1");
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->name, error::RecordFailed);
  EXPECT_THAT(result.error->message, HasSubstr(store.path() + "/.quarantine/"));
  EXPECT_EQ(test::load(store, "r1"), std::nullopt);
}

TEST_F(ALifecycle, ShowsTheRecordTheReceiptAndWhatSystemdSaysInItsStatus) {
  contained("r1");
  auto status = nlohmann::json::parse(status_of("r1").value());
  EXPECT_EQ(status["record"]["state"], "running");
  EXPECT_TRUE(status["receipt"].is_null());
  EXPECT_EQ(status["live"]["known"], true);
  EXPECT_EQ(status["live"]["ours"], true);
  EXPECT_EQ(status["live"]["pids"], nlohmann::json::array({kPid}));
}

// A stalled user manager never delays GetRun. After kLiveStateDeadline (at once while
// systemd is late) the live state comes from the cgroup tree, which says where it came from.
TEST_F(ALifecycle, AnswersItsStatusFromTheCgroupTreeWhenSystemdDoesNotAnswerInTime) {
  auto unit = contained("r1").reply->unit;
  systemd.stall_lookups_of.insert(unit);
  std::vector<nlohmann::json> answers;
  auto ask = [&] { lifecycle.status_json("r1", [&](Result<std::string> r) { answers.push_back(nlohmann::json::parse(r.value())); }); };
  ask();
  EXPECT_TRUE(answers.empty());
  timers.advance(kLiveStateDeadline);
  ASSERT_EQ(answers.size(), 1u);
  const auto& live = answers[0]["live"];
  EXPECT_EQ(live["source"], "cgroup tree");
  EXPECT_EQ(live["error"], "systemd did not answer within 20 ms");
  EXPECT_EQ(live["known"], true) << "the recorded cgroup with the recorded id: that invocation's unit";
  EXPECT_EQ(live["ours"], true);
  EXPECT_EQ(live["active_state"], "active") << "populated";
  EXPECT_FALSE(live.contains("unknown"));
  EXPECT_EQ(live["pids"], nlohmann::json::array({kPid}));
  ask();
  ASSERT_EQ(answers.size(), 2u) << "systemd is late: answered at once";
  EXPECT_EQ(answers[1]["live"]["active_state"], "active");
  EXPECT_EQ(systemd.stalled_lookups.size(), 1u) << "no second lookup to a stalled manager";
}

TEST_F(ALifecycle, ShowsAGoneCgroupAsNoUnitWhenSystemdDoesNotAnswer) {
  auto unit = contained("r1").reply->unit;
  cgroup_ids.clear();
  systemd.stall_lookups_of.insert(unit);
  std::optional<nlohmann::json> live;
  lifecycle.status_json("r1", [&](Result<std::string> r) { live = nlohmann::json::parse(r.value())["live"]; });
  timers.advance(kLiveStateDeadline);
  ASSERT_TRUE(live);
  EXPECT_EQ((*live)["source"], "cgroup tree");
  EXPECT_EQ((*live)["known"], false);
  EXPECT_EQ((*live)["active_state"], "");
  EXPECT_FALSE(live->contains("unknown"));
}

TEST_F(ALifecycle, ShowsACgroupOfAnotherIdAsNotOursWhenSystemdDoesNotAnswer) {
  auto unit = contained("r1").reply->unit;
  Record r = test::load(store, "r1").value();
  cgroup_ids[r.cgroup] = r.cgroup_id + 1;  // the unit name was started again: another cgroup, same path
  systemd.stall_lookups_of.insert(unit);
  std::optional<nlohmann::json> live;
  lifecycle.status_json("r1", [&](Result<std::string> res) { live = nlohmann::json::parse(res.value())["live"]; });
  timers.advance(kLiveStateDeadline);
  ASSERT_TRUE(live);
  EXPECT_EQ((*live)["source"], "cgroup tree");
  EXPECT_EQ((*live)["known"], true);
  EXPECT_EQ((*live)["ours"], false);
  EXPECT_EQ((*live)["active_state"], "active");
  EXPECT_EQ((*live)["pids"], nlohmann::json::array()) << "not the recorded cgroup's processes";
}

TEST_F(ALifecycle, SaysUnknownOnlyWhenNeitherSystemdNorTheCgroupTreeCanTell) {
  auto unit = contained("r1").reply->unit;
  Record r = test::load(store, "r1").value();
  ON_CALL(cgroups, populated(r.cgroup)).WillByDefault(Return(Result<bool>(Error{"test.EACCES", "unreadable"})));
  EXPECT_CALL(systemd, lookup(unit)).WillRepeatedly(Return(test::query_failed("org.freedesktop.DBus.Error.NoReply")));
  auto live = nlohmann::json::parse(status_of("r1").value())["live"];
  EXPECT_EQ(live["unknown"], true);
  EXPECT_EQ(live["error"], "org.freedesktop.DBus.Error.NoReply: no answer");
  EXPECT_EQ(live["known"], false);
  EXPECT_EQ(live["source"], "none");
}

TEST_F(ALifecycle, SaysTheLiveStateCameFromSystemdWhenItAnswered) {
  contained("r1");
  auto live = nlohmann::json::parse(status_of("r1").value())["live"];
  EXPECT_EQ(live["source"], "systemd");
  EXPECT_FALSE(live.contains("error"));
}

TEST_F(ALifecycle, LeavesAnUnreadableRecordInPlaceWhenAskedForItsStatus) {
  std::filesystem::create_directory(store.run_path("r1"));
  std::ofstream(store.run_path("r1") + "/lifecycle.json") << "{";
  auto status = status_of("r1");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().name, error::RecordFailed);
  EXPECT_TRUE(std::filesystem::exists(store.run_path("r1") + "/lifecycle.json"));
}

TEST_F(ALifecycle, AnswersInvalidRunIdToAStatusQueryOfABadRunId) {
  auto status = status_of("../x");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().name, error::InvalidRunId);
}

TEST_F(ALifecycle, ListsRunsWithTheirStateAndOutcome) {
  contained("r1");
  contained("r2");
  reap("r2");
  auto runs = lifecycle.list().value();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run, "r1");
  EXPECT_EQ(runs[0].state, "running");
  EXPECT_EQ(runs[0].outcome, "");
  EXPECT_EQ(runs[1].state, "reaped");
  EXPECT_EQ(runs[1].outcome, "complete");
}

TEST_F(ALifecycle, AsksTheManagerForItsVersionBeforeTheFirstLaunchOnly) {
  EXPECT_CALL(systemd, version).Times(1);
  contained("r1");
  contained("r2");
}

TEST_F(ALifecycle, AsksTheManagerForItsVersionAgainAfterALaunchFailed) {
  EXPECT_CALL(systemd, version).Times(2);
  auto& failed = contain("r1");
  ASSERT_EQ(starts.size(), 1u);
  starts.back().second(Error{systemd_error::JobFailed, "its job ended with result 'failed'"});
  ASSERT_TRUE(failed.error);
  contained("r2");
}

TEST_F(ALifecycle, AnswersQueriesAndServesOtherRunsWhileTheManagerDoesNotAnswerAboutOne) {
  const std::string unit1 = contained("r1").reply->unit;
  leader_cgroup.reset();  // r2's caller outside r1's scope: two runs, not a parent and its child
  contained("r2");
  systemd.stall_lookups_of.insert(unit1);
  auto& stuck = reap("r1");
  EXPECT_FALSE(stuck.receipt || stuck.error) << "the reap of r1 cannot have an answer yet";
  EXPECT_EQ(lifecycle.list().value().size(), 2u);
  EXPECT_TRUE(lifecycle.exists("r1"));
  auto& other = reap("r2");
  ASSERT_TRUE(other.receipt) << "r2's reap waited behind r1's";
  EXPECT_EQ(other.receipt->outcome, Outcome::Complete);
  // The manager answers at last: r1's reap goes on.
  ASSERT_EQ(systemd.stalled_lookups.size(), 1u);
  auto [unit, answer] = std::move(systemd.stalled_lookups.front());
  answer(systemd.lookup(unit));
  ASSERT_TRUE(stuck.receipt);
  EXPECT_EQ(stuck.receipt->outcome, Outcome::Complete);
}

// The kernel's grace period of the run's migration starts when the call arrives, before
// the intent record is written and before systemd is asked for the scope.
TEST_F(ALifecycle, PrimesTheMigrationBeforeItWritesTheIntentOrAsksForTheScope) {
  bool record_then = true, scope_then = true;
  EXPECT_CALL(cgroups, prime_migration()).WillOnce(Invoke([&] {
    record_then = store.load("r1") && store.load("r1")->has_value();
    scope_then = !starts.empty();
  }));
  auto& result = contained("r1");
  ASSERT_TRUE(result.reply);
  EXPECT_FALSE(record_then) << "the intent record was written before the migration was primed";
  EXPECT_FALSE(scope_then) << "the scope was asked for before the migration was primed";
}

// A reap asks systemd about the scope before it writes the fence (so systemd answers while
// nerved writes), once, and signals only after the fence is durable.
TEST_F(ALifecycle, AsksForTheScopeBeforeItWritesTheFenceAndOnlyOnce) {
  contained("r1");
  std::optional<RunState> state_at_lookup, state_at_kill;
  const std::string unit = starts.at(0).first.unit;
  EXPECT_CALL(systemd, lookup(unit)).WillOnce(Invoke([&](const std::string&) -> Result<UnitState> {
    state_at_lookup = state_on_disk("r1");
    return units.at(unit);
  }));
  ON_CALL(systemd, kill_unit).WillByDefault(Invoke([&](const std::string& u, int signo) {
    if (!state_at_kill) state_at_kill = state_on_disk("r1");
    if (signo == SIGTERM || signo == SIGKILL) stop(u);
    return Result<void>();
  }));
  reap("r1");
  ASSERT_TRUE(state_at_lookup);
  EXPECT_EQ(*state_at_lookup, RunState::Running) << "the lookup was asked after the fence";
  ASSERT_TRUE(state_at_kill) << "nothing was signalled";
  EXPECT_EQ(*state_at_kill, RunState::Reaping) << "a signal was sent before the fence was durable";
}
