// SPDX-License-Identifier: LGPL-2.1-or-later
// Lifecycle::command_starting/command_started: a Launch'd command between its release and the news
// that it exec'd. Its run/ leaf emptying then is not "its processes have all ended": a failed exec
// empties it too, and must stay a failed start that may be launched again, never a run reaped as
// exited. The exit watch's news is kept until the launcher's news says which it was.
#include "lifecycle_fixture.h"

using namespace nerve;
using ::testing::Contains;
using ::testing::Not;
using ::testing::Return;

namespace {

constexpr std::uint64_t kLeafId = 77;

struct WithHolders {
  ::testing::NiceMock<test::MockHolders> holders;
};

// Scopes with a holder, so each run gets its run/ leaf and the exit watch watches it.
class ALifecycleWithLeaves : private WithHolders, public test::LifecycleTest {
 protected:
  std::string leaf;

  ALifecycleWithLeaves() : test::LifecycleTest(&holders) {
    ON_CALL(cgroups, member_of(test::kHolderPid)).WillByDefault([this] { return leader_cgroup; });
    ON_CALL(cgroups, make_leaves).WillByDefault([this](const std::string& cgroup, auto, auto, auto) {
      leaf = cgroup + "/run";
      populated[leaf] = true;
      cgroup_ids[leaf] = kLeafId;
      return Result<Leaves>(Leaves{kLeafId, "", ""});
    });
  }

  // The command's processes are gone from run/: the leaf's cgroup.events says so.
  void leaf_empties() {
    ASSERT_FALSE(leaf.empty()) << "no leaf was made";
    ASSERT_TRUE(watchers.count(leaf)) << "run/ is not watched";
    populated[leaf] = false;
    watchers[leaf]();
  }

  std::string unit() const { return starts.at(0).first.unit; }
};

}  // namespace

TEST_F(ALifecycleWithLeaves, ReapsARunWhoseLeafEmptiesWhenNoCommandIsStarting) {
  contained("r1");
  leaf_empties();
  EXPECT_THAT(events, Contains("stop " + unit()));
  EXPECT_EQ(state_on_disk("r1"), RunState::Reaped);
}

TEST_F(ALifecycleWithLeaves, DoesNotReapARunWhoseLeafEmptiesWhileItsCommandIsStarting) {
  contained("r1");
  lifecycle.command_starting("r1");
  leaf_empties();
  EXPECT_THAT(events, Not(Contains("stop " + unit())));
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
}

TEST_F(ALifecycleWithLeaves, LeavesAFailedStartToTheLauncherEvenWhenItsLeafEmptied) {
  contained("r1");
  lifecycle.command_starting("r1");
  leaf_empties();
  lifecycle.command_started("r1", false);  // the exec failed: the launcher abandons the attempt
  EXPECT_THAT(events, Not(Contains("stop " + unit())));
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
}

TEST_F(ALifecycleWithLeaves, ReapsAsExitedOnceTheCommandStartedAndItsLeafHadEmptied) {
  contained("r1");
  lifecycle.command_starting("r1");
  leaf_empties();
  lifecycle.command_started("r1", true);  // it exec'd, and ended before the launcher heard of it
  EXPECT_THAT(events, Contains("stop " + unit()));
  EXPECT_EQ(state_on_disk("r1"), RunState::Reaped);
  auto receipt = test::load_receipt(store, "r1");
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->cause, Cause::Exited);
}

TEST_F(ALifecycleWithLeaves, DoesNotReapACommandThatStartedWhileItsLeafIsPopulated) {
  contained("r1");
  lifecycle.command_starting("r1");
  lifecycle.command_started("r1", true);
  EXPECT_THAT(events, Not(Contains("stop " + unit())));
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
  leaf_empties();  // and once it ends, the exit watch reaps it as before
  EXPECT_THAT(events, Contains("stop " + unit()));
}
