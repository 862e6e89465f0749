// SPDX-License-Identifier: LGPL-2.1-or-later
// The reap of a run with a child run: the parent's fence first, before anything of the tree is
// signalled; each child fenced before it is signalled; the parent stopped after its children.
#include "lifecycle_fixture.h"

#include "base/errors.h"

using namespace nerve;
using ::testing::Invoke;

namespace {

class ANestedReap : public test::LifecycleTest {
 protected:
  // "parent", then "child" contained from inside parent's scope (the fixture's caller is in the
  // scope of the last run it contained); the units by run.
  void SetUp() override {
    contained("parent");
    contained("child");
    ASSERT_EQ(test::load(store, "child").value().parent, "parent");
    for (const char* run : {"parent", "child"}) unit_of[test::load(store, run).value().unit] = run;
  }
  // At each signal or stop (in order): "RUN: parent STATE, child STATE" as the records on disk say.
  void watch_signals() {
    auto seen = [this](const std::string& unit) {
      signals.push_back(unit_of[unit] + ": parent " + to_string(state_on_disk("parent")) + ", child " +
                        to_string(state_on_disk("child")));
    };
    EXPECT_CALL(systemd, kill_unit).WillRepeatedly(Invoke([this, seen](const std::string& unit, int signo) {
      seen(unit);
      if (signo == SIGTERM || signo == SIGKILL) stop(unit);
      return Result<void>();
    }));
    EXPECT_CALL(systemd, stop_unit).WillRepeatedly(Invoke([this, seen](const std::string& unit, auto done) {
      seen(unit);
      stop(unit);
      done(Result<void>());
    }));
  }
  std::map<std::string, std::string> unit_of;
  std::vector<std::string> signals;
};

TEST_F(ANestedReap, FencesTheParentBeforeItSignalsTheChildAndStopsTheParentLast) {
  watch_signals();
  auto& r = reap("parent");
  ASSERT_TRUE(r.receipt) << (r.error ? r.error->message : "no answer");
  ASSERT_FALSE(signals.empty());
  EXPECT_EQ(signals.front(), "child: parent reaping, child reaping");
  EXPECT_EQ(signals.back().rfind("parent: parent reaping", 0), 0u) << signals.back();
  for (const auto& s : signals) {
    if (s.rfind("parent:", 0) == 0) {
      EXPECT_EQ(s, "parent: parent reaping, child reaped") << "the child is reaped first";
    }
  }
  EXPECT_EQ(state_on_disk("parent"), RunState::Reaped);
  EXPECT_EQ(state_on_disk("child"), RunState::Reaped);
}

TEST_F(ANestedReap, RefusesANewChildOnceTheParentIsFenced) {
  stop_empties = false;  // the child's reap waits: the parent stays fenced, not yet stopped
  reap("parent");
  ASSERT_EQ(state_on_disk("parent"), RunState::Reaping);
  leader_cgroup = test::load(store, "parent").value().cgroup;
  auto& late = contain("late");
  ASSERT_TRUE(late.error) << "a run started inside a fenced parent";
  EXPECT_EQ(late.error->name, error::RunFinished);
}

}  // namespace
