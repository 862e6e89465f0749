// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"

#include <gtest/gtest.h>

namespace nerve {
namespace {

TEST(Timestamps, ReadTheTimesNervedWritesAsSeconds) {
  auto t = parse_rfc3339("2026-11-30T05:51:28.123Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*t), 1796017888);
  EXPECT_FALSE(parse_rfc3339("yesterday").has_value());
  EXPECT_FALSE(parse_rfc3339("").has_value());
}

// A record is text from disk: a time in it may be any year. system_clock counts nanoseconds in 64
// bits (1677 to 2262), so a year outside that overflowed the conversion (found by fuzz_record with
// "7450-11-02T09:15:01.204Z"). Such a time is no time nerve wrote: it reads as none.
TEST(Timestamps, ATimeSystemClockCannotHoldReadsAsNoneNotAnOverflow) {
  // Before the epoch nerve writes nothing, and an age "now - then" must fit the clock too.
  for (const char* text : {"7450-11-02T09:15:01.204Z", "9999-12-31T23:59:59.999Z", "2263-01-01T00:00:00Z",
                           "1600-01-01T00:00:00Z", "1969-12-31T23:59:59Z"})
    EXPECT_FALSE(parse_rfc3339(text).has_value()) << text;
  for (const char* text : {"1970-01-01T00:00:00Z", "2261-12-31T23:59:59.999Z"})
    EXPECT_TRUE(parse_rfc3339(text).has_value()) << text;
}

TEST(Timestamps, AFieldOutOfItsRangeIsNotNormalizedIntoAnotherDay) {
  for (const char* text : {"2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-00-10T00:00:00Z",
                           "2026-01-10T24:00:00Z", "2026-01-10T12:60:00Z", "2026--1-10T12:00:00Z"})
    EXPECT_FALSE(parse_rfc3339(text).has_value()) << text;
  EXPECT_TRUE(parse_rfc3339("2024-02-29T12:00:00Z").has_value());
}

// rfc3339(at) writes what parse_rfc3339 reads, so a test can make a record of any age from now.
TEST(Timestamps, ATimeWrittenReadsBackToTheMillisecond) {
  using namespace std::chrono;
  auto t = *parse_rfc3339("2026-11-30T05:51:28.123Z");
  EXPECT_EQ(rfc3339(t), "2026-11-30T05:51:28.123Z");
  EXPECT_EQ(rfc3339(t + microseconds(999)), "2026-11-30T05:51:28.123Z") << "truncated, as now_rfc3339";
  EXPECT_EQ(rfc3339(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
  auto now = system_clock::now();
  auto back = parse_rfc3339(rfc3339(now - hours(24 * 8)));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(floor<milliseconds>(*back), floor<milliseconds>(now - hours(24 * 8)));
}

}  // namespace
}  // namespace nerve
