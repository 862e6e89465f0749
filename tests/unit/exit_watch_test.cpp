// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/exit_watch.h"

#include "doubles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace nerve;
using ::testing::_;
using ::testing::DoAll;
using ::testing::Return;
using ::testing::ReturnPointee;
using ::testing::SaveArg;

namespace {

constexpr int kHandle = 11;

class AnExitWatch : public ::testing::Test, protected test::World {
 protected:
  Record record = test::running_record_with_leaf();
  bool populated = true;
  std::function<void()> changed;
  std::vector<std::pair<std::string, unsigned>> ended;
  ExitWatch exits{cgroups, [this](const std::string& run, unsigned attempt) { ended.emplace_back(run, attempt); }};

  AnExitWatch() {
    record.attempt = 3;
    ON_CALL(cgroups, watch(record.leaf, _)).WillByDefault(DoAll(SaveArg<1>(&changed), Return(kHandle)));
    ON_CALL(cgroups, populated(record.leaf)).WillByDefault(ReturnPointee(&populated));
  }
};

}  // namespace

TEST_F(AnExitWatch, ReapsTheAttemptOnceWhenItsLeafEmpties) {
  exits.watch(record);
  EXPECT_TRUE(ended.empty());
  changed();  // a change that leaves processes
  EXPECT_TRUE(ended.empty());
  populated = false;
  EXPECT_CALL(cgroups, unwatch(kHandle));
  changed();
  changed();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0], std::make_pair(std::string("r1"), 3u));
  EXPECT_EQ(exits.watched(), 0u);
}

TEST_F(AnExitWatch, ReapsAtOnceWhenTheLeafIsEmptyAlready) {
  populated = false;
  exits.watch(record);
  EXPECT_EQ(ended.size(), 1u);
}

TEST_F(AnExitWatch, TakesAnUnreadableLeafAsNotEmpty) {
  EXPECT_CALL(cgroups, populated(record.leaf))
      .WillRepeatedly(Return(Result<bool>(Error{"nerve.Cgroup.Unreadable", "EIO"})));
  exits.watch(record);
  changed();
  EXPECT_TRUE(ended.empty());
}

TEST_F(AnExitWatch, WatchesNoRunWithoutALeafAndNoRunThatIsNotRunning) {
  EXPECT_CALL(cgroups, watch).Times(0);
  Record old = test::running_record("old");  // a record of before leaves
  exits.watch(old);
  record.state = RunState::Reaping;
  exits.watch(record);
  EXPECT_EQ(exits.watched(), 0u);
}

TEST_F(AnExitWatch, ForgetsAnUnwatchedRun) {
  exits.watch(record);
  EXPECT_CALL(cgroups, unwatch(kHandle));
  exits.unwatch("r1");
  populated = false;
  changed();
  EXPECT_TRUE(ended.empty());
}
