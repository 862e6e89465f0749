// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved killed at each step of the reap of a run that has a child run (NERVE_FAULT=<step>, see
// lib/run/fault.h): the parent is fenced before anything of the tree is signalled, so the next
// nerved never adopts it as running; it finishes the reap of the whole tree by itself, and no
// process of either run is left.
#include "nerved_fixture.h"

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;

std::string step_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

class ANervedKilledDuringANestedReap : public NervedTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // Run "parent" (an escaper tree) and, started from inside it, run "child" (another escaper tree);
  // the pids of both trees by "parent:ROLE" and "child:ROLE", once every one of them proved it started.
  std::map<std::string, pid_t> launch_parent_and_child() {
    std::string parent_markers = path("parent-markers"), child_markers = path("child-markers");
    EXPECT_EQ(::mkdir(parent_markers.c_str(), 0700), 0);
    EXPECT_EQ(::mkdir(child_markers.c_str(), 0700), 0);
    std::string script = "'" + kNervectl + "' launch --grace " + kShortGraceArg + " child -- '" + kEscaper +
                         "' --markers '" + child_markers + "' & exec '" + kEscaper + "' --markers '" +
                         parent_markers + "'";
    ctl_background("parent", {"launch", "--grace", kShortGraceArg, "parent", "--", "sh", "-c", script});
    std::map<std::string, pid_t> pids;
    for (const auto& [run, dir] : {std::pair{"parent", parent_markers}, std::pair{"child", child_markers}}) {
      auto tree = await_markers(dir);
      EXPECT_EQ(tree.size(), 4u) << run;
      for (const auto& [role, pid] : tree) pids[std::string(run) + ":" + role] = pid;
    }
    EXPECT_EQ(record("child").parent, "parent");
    return pids;
  }
};

TEST_P(ANervedKilledDuringANestedReap, LeavesTheParentFencedAndTheNextNervedFinishesTheWholeTree) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"NERVE_FAULT", GetParam()}}));
  auto pids = launch_parent_and_child();
  ASSERT_FALSE(HasFailure());

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "parent"});
  EXPECT_EQ(reap.exit_code, 69) << "nerved died during the call: 'unreachable' is the documented code\n"
                                << reap.out << reap.err;
  ASSERT_EQ(await_nerved_exit(), 128 + SIGKILL) << "NERVE_FAULT=" << GetParam() << " did not kill nerved";
  EXPECT_EQ(to_string(record("parent").state), "reaping")
      << "the parent's fence must be on disk before anything of its tree is signalled";
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/parent/receipt.json"));

  // No further call: the start-up reconciliation alone must finish the tree.
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  for (const char* run : {"child", "parent"})
    ASSERT_TRUE(wait_for_file(runs_ + "/" + run + "/receipt.json")) << "no receipt for " << run << " after the restart";
  auto t0 = Clock::now();
  expect_all_gone_by(pids, t0, t0 + 5s, "the restarted nerved reconciled the tree");
  for (const char* run : {"child", "parent"}) {
    // A Reap of a final run answers its receipt, after whatever its slot held (the reconciliation).
    Output again = ctl({"reap", run});
    EXPECT_EQ(again.exit_code, 0) << run << ": " << again.out << again.err;
    Receipt r = receipt(run);
    EXPECT_THAT(to_string(r.outcome), ::testing::AnyOf("complete", "no_scope")) << run << ": " << r.error;
    EXPECT_EQ(to_string(record(run).state), "reaped") << run;
  }
  EXPECT_EQ(await_no_nerve_units(), "");
}

// In the order a nested reap passes them: the parent's fence; the child's fence; the child's stop
// (nerved dies during the child's grace); the child's receipt; before the parent's stop. after-stop
// and before-receipt are the first of the reap, the child's.
INSTANTIATE_TEST_SUITE_P(AtEachStep, ANervedKilledDuringANestedReap,
                         ::testing::Values("after-fence", "after-child-fence", "after-stop", "before-receipt",
                                           "after-child-receipt", "before-stop"),
                         step_name);

}  // namespace
}  // namespace nerve::itest
