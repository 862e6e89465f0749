// SPDX-License-Identifier: LGPL-2.1-or-later
// Pruning of finished runs: a reaped run older than keep_finished is forgotten; a younger one, a
// running one stay (a call in progress: Lifecycle::forget refuses it, test_lifecycle); passes repeat on the timer; keep 0 prunes nothing.
#include "base/timestamps.h"
#include "run/pruner.h"

#include "doubles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace nerve::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

class PrunerTest : public ::testing::Test, protected World {
 protected:
  Lifecycle lifecycle{deps};
  std::chrono::system_clock::time_point now = *parse_rfc3339("2026-11-30T12:00:00.000Z");

  void reaped(const std::string& run, const std::string& reaped_at) {
    Record r = running_record(run);
    r.state = RunState::Reaped;
    ASSERT_TRUE(store.save(r));
    Receipt receipt;
    receipt.run = run;
    receipt.attempt = 1;
    receipt.outcome = Outcome::Complete;
    receipt.reaped_at = reaped_at;
    ASSERT_TRUE(store.save_receipt(receipt));
  }
  bool exists(const std::string& run) { return store.load(run) && store.load(run)->has_value(); }
};

TEST(Rfc3339, ParsesNerveTimestampsAndRefusesOthers) {
  auto t = parse_rfc3339("1970-01-01T00:01:00.250Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->time_since_epoch(), 60250ms);
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:01Z")->time_since_epoch(), 1s);
  EXPECT_FALSE(parse_rfc3339(""));
  EXPECT_FALSE(parse_rfc3339("yesterday"));
  EXPECT_FALSE(parse_rfc3339("1970-01-01T00:00:01"));
}

TEST_F(PrunerTest, ForgetsOnlyReapedRunsOlderThanKeepFinished) {
  reaped("old", "2026-11-29T11:00:00.000Z");
  reaped("young", "2026-11-30T11:30:00.000Z");
  ASSERT_TRUE(store.save(running_record("running")));
  Pruner pruner(timers, store, lifecycle, std::chrono::hours(24));
  EXPECT_THAT(pruner.prune_once(now), ElementsAre("old"));
  EXPECT_FALSE(exists("old"));
  EXPECT_TRUE(exists("young"));
  EXPECT_TRUE(exists("running"));
}

TEST_F(PrunerTest, KeepZeroPrunesNothingAndStartsNoTimer) {
  reaped("old", "2000-01-01T00:00:00.000Z");
  Pruner pruner(timers, store, lifecycle, 0us);
  pruner.start();
  timers.advance(48h);
  EXPECT_TRUE(exists("old"));
}

TEST_F(PrunerTest, KeepInfinityPrunesNothingAndStartsNoTimer) {
  reaped("old", "2000-01-01T00:00:00.000Z");
  Pruner pruner(timers, store, lifecycle, Duration::infinity());
  pruner.start();
  timers.advance(48h);
  EXPECT_TRUE(exists("old"));
  EXPECT_THAT(pruner.prune_once(now), IsEmpty());
}

// A keep_finished longer than a nanosecond clock holds (20000 weeks, 2^63 us, 2^64-2 us) keeps every
// run: reaped_at + keep saturates at the end of the clock instead of wrapping into the past.
TEST_F(PrunerTest, AKeepPastTheEndOfTheClockKeepsEveryRun) {
  reaped("old", "2000-01-01T00:00:00.000Z");
  reaped("young", "2026-11-30T11:59:59.000Z");
  for (std::uint64_t keep : {std::uint64_t{20000} * 604800 * 1'000'000, std::uint64_t{1} << 63, UINT64_MAX - 1}) {
    Pruner pruner(timers, store, lifecycle, Duration::from_usec(keep));
    EXPECT_THAT(pruner.prune_once(now), IsEmpty()) << keep;
    pruner.start();
    timers.advance(2h);
  }
  EXPECT_TRUE(exists("old"));
  EXPECT_TRUE(exists("young"));
}

TEST_F(PrunerTest, KeepsARunUntilExactlyKeepFinishedHasPassed) {
  reaped("r", "2026-11-30T11:00:00.000Z");
  Pruner pruner(timers, store, lifecycle, 1h);
  EXPECT_THAT(pruner.prune_once(now - 1us), IsEmpty());
  EXPECT_THAT(pruner.prune_once(now), ElementsAre("r"));
}

TEST_F(PrunerTest, PassesRepeatOnTheTimer) {
  Pruner pruner(timers, store, lifecycle, 2s);
  pruner.start();
  reaped("later", "2000-01-01T00:00:00.000Z");  // finished long ago, appears after the first pass
  EXPECT_TRUE(exists("later"));
  timers.advance(3s);
  EXPECT_FALSE(exists("later"));
}

}  // namespace
}  // namespace nerve::test
