// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved killed at each step of a launch and of a reap (NERVE_FAULT=<step> makes it SIGKILL itself
// there, see lib/run/fault.h): the command never runs unless its launch completed, no process of a run
// outlives the reap, and the next nerved finishes what the dead one started.
#include "nerved_fixture.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string step_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

class ANervedKilledDuringALaunch : public NervedTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ANervedKilledDuringALaunch, NeverStartsTheCommandAndTheRunCanBeLaunchedAgain) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"NERVE_FAULT", GetParam()}}));
  std::string touched = path("touched");
  Output o = ctl({"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--touch", touched});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("the command was not started"));
  EXPECT_EQ(await_nerved_exit(), 128 + SIGKILL) << "NERVE_FAULT=" << GetParam() << " did not kill nerved";
  EXPECT_FALSE(std::filesystem::exists(touched)) << "the command ran although its launch never completed";
  Record first = record("r1");

  ASSERT_NO_FATAL_FAILURE(start_nerved());
  pid_t launcher =
      ctl_background("relaunch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("run.pid")});
  ASSERT_EQ(await_pidfile(path("run.pid")), launcher);
  Record second = record("r1");
  EXPECT_EQ(second.attempt, first.attempt + 1);
  EXPECT_NE(second.unit, first.unit);
  EXPECT_EQ(to_string(second.state), "running");
  // The dead attempt's scope held only nervectl, which exited: nothing of it may be left.
  EXPECT_TRUE(wait_folder_gone(cgroup_folder("/" + first.slice + "/" + first.unit), 2000ms)) << first.unit;

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_EQ(to_string(receipt("r1").outcome), "complete") << receipt("r1").error;
  EXPECT_EQ(receipt("r1").attempt, second.attempt);
  EXPECT_FALSE(alive(launcher));
  // Not only the cgroups: no unit of either attempt may be left, active or not.
  EXPECT_EQ(await_no_nerve_units(), "");
}

INSTANTIATE_TEST_SUITE_P(AtEachStep, ANervedKilledDuringALaunch,
                         ::testing::Values("after-intent", "after-start-request", "after-start", "before-running"),
                         step_name);

class ANervedKilledDuringAReap : public NervedTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ANervedKilledDuringAReap, LeavesTheRunFencedAndTheNextNervedFinishesTheReap) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"NERVE_FAULT", GetParam()}}));
  auto pids = launch_escaper(path("markers"));
  ASSERT_FALSE(HasFailure());

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 69) << "nerved died during the call: 'unreachable' is the documented code\n"
                                << reap.out << reap.err;
  EXPECT_EQ(await_nerved_exit(), 128 + SIGKILL) << "NERVE_FAULT=" << GetParam() << " did not kill nerved";
  EXPECT_EQ(to_string(record("r1").state), "reaping") << "the fence must be on disk before the scope is stopped";
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/r1/receipt.json"));

  ASSERT_NO_FATAL_FAILURE(start_nerved());
  Output again = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  Receipt r = receipt("r1");
  EXPECT_THAT(to_string(r.outcome), ::testing::AnyOf("complete", "no_scope")) << r.error;
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
}

INSTANTIATE_TEST_SUITE_P(AtEachStep, ANervedKilledDuringAReap,
                         ::testing::Values("after-fence", "before-stop", "after-stop", "before-receipt"),
                         step_name);

// Between the final receipt (durable) and the "reaped" record (lazy, docs/records.md "Which writes
// wait for the disk"): the receipt stands, and the next nerved closes the record without reaping again.
TEST_F(NervedTest, KilledAfterTheFinalReceiptClosesTheRecordWithThatReceiptAtTheNextStart) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"NERVE_FAULT", "after-receipt"}}));
  auto pids = launch_escaper(path("markers"));
  ASSERT_FALSE(HasFailure());

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 69) << reap.out << reap.err;
  EXPECT_EQ(await_nerved_exit(), 128 + SIGKILL) << "NERVE_FAULT=after-receipt did not kill nerved";
  EXPECT_EQ(to_string(record("r1").state), "reaping");
  Receipt first = receipt("r1");
  EXPECT_EQ(to_string(first.outcome), "complete") << first.error;
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);

  ASSERT_NO_FATAL_FAILURE(start_nerved());
  Output again = ctl({"reap", "r1"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  Receipt after = receipt("r1");
  EXPECT_EQ(after.reaped_at, first.reaped_at) << "the run was reaped a second time";
  EXPECT_EQ(to_string(after.outcome), "complete");
}

}  // namespace
}  // namespace nerve::itest
