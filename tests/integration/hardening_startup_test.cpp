// SPDX-License-Identifier: LGPL-2.1-or-later
// How nerved starts. A second nerved started by
// mistake touches nothing; the bus name is owned before any run is reaped; the runs folder's mode is
// set only on a folder nerved made itself.
#include "hardening_support.h"
#include "backend_view.h"

#include "base/host.h"

#include <gmock/gmock.h>

#include <filesystem>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class HardeningStartup : public Hardening {};

// One nerved at a time: a second nerved reconciled the runs folder before it tried to own the bus
// name, so it could "clean" a launch the live instance was in the middle of. Here the live instance's
// launch is a record in state launching whose owner (this test) lives: the second instance must leave
// it alone, and exit non-zero because the name is taken.
TEST_F(HardeningStartup, ASecondNervedChangesNoRecordAndExits) {
  Record r = plausible_record("mid", boot_id());
  r.state = RunState::Launching;
  r.invocation_id.clear();
  r.cgroup.clear();
  r.cgroup_id = 0;
  r.owner.kind = OwnerKind::Process;  // this test: alive throughout
  r.owner.pid = ::getpid();
  r.owner.start_time = proc_start_time(::getpid()).value_or(0);
  std::string text = to_json_text(r);
  write_record_text("mid", text);

  std::string log2 = path("nerved2.log");
  int fd = ::open(log2.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  SpawnSpec spec = command({kNerved, "--runs-dir", runs_, "--verbose"});
  spec.stdout_fd = fd;
  spec.stderr_fd = fd;
  pid_t second = spawn(spec);
  ::close(fd);
  track(second, false);
  auto code = wait_child(second, 10'000ms);
  ASSERT_TRUE(code.has_value()) << "the second nerved is still running";
  EXPECT_NE(*code, 0);
  EXPECT_EQ(read_file(runs_ + "/mid/lifecycle.json").value_or(""), text)
      << "the second nerved changed a record of the live one:\n" << read_file(log2).value_or("");
  EXPECT_THAT(read_file(log2).value_or(""), HasSubstr("org.nerve.Lifecycle1"));
  EXPECT_TRUE(alive(nerved_pid_));
}

// Startup with a stalled manager: startup reaps ran inline before the bus name was owned. With the
// user manager stalled, every lookup waits for its timeout: nerved must still own its name and answer
// at once, and reap the runs once the manager resumes.
TEST_F(HardeningStartup, OwnsItsNameAndAnswersBeforeTheStartupReapsWithAStalledManager) {
  NERVE_NEEDS_USER_MANAGER();
  auto runs = run_ids("dead", 3);
  pid_t owner = start_owner("owner", runs);
  ASSERT_TRUE(await_state(runs, "running", 20'000ms));
  stop_nerved();
  ASSERT_EQ(::kill(owner, SIGKILL), 0);
  ASSERT_TRUE(wait_gone(owner, 5000ms));
  ASSERT_NO_FATAL_FAILURE(stall_manager());
  auto start = Clock::now();
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  auto ready_after = since(start);
  EXPECT_LT(ready_after, 2000ms) << "READY came only after the startup reaps";
  Timed list = timed_call("ListRuns", "", 2000ms);
  EXPECT_EQ(list.error, "") << list.message;
  EXPECT_LT(list.took, 50ms);
  std::printf("READY after %lld ms, then ListRuns answered in %lld ms\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(ready_after).count()),
              static_cast<long long>(list.took.count()));
  resume_manager();
  EXPECT_TRUE(await_state(runs, "reaped", 30'000ms)) << log();
  EXPECT_EQ(await_no_nerve_units(10'000ms), "");
}

// The runs folder's mode: --runs-dir was chmodded 0700 whatever it pointed at (here, through a
// symlink, a shared folder). nerved sets the mode only of a folder it creates.
TEST_F(HardeningStartup, DoesNotChmodAnExistingFolderItIsPointedAt) {
  stop_nerved();
  std::string shared = path("shared");
  ASSERT_EQ(::mkdir(shared.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0755), 0);
  std::string link = state_ + "/link";
  ASSERT_EQ(::symlink(shared.c_str(), link.c_str()), 0);
  runs_ = link;
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  struct stat st {};
  ASSERT_EQ(::stat(shared.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "nerved changed the mode of a folder it did not make";
  // A folder it makes is 0700.
  stop_nerved();
  runs_ = state_ + "/fresh";
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  ASSERT_EQ(::stat(runs_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

}  // namespace
}  // namespace nerve::itest
