// SPDX-License-Identifier: LGPL-2.1-or-later
// LiveLookup (lib/system/live_lookup.h): GetRun's lookup never waits on systemd longer than its budget, not
// at all once systemd is known to be late, and never piles lookups up on a stalled manager.
#include "doubles.h"
#include "system/live_lookup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace nerve;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::NiceMock;
using ::testing::Return;

namespace {

constexpr const char* kUnit = "nerve-r1-0123456789abcdef.scope";

class ALiveLookup : public ::testing::Test {
 protected:
  NiceMock<test::MockSystemd> systemd;
  test::ManualTimers timers;
  LiveLookup lookup{systemd, timers, 20ms};
  std::vector<Result<UnitState>> answers;

  void ask() {
    lookup.ask(kUnit, [this](Result<UnitState> r) { answers.push_back(std::move(r)); });
  }
  // A stalled manager: every lookup waits in systemd.stalled_lookups until answered by hand.
  void stall() { systemd.stall_lookups_of.insert(kUnit); }
  // The first lookup to a stalled manager misses its budget: systemd is late from then on.
  void miss_once() {
    stall();
    ask();
    timers.advance(20ms);
    ASSERT_EQ(answers.size(), 1u);
    ASSERT_TRUE(lookup.late());
  }
  static std::string error_name(const Result<UnitState>& r) { return r ? "" : r.error().name; }
};

TEST_F(ALiveLookup, AnswersWhatSystemdSaysWhenItAnswersWithinTheBudget) {
  UnitState active{test::kInvocationId, "active", "/app.slice/" + std::string(kUnit), ""};
  ON_CALL(systemd, lookup).WillByDefault(Return(Result<UnitState>(active)));
  ask();
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_TRUE(answers[0]);
  EXPECT_EQ(answers[0]->active_state, "active");
  EXPECT_FALSE(lookup.late());
  EXPECT_EQ(timers.pending(), 0u) << "the budget's timer is cancelled";
}

TEST_F(ALiveLookup, WaitsAtMostItsBudgetThenAnswersLateAndDropsSystemdsLateAnswer) {
  stall();
  ask();
  timers.advance(19ms);
  EXPECT_TRUE(answers.empty());
  timers.advance(1ms);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(error_name(answers[0]), systemd_error::Late);
  EXPECT_EQ(answers[0].error().message, "systemd did not answer within 20 ms");
  ASSERT_EQ(systemd.stalled_lookups.size(), 1u);
  systemd.stalled_lookups[0].second(UnitState{});
  EXPECT_EQ(answers.size(), 1u) << "the caller had its answer";
  EXPECT_FALSE(lookup.late()) << "systemd answered, even late: it is on time again";
}

TEST_F(ALiveLookup, WhileSystemdIsLateAnswersAtOnceAndSendsNoMoreLookups) {
  miss_once();
  timers.advance(1500ms);
  for (int i = 0; i < 5; ++i) ask();
  ASSERT_EQ(answers.size(), 6u) << "answered at once, without the clock moving";
  EXPECT_EQ(error_name(answers[5]), systemd_error::Late);
  EXPECT_THAT(answers[5].error().message, HasSubstr("no lookup answered for 1520 ms"));
  EXPECT_EQ(systemd.stalled_lookups.size(), 1u) << "the late lookup is the only one in flight";
}

TEST_F(ALiveLookup, SendsOneProbeWhenTheLateLookupFailedAndNoneIsInFlight) {
  miss_once();
  systemd.stalled_lookups[0].second(test::query_failed("org.freedesktop.DBus.Error.Timeout"));
  EXPECT_TRUE(lookup.late()) << "an error is not an answer about the unit";
  EXPECT_EQ(lookup.in_flight(), 0);
  ask();
  ask();
  EXPECT_EQ(answers.size(), 3u) << "still answered at once";
  EXPECT_EQ(systemd.stalled_lookups.size(), 2u) << "one probe, not one lookup per query";
  systemd.stalled_lookups[1].second(test::not_loaded());
  EXPECT_FALSE(lookup.late()) << "NoSuchUnit is an answer: systemd is back";
  ask();
  EXPECT_EQ(answers.size(), 3u) << "on time again: the next lookup is waited on (within the budget)";
  timers.advance(20ms);
  EXPECT_EQ(answers.size(), 4u);
}

TEST_F(ALiveLookup, PassesOnAnErrorWithinTheBudgetWithoutTakingSystemdForLate) {
  ON_CALL(systemd, lookup).WillByDefault(Return(test::query_failed("org.freedesktop.DBus.Error.ServiceUnknown")));
  ask();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(error_name(answers[0]), "org.freedesktop.DBus.Error.ServiceUnknown");
  EXPECT_FALSE(lookup.late());
}

}  // namespace
