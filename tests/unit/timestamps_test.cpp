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

}  // namespace
}  // namespace nerve
