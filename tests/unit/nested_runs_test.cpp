// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/nested_runs.h"

#include "doubles.h"
#include "base/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace nerve;
using ::testing::Return;

namespace {

constexpr pid_t kCaller = 2222;

class NestedRunsByAncestry : public ::testing::Test, protected test::World {
 protected:
  Record parent = test::running_record_with_leaf("p");
  NestedRuns nested{deps};

  NestedRunsByAncestry() { test::save(store, parent); }
  Result<std::string> caller_in(const std::string& cgroup, const std::string& run = "q") {
    EXPECT_CALL(cgroups, member_of(kCaller)).WillOnce(Return(cgroup));
    return nested.adopt(kCaller, run);
  }
};

}  // namespace

TEST_F(NestedRunsByAncestry, FindsTheRunOfACallerInItsScopeItsLeafOrAnyCgroupBelow) {
  for (const std::string& at : {parent.cgroup, parent.leaf, parent.leaf + "/moved", parent.leaf + "/a/b/c",
                                parent.cgroup + "/elsewhere"}) {
    auto found = caller_in(at);
    ASSERT_TRUE(found) << at;
    EXPECT_EQ(*found, "p") << at;
  }
  EXPECT_THAT(nested.take_children("p"), ::testing::ElementsAre("q"));
}

TEST_F(NestedRunsByAncestry, FindsNoParentOutsideEveryRunOrInAScopeThatIsNotTheRecordedOne) {
  EXPECT_EQ(*caller_in("/user.slice/user-1000.slice/session-1.scope"), "");
  EXPECT_EQ(*caller_in("/user.slice/user-1000.slice/user@1000.service/app.slice/" +
                       scope_unit_name("p", "ffffffffffffffff") + "/run"),
            "");
  EXPECT_TRUE(nested.take_children("p").empty());
}

TEST_F(NestedRunsByAncestry, RefusesAChildOfAFinalRunFromDeepBelowItsScope) {
  parent.state = RunState::Reaped;
  test::save(store, parent);
  auto found = caller_in(parent.leaf + "/sub");
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().name, error::RunFinished);
}
