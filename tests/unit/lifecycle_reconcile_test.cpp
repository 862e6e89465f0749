// SPDX-License-Identifier: LGPL-2.1-or-later
// Lifecycle acting on its own: reaps when an owner goes, retries of pending reaps, reconciliation at
// startup, and forget.
#include "lifecycle_fixture.h"

#include "base/errors.h"


#include <filesystem>
#include <fstream>

using namespace nerve;
using namespace std::chrono_literals;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::IsEmpty;
using ::testing::Return;

namespace {

class ALifecycleOnItsOwn : public test::LifecycleTest {
 protected:
  std::vector<ReconcileLine> reconcile() {
    std::optional<std::vector<ReconcileLine>> lines;
    lifecycle.reconcile([&](auto l) { lines = std::move(l); });
    timers.advance(Clock::duration::zero());  // the runs are looked at on the loop's next turns
    EXPECT_TRUE(lines) << "reconcile has not finished";
    return lines.value_or(std::vector<ReconcileLine>{});
  }
  // A record as a previous nerved left it, with a scope that is still there.
  Record left_running(const std::string& run) {
    Record r = test::running_record(run);
    r.owner = {OwnerKind::Process, 99, 12345, ""};
    test::save(store, r);
    units[r.unit] = *test::found(r);
    populated[r.cgroup] = true;
    cgroup_ids[r.cgroup] = r.cgroup_id;
    return r;
  }
};

auto Line(const std::string& run, const std::string& action) {
  return ::testing::AllOf(Field(&ReconcileLine::run, run),
                          ::testing::ResultOf([](const ReconcileLine& l) { return to_string(l.action); }, action));
}

}  // namespace

TEST_F(ALifecycleOnItsOwn, ReapsARunWhenItsOwnerIsGone) {
  std::function<void()> owner_gone;
  EXPECT_CALL(owners, watch("r1", _, _)).WillOnce(Invoke([&](auto&, auto&, auto gone) { owner_gone = gone; }));
  const std::string unit = contained("r1").reply->unit;
  ASSERT_TRUE(owner_gone);
  owner_gone();
  EXPECT_THAT(events, ElementsAre("start " + unit, "stop " + unit));
  EXPECT_EQ(state_on_disk("r1"), RunState::Reaped);
}

TEST_F(ALifecycleOnItsOwn, DoesNotWatchTheOwnerOfARunLaunchedToBeKept) {
  EXPECT_CALL(owners, watch).Times(0);
  contained("r1", true);
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
}

TEST_F(ALifecycleOnItsOwn, DoesNotWatchAnUnknownOwner) {
  EXPECT_CALL(owners, watch).Times(0);
  auto req = request("r1");
  req.owner = {OwnerKind::None, 0, 0, ""};
  lifecycle.contain(req, [](Result<ContainReply>) {});
  start_job_ends();
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
}

TEST_F(ALifecycleOnItsOwn, KeepsAPendingReapFencedAndRetriesItASecondLater) {
  contained("r1");
  stop_empties = false;
  auto& result = reap("r1");
  timers.advance(kGrace + kKillWait);
  ASSERT_TRUE(result.receipt);
  EXPECT_EQ(result.receipt->outcome, Outcome::PendingRetry);
  EXPECT_EQ(state_on_disk("r1"), RunState::Reaping);
  stop_empties = true;
  timers.advance(kRetryFirst);
  EXPECT_EQ(test::load_receipt(store, "r1")->outcome, Outcome::Complete);
  EXPECT_EQ(state_on_disk("r1"), RunState::Reaped);
}

TEST_F(ALifecycleOnItsOwn, ReconcilesARunningRecordWhoseOwnerIsGoneByReapingIt) {
  const Record r = left_running("r1");
  EXPECT_CALL(owners, alive(Field(&Owner::pid, 99))).WillRepeatedly(Return(false));
  EXPECT_THAT(reconcile(), ElementsAre(Line("r1", "reaped")));
  EXPECT_THAT(events, ElementsAre("stop " + r.unit));
  EXPECT_EQ(state_on_disk("r1"), RunState::Reaped);
}

TEST_F(ALifecycleOnItsOwn, AdoptsARunningRecordWhoseOwnerIsAlive) {
  left_running("r1");
  EXPECT_CALL(owners, alive(Field(&Owner::pid, 99))).WillRepeatedly(Return(true));
  EXPECT_CALL(owners, watch("r1", Field(&Owner::pid, 99), _));
  EXPECT_THAT(reconcile(), ElementsAre(Line("r1", "adopted")));
  EXPECT_THAT(events, IsEmpty());
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
}

// nerved died after the running record and before its reply: the caller never exec'd. Its leaf is
// empty (the caller exited on the lost reply), which is not a command that ended: the attempt is
// cleaned, not reaped (no final receipt, no "exited"), and the run can be launched again.
TEST_F(ALifecycleOnItsOwn, CleansARunningRecordThatWasNeverReleasedAndLetsTheRunBeLaunchedAgain) {
  Record r = test::running_record("r1");
  r.owner = {OwnerKind::Process, 99, 12345, ""};
  r.released = false;
  r.leaf = leaf_of(r.cgroup);
  r.leaf_id = r.cgroup_id + 1;
  test::save(store, r);
  units[r.unit] = *test::found(r);
  populated[r.cgroup] = true;
  populated[r.leaf] = false;
  cgroup_ids[r.cgroup] = r.cgroup_id;
  cgroup_ids[r.leaf] = r.leaf_id;
  ON_CALL(cgroups, kill_if).WillByDefault(Invoke([&](const std::string& cgroup, std::uint64_t) {
    populated[cgroup] = false;
    return true;
  }));
  EXPECT_CALL(owners, alive(Field(&Owner::pid, 99))).WillRepeatedly(Return(true));
  EXPECT_CALL(owners, watch("r1", _, _)).Times(0);
  auto lines = reconcile();
  ASSERT_THAT(lines, ElementsAre(Line("r1", "cleaned")));
  EXPECT_THAT(lines[0].detail, HasSubstr("never started its command"));
  EXPECT_EQ(state_on_disk("r1"), RunState::Failed);
  EXPECT_FALSE(test::load_receipt(store, "r1")) << "a cleaned attempt has no final receipt";

  EXPECT_CALL(owners, watch("r1", _, _));
  auto& again = contained("r1");
  ASSERT_TRUE(again.reply) << (again.error ? again.error->message : "");
  EXPECT_EQ(again.reply->attempt, r.attempt + 1);
}

// A long pass never holds the loop: the runs are looked at a few per turn, and not
// before the call returns (so nerved answers calls first), each run's slot taken at once.
TEST_F(ALifecycleOnItsOwn, LooksAtAFewRunsPerTurnOfTheLoopWithEveryRunsSlotTakenAtOnce) {
  for (int i = 0; i < 40; ++i) left_running("r" + std::to_string(i));
  int looked_at = 0;
  ON_CALL(owners, alive).WillByDefault(Invoke([&](const Owner&) {
    ++looked_at;
    return true;
  }));
  std::optional<std::vector<ReconcileLine>> lines;
  lifecycle.reconcile([&](auto l) { lines = std::move(l); });
  EXPECT_EQ(looked_at, 0) << "runs were looked at before the loop could serve a call";
  int after_first_turn = -1;
  timers.add_timer(Clock::duration::zero(), [&] { after_first_turn = looked_at; });
  timers.advance(Clock::duration::zero());
  EXPECT_GT(after_first_turn, 0);
  EXPECT_LT(after_first_turn, 40);
  ASSERT_TRUE(lines);
  EXPECT_EQ(lines->size(), 40u);
}

TEST_F(ALifecycleOnItsOwn, ReapsARecordOfAnotherBootWithoutAskingSystemdEvenIfItsOwnerSeemsAlive) {
  Record r = left_running("r1");
  r.boot_id = "ffffffffffffffffffffffffffffffff";
  test::save(store, r);
  ON_CALL(owners, alive).WillByDefault(Return(true));
  EXPECT_CALL(systemd, lookup).Times(0);
  EXPECT_CALL(systemd, kill_unit).Times(0);
  EXPECT_THAT(reconcile(), ElementsAre(Line("r1", "reaped")));
  EXPECT_EQ(test::load_receipt(store, "r1")->outcome, Outcome::NoScope);
}

TEST_F(ALifecycleOnItsOwn, LeavesAReapedRunAsItIs) {
  contained("r1");
  reap("r1");
  events.clear();
  EXPECT_THAT(reconcile(), ElementsAre(Line("r1", "final")));
  EXPECT_THAT(events, IsEmpty());
}

TEST_F(ALifecycleOnItsOwn, QuarantinesAnUnreadableRecordWhileReconciling) {
  std::filesystem::create_directory(store.run_path("r1"));
  std::ofstream(store.run_path("r1") + "/lifecycle.json") << "not json";
  EXPECT_THAT(reconcile(), ElementsAre(Line("r1", "quarantined")));
  EXPECT_EQ(test::load(store, "r1"), std::nullopt);
}

TEST_F(ALifecycleOnItsOwn, ForgetsAReapedRunSoItsIdCanBeUsedAgain) {
  contained("r1");
  reap("r1");
  ASSERT_TRUE(lifecycle.forget("r1"));
  EXPECT_THAT(store.runs().value(), IsEmpty());
  EXPECT_EQ(contained("r1").reply->attempt, 1u);
}

TEST_F(ALifecycleOnItsOwn, RefusesToForgetARunThatIsNotReaped) {
  contained("r1");
  auto forgotten = lifecycle.forget("r1");
  ASSERT_FALSE(forgotten);
  EXPECT_EQ(forgotten.error().name, error::RunNotFinished);
  EXPECT_EQ(state_on_disk("r1"), RunState::Running);
}

TEST(AReconcileAction, IsToldUnderTheWordOfTheBusApi) {
  const std::pair<ReconcileAction, const char*> words[] = {
      {ReconcileAction::Reaped, "reaped"},   {ReconcileAction::Adopted, "adopted"},
      {ReconcileAction::Kept, "kept"},       {ReconcileAction::Cleaned, "cleaned"},
      {ReconcileAction::Final, "final"},     {ReconcileAction::Quarantined, "quarantined"},
      {ReconcileAction::Skipped, "skipped"},
  };
  EXPECT_EQ(string_table_rows<ReconcileAction>().size(), std::size(words));
  for (const auto& [action, word] : words) {
    EXPECT_EQ(to_string(action), word);
    EXPECT_EQ(from_string<ReconcileAction>(word), action);
  }
}
