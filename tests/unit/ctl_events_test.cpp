// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl events`: run ids read back from run object paths (the rest runs against nerved in
// tests/integration/ctl_conventions_test.cpp).
#include "ctl/full/events.h"

#include <gtest/gtest.h>

namespace nerve::ctl {
namespace {

TEST(NervectlEventPaths, ReadsTheRunIdOfARunObjectPath) {
  EXPECT_EQ(run_of_path("/org/nerve/Lifecycle1/run/r1"), "r1");
  EXPECT_EQ(run_of_path("/org/nerve/Lifecycle1/run/build_2e42"), "build.42");
  EXPECT_EQ(run_of_path("/org/nerve/Lifecycle1/run/ci_3ajob_5f7_2dx"), "ci:job_7-x");
  EXPECT_EQ(run_of_path("/org/nerve/Lifecycle1/run/_31abc"), "1abc") << "a leading digit, as sd_bus_path_encode escapes it";
}

TEST(NervectlEventPaths, GivesNoRunIdForOtherPathsAndKeepsAStrayUnderscore) {
  EXPECT_EQ(run_of_path("/org/nerve/Lifecycle1"), "");
  EXPECT_EQ(run_of_path("/org/freedesktop/systemd1"), "");
  EXPECT_EQ(run_of_path("/org/nerve/Lifecycle1/run/a_zz"), "a_zz") << "not two hex digits: kept as it is";
  EXPECT_EQ(run_of_path("/org/nerve/Lifecycle1/run/a_4"), "a_4");
}

}  // namespace
}  // namespace nerve::ctl
