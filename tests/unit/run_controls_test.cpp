// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's timeout is one control: RuntimeMaxSec= among the properties and timeout_usec (--timeout).
#include "base/errors.h"
#include "base/run_controls.h"

#include <gtest/gtest.h>

using namespace nerve;

namespace {
RunControls controls(const std::vector<std::pair<std::string, std::string>>& pairs, std::uint64_t timeout_usec = 0) {
  auto c = parse_property_pairs(pairs);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  RunControls out = c.ok() ? *c : RunControls{};
  out.timeout = Duration::from_usec(timeout_usec);
  return out;
}
bool sends(const RunControls& c, const std::string& name) {
  for (const auto& p : c.unit_properties)
    if (p.name == name) return true;
  return false;
}
}  // namespace

TEST(ARuntimeMaxSec, BecomesTheRunsTimeoutAndIsNotSentToSystemd) {
  RunControls c = controls({{"TasksMax", "5"}, {"RuntimeMaxSec", "90"}});
  ASSERT_TRUE(take_runtime_max(c).ok());
  EXPECT_EQ(c.timeout.usec(), 90'000'000u);
  EXPECT_FALSE(sends(c, "RuntimeMaxUSec"));
  EXPECT_TRUE(sends(c, "TasksMax"));
  EXPECT_EQ(c.properties, (std::vector<std::string>{"TasksMax=5", "RuntimeMaxSec=90"})) << "kept as given";
}

TEST(ARuntimeMaxSec, OfInfinityIsNoTimeout) {
  RunControls c = controls({{"RuntimeMaxSec", "infinity"}});
  ASSERT_TRUE(take_runtime_max(c).ok());
  EXPECT_EQ(c.timeout.usec(), 0u);
  EXPECT_FALSE(sends(c, "RuntimeMaxUSec"));
}

TEST(ARuntimeMaxSec, GivenTwiceCountsTheLastOne) {
  RunControls c = controls({{"RuntimeMaxSec", "10"}, {"RuntimeMaxSec", "20"}});
  ASSERT_TRUE(take_runtime_max(c).ok());
  EXPECT_EQ(c.timeout.usec(), 20'000'000u);
}

TEST(ARuntimeMaxSec, EqualToTheTimeoutIsOneTimeout) {
  RunControls c = controls({{"RuntimeMaxSec", "1min"}}, 60'000'000);
  ASSERT_TRUE(take_runtime_max(c).ok());
  EXPECT_EQ(c.timeout.usec(), 60'000'000u);
  EXPECT_FALSE(sends(c, "RuntimeMaxUSec"));
}

TEST(ARuntimeMaxSec, OtherThanTheTimeoutIsRefusedQuotingBoth) {
  RunControls c = controls({{"RuntimeMaxSec", "3"}}, 2'000'000);
  auto r = take_runtime_max(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().name, error::InvalidProperty);
  EXPECT_NE(r.error().message.find("'RuntimeMaxSec=3'"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("'2000000'"), std::string::npos) << r.error().message;
}

TEST(ATimeoutAlone, IsLeftAsItIs) {
  RunControls c = controls({{"TasksMax", "5"}}, 5'000'000);
  ASSERT_TRUE(take_runtime_max(c).ok());
  EXPECT_EQ(c.timeout.usec(), 5'000'000u);
  EXPECT_EQ(c.unit_properties.size(), 1u);
}
