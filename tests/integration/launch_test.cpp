// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl launch`: the command runs in place (same pid, same parent) only after its run is
// contained and recorded, and it never runs when nerved cannot contain it.
#include "nerved_fixture.h"

#include "base/host.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <gmock/gmock.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class ALaunch : public NervedTest {};

TEST_F(ALaunch, ExecsTheCommandInPlaceOnlyAfterItsRecordSaysRunning) {
  std::string pid_file = path("pid"), seen = path("record-seen.json"), ready = path("ready.pid");
  std::string script = "echo $$ > '" + pid_file + "'; cat '" + runs_ + "/r1/lifecycle.json' > '" + seen +
                       "'; exec '" + kEscaper + "' --pidfile '" + ready + "'";
  pid_t launcher = ctl_background("launch", {"launch", "r1", "--", "sh", "-c", script});
  pid_t escaper = await_pidfile(ready);
  ASSERT_GT(escaper, 0);

  // One process all along: nervectl became sh, which became the escaper.
  EXPECT_EQ(read_pid_file(pid_file), launcher);
  EXPECT_EQ(escaper, launcher);
  EXPECT_EQ(proc_parent(launcher).value_or(-1), ::getpid()) << "the command must stay a child of its launcher";

  // The record as the command saw it when it started: complete, and naming the real unit.
  auto text = read_file(seen);
  ASSERT_TRUE(text && !text->empty()) << "the command could not read its run's lifecycle.json";
  Record rec = parse_record(*text);
  EXPECT_EQ(rec.run, "r1");
  EXPECT_EQ(to_string(rec.state), "running");
  EXPECT_EQ(rec.leader_pid, launcher);
  EXPECT_EQ(rec.owner.pid, ::getpid()) << "the owner is the launcher's parent";
  std::string invocation = unit_property(rec.unit, "InvocationID");
  EXPECT_EQ(invocation.size(), 32u) << "InvocationID of " << rec.unit << ": '" << invocation << "'";
  EXPECT_EQ(rec.invocation_id, invocation);
  EXPECT_EQ(unit_property(rec.unit, "ControlGroup"), rec.cgroup);
  EXPECT_EQ(proc_cgroup(launcher).value_or("(gone)"), rec.leaf);

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_FALSE(alive(launcher));
}

TEST_F(ALaunch, PassesNoBusConnectionToTheCommand) {
  std::string fds = path("fds"), ready = path("ready.pid");
  std::string script = "ls -l /proc/$$/fd > '" + fds + "'; exec '" + kEscaper + "' --pidfile '" + ready + "'";
  pid_t launcher = ctl_background("launch", {"launch", "r1", "--", "sh", "-c", script});
  ASSERT_EQ(await_pidfile(ready), launcher);
  auto listing = read_file(fds);
  ASSERT_TRUE(listing && !listing->empty());
  EXPECT_THAT(*listing, ::testing::Not(HasSubstr("socket:"))) << "the command inherited a socket:\n" << *listing;
}

TEST_F(ALaunch, OfARunThatIsRunningReapsTheFirstAttemptBeforeTheSecondStarts) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("first", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--markers", markers});
  auto first = await_markers(markers);
  ASSERT_EQ(first.size(), 4u);
  Record one = record("r1");

  std::string seen = path("seen.json");
  std::string script = "cat '" + runs_ + "/r1/lifecycle.json' > '" + seen + "'; exec '" + kEscaper +
                       "' --pidfile '" + path("second.pid") + "'";
  pid_t launcher = ctl_background("second", {"launch", "--grace", kShortGraceArg, "r1", "--", "sh", "-c", script});
  ASSERT_EQ(await_pidfile(path("second.pid")), launcher);
  // By the time the second attempt's command runs, nothing of the first may be left.
  for (const auto& [role, pid] : first) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
  Record two = parse_record(read_file(seen).value_or("{}"));
  EXPECT_EQ(two.attempt, 2u);
  EXPECT_NE(two.unit, one.unit);
  EXPECT_EQ(proc_cgroup(launcher).value_or("(gone)"), two.leaf);
  // The first attempt's reap has no receipt of its own (the run goes on); nerved's log says why it ended.
  EXPECT_THAT(read_file(nerved_log_).value_or(""), HasSubstr("reaped before relaunch (cause relaunched): complete"));

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_EQ(receipt("r1").attempt, 2u);
  EXPECT_FALSE(alive(launcher));
}

TEST_F(ALaunch, DoesNotStartTheCommandWhenNervedIsNotRunning) {
  stop_nerved();
  std::string touched = path("touched");
  Output o = ctl({"launch", "r1", "--", kEscaper, "--touch", touched});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("nerved is not running"));
  EXPECT_THAT(o.err, HasSubstr("the command was not started"));
  EXPECT_FALSE(std::filesystem::exists(touched)) << "the command ran although nerved was not there";
}

TEST_F(ALaunch, DoesNotStartTheCommandWhenTheBusCannotBeReached) {
  std::string touched = path("touched");
  Output o = ctl({"launch", "r1", "--", kEscaper, "--touch", touched},
                 {{"DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent"}});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("session bus"));
  EXPECT_THAT(o.err, HasSubstr("unix:path=/nonexistent"));
  EXPECT_THAT(o.err, HasSubstr("the command was not started"));
  EXPECT_FALSE(std::filesystem::exists(touched)) << "the command ran although the bus was unreachable";
  EXPECT_THAT(list_folder(runs_), ::testing::IsEmpty());
}

TEST_F(ALaunch, AfterAReapIsRefusedWithRunFinished) {
  pid_t launcher =
      ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("run.pid")});
  ASSERT_EQ(await_pidfile(path("run.pid")), launcher);
  Output reap = ctl({"reap", "r1"});
  ASSERT_EQ(reap.exit_code, 0) << reap.out << reap.err;

  std::string touched = path("touched");
  Output again = ctl({"launch", "r1", "--", kEscaper, "--touch", touched});
  EXPECT_EQ(again.exit_code, 125) << again.out << again.err;
  EXPECT_THAT(again.err, HasSubstr("org.nerve.Lifecycle1.Error.RunFinished"));
  EXPECT_THAT(again.err, HasSubstr("'r1'"));
  EXPECT_FALSE(std::filesystem::exists(touched)) << "a reaped run started its command again";
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  EXPECT_EQ(record("r1").attempt, 1u);
}

TEST_F(ALaunch, AfterForgetStartsTheRunAfresh) {
  pid_t first =
      ctl_background("first", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("first.pid")});
  ASSERT_EQ(await_pidfile(path("first.pid")), first);
  Output busy = ctl({"forget", "r1"});
  EXPECT_EQ(busy.exit_code, 1) << busy.out << busy.err;
  EXPECT_THAT(busy.err, HasSubstr("org.nerve.Lifecycle1.Error.RunNotFinished"));
  EXPECT_TRUE(alive(first)) << "forget of a running run touched it";
  ASSERT_EQ(ctl({"reap", "r1"}).exit_code, 0);

  Output forget = ctl({"forget", "r1"});
  EXPECT_EQ(forget.exit_code, 0) << forget.out << forget.err;
  EXPECT_THAT(list_folder(runs_), ::testing::IsEmpty());
  pid_t second =
      ctl_background("second", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("second.pid")});
  ASSERT_EQ(await_pidfile(path("second.pid")), second);
  EXPECT_EQ(record("r1").attempt, 1u);
  EXPECT_EQ(ctl({"reap", "r1"}).exit_code, 0);
}

TEST_F(ALaunch, IntoARunFolderThatIsASymlinkIsRefusedAndWritesNothingThroughIt) {
  std::string outside = path("outside");
  ASSERT_EQ(::mkdir(outside.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (runs_ + "/r1").c_str()), 0);
  std::string touched = path("touched");
  Output o = ctl({"launch", "r1", "--", kEscaper, "--touch", touched});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_FALSE(std::filesystem::exists(touched));
  EXPECT_THAT(list_folder(outside), ::testing::IsEmpty()) << "nerved wrote through the symlink";
}

TEST_F(ALaunch, ExitsWithTheCommandsOwnStatus) {
  Output o = ctl({"launch", "r1", "--", kEscaper, "--exit", "7"});
  EXPECT_EQ(o.exit_code, 7) << o.out << o.err;
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_THAT(to_string(receipt("r1").outcome), ::testing::AnyOf("complete", "no_scope"));
}

TEST_F(ALaunch, OfAMissingCommandExits127AndLeavesARunThatCanBeReaped) {
  Output o = ctl({"launch", "r1", "--", path("no-such-command")});
  EXPECT_EQ(o.exit_code, 127) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("cannot execute"));
  EXPECT_THAT(o.err, HasSubstr("reap it"));
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
}

class ARun : public NervedTest {};

class ASecondNerved : public NervedTest {};

TEST_F(ASecondNerved, ExitsWithAClearErrorAndLeavesTheFirstServing) {
  std::string log = path("second.log");
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  SpawnSpec spec = command({kNerved, "--runs-dir", path("other-runs")});
  spec.stderr_fd = fd;
  pid_t second = spawn(spec);
  ::close(fd);
  track(second, false);
  auto code = wait_child(second, kEventTimeout);
  ASSERT_TRUE(code.has_value()) << "a second nerved kept running";
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(read_file(log).value_or(""), HasSubstr("another nerved"));
  EXPECT_TRUE(alive(nerved_pid_));
  Output list = ctl({"list", "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
}

TEST_F(ARun, KeepsRunningWhileNervedRestartsAndIsReapedAfterwards) {
  pid_t launcher =
      ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("run.pid")});
  ASSERT_EQ(await_pidfile(path("run.pid")), launcher);
  Record before = record("r1");

  stop_nerved();
  EXPECT_TRUE(alive(launcher)) << "stopping nerved must leave runs running";
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  EXPECT_TRUE(alive(launcher)) << "a restarted nerved must adopt a run whose owner lives, not reap it";
  EXPECT_EQ(proc_cgroup(launcher).value_or("(gone)"), before.leaf);

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_EQ(to_string(receipt("r1").outcome), "complete");
  EXPECT_FALSE(alive(launcher));
}

// The owner of a run is nervectl's parent (here a shell, which waits on its stdin so that the test
// decides when it exits). A run not launched with --keep does not outlive it.
class ARunsOwner : public NervedTest {
 protected:
  // Starts `sh -c 'nervectl launch [--keep] r1 -- escaper --pidfile P & read line'`; returns the
  // shell's pid and the escaper's (0 on failure); *stdin_w is the shell's stdin.
  void launch_under_owner(bool keep, pid_t* owner, pid_t* run_pid, int* stdin_w) {
    int in[2];
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    std::string cmd = "'" + kNervectl + "' launch --grace " + kShortGraceArg + " " + (keep ? "--keep " : "") + "r1 -- '" + kEscaper +
                      "' --pidfile '" + path("run.pid") + "' </dev/null & read line";
    SpawnSpec spec = command({"sh", "-c", cmd});
    spec.stdin_fd = in[0];
    *owner = spawn(spec);
    track(*owner, false);
    ::close(in[0]);
    *stdin_w = in[1];
    *run_pid = await_pidfile(path("run.pid"));
    ASSERT_GT(*run_pid, 0);
    ASSERT_EQ(proc_parent(*run_pid).value_or(-1), *owner);
    ASSERT_EQ(record("r1").owner.pid, *owner);
    // sh starts a background job with SIGINT and SIGQUIT ignored; the command gets the defaults back.
    EXPECT_FALSE(ignores_signal(*run_pid, SIGINT));
    EXPECT_FALSE(ignores_signal(*run_pid, SIGQUIT));
  }
};

TEST_F(ARunsOwner, ExitingReapsTheRun) {
  pid_t owner = 0, run_pid = 0;
  int stdin_w = -1;
  ASSERT_NO_FATAL_FAILURE(launch_under_owner(false, &owner, &run_pid, &stdin_w));
  ::close(stdin_w);  // the shell's `read` ends, and so does the shell
  ASSERT_TRUE(wait_child(owner, kEventTimeout).has_value());
  EXPECT_TRUE(wait_gone(run_pid, kEventTimeout))
      << "the run outlived its owner by " << kEventTimeout.count() << " ms: " << describe_process(run_pid);
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "no receipt after the owner exited";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete");
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "owner_gone");
}

TEST_F(ARunsOwner, ExitingWhileNervedIsDownGetsTheRunReapedAtTheNextStart) {
  pid_t owner = 0, run_pid = 0;
  int stdin_w = -1;
  ASSERT_NO_FATAL_FAILURE(launch_under_owner(false, &owner, &run_pid, &stdin_w));
  stop_nerved();
  ::close(stdin_w);
  ASSERT_TRUE(wait_child(owner, kEventTimeout).has_value());
  EXPECT_TRUE(alive(run_pid)) << "nothing may reap the run while nerved is down";
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  EXPECT_TRUE(wait_gone(run_pid, kEventTimeout))
      << "the restarted nerved left a run whose owner is gone: " << describe_process(run_pid);
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "no receipt after the restart";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete");
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "reconciled") << "the startup reconciliation ended it";
}

TEST_F(ARunsOwner, ExitingLeavesARunLaunchedWithKeep) {
  pid_t owner = 0, run_pid = 0;
  int stdin_w = -1;
  ASSERT_NO_FATAL_FAILURE(launch_under_owner(true, &owner, &run_pid, &stdin_w));
  EXPECT_TRUE(record("r1").keep);
  ::close(stdin_w);
  ASSERT_TRUE(wait_child(owner, kEventTimeout).has_value());
  // No event tells that nerved decided to do nothing. A call answered after the owner's exit was
  // seen (same event loop) must find the run not fenced: a reap writes state "reaping" before it
  // stops anything.
  Output status = ctl({"status", "--json", "r1"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(to_string(record("r1").state), "running") << "a --keep run was reaped when its owner exited";
  EXPECT_TRUE(alive(run_pid)) << "a --keep run was reaped when its owner exited";
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/r1/receipt.json"));
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_FALSE(alive(run_pid));
}

}  // namespace
}  // namespace nerve::itest
