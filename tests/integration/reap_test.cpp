// SPDX-License-Identifier: LGPL-2.1-or-later
// Reaps of real runs: every process of the scope goes, whatever it did to escape, and only the
// run's own unit is ever touched.
#include "backend_view.h"
#include "nerved_fixture.h"

#include "base/host.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <sstream>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class AReap : public NervedTest {};

TEST_F(AReap, KillsEveryProcessThatTriedToEscapeAndTheCgroupGoes) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  pid_t launcher =
      ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  EXPECT_EQ(pids["main"], launcher) << "nervectl launch must exec the command in place";

  Record rec = record("r1");
  ASSERT_EQ(to_string(rec.state), "running");
  ASSERT_FALSE(rec.cgroup.empty());
  // The escapes really happened: a new session, an orphaned grandchild, TERM ignored.
  EXPECT_EQ(session_of(pids["setsid"]), pids["setsid"]);
  EXPECT_NE(proc_parent(pids["grandchild"]).value_or(-1), pids["main"]);
  EXPECT_TRUE(ignores_signal(pids["ignoreterm"], SIGTERM));
  // ... and none of them left the scope.
  for (const auto& [role, pid] : pids) {
    EXPECT_TRUE(alive(pid)) << role << ": " << describe_process(pid);
    EXPECT_EQ(proc_cgroup(pid).value_or("(gone)"), rec.leaf) << role << ": " << describe_process(pid);
  }
  std::string folder = cgroup_folder(rec.cgroup);
  ASSERT_TRUE(std::filesystem::is_directory(folder)) << folder;
  ASSERT_FALSE(HasFailure()) << "the run is not as launched; not reaping";

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_THAT(reap.out, HasSubstr("run r1: complete"));
  EXPECT_LT(reap.took, kShortGrace + 2000ms) << "a reap with a 0.2 s grace took " << reap.took.count() << " ms";

  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  EXPECT_EQ(r.invocation_id, rec.invocation_id);
  EXPECT_TRUE(r.killed) << "the child that ignores SIGTERM can only have gone by SIGKILL, yet the receipt says "
                           "killed false";
  // Complete means empty: not one of them may still be running when the reap returns.
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
  if (std::filesystem::exists(folder)) {
    auto procs = read_file(folder + "/cgroup.procs");
    EXPECT_EQ(procs.value_or(""), "") << "the reap returned complete while " << folder << " holds processes";
  }
  EXPECT_TRUE(wait_folder_gone(folder, 2000ms)) << folder << " still exists 2 s after the reap returned";
  EXPECT_EQ(to_string(record("r1").state), "reaped");
}

TEST_F(AReap, RefusesAUnitThatTookTheRunsUnitNameAndLeavesItRunning) {
  pid_t launcher =
      ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("first.pid")});
  pid_t first = await_pidfile(path("first.pid"));
  ASSERT_EQ(first, launcher);
  Record rec = record("r1");
  ASSERT_EQ(to_string(rec.state), "running");

  // Out of band, behind nerved's back (nerved is down: a nerved that is up watches the run's leaf and
  // reaps it as soon as its processes end): the run's unit stops, and another one takes its name.
  stop_nerved();
  ASSERT_EQ(stop_out_of_band(rec.unit), "");
  ASSERT_TRUE(wait_gone(first, kEventTimeout)) << describe_process(first);
  pid_t other = start_background(
      "other", foreign_scope_command(rec.unit, rec.slice, {kEscaper, "--pidfile", path("other.pid")}));
  pid_t other_pid = await_pidfile(path("other.pid"));
  ASSERT_EQ(other_pid, other) << "the foreign scope's command runs in place";
  ASSERT_EQ(proc_cgroup(other_pid).value_or("(gone)"), rec.cgroup) << "the new unit has the same name and cgroup path";
  std::string other_invocation = unit_property(rec.unit, "InvocationID");
  ASSERT_EQ(other_invocation.size(), 32u);
  ASSERT_NE(other_invocation, rec.invocation_id);

  ASSERT_NO_FATAL_FAILURE(start_nerved());  // its reconciliation finds run/ gone and reaps: refused
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 1) << reap.out << reap.err;
  EXPECT_THAT(reap.out, HasSubstr("run r1: refused"));
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "refused") << r.error;
  EXPECT_FALSE(r.killed);
  EXPECT_TRUE(alive(other_pid)) << "the other unit's process was killed: " << describe_process(other_pid);
  EXPECT_EQ(proc_cgroup(other_pid).value_or("(gone)"), rec.cgroup);
  EXPECT_EQ(unit_property(rec.unit, "ActiveState"), "active");
  EXPECT_EQ(unit_property(rec.unit, "InvocationID"), other_invocation);
  Output status = ctl({"status", "r1"});
  EXPECT_EQ(status.exit_code, 3) << "the refused run is final, so not running: " << status.err;
  EXPECT_THAT(status.out, HasSubstr("not ours"));
}

TEST_F(AReap, WithAShorterGraceThanTheLaunchsEndsAfterItsOwnGrace) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "--grace", "30", "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_LT(reap.took, kShortGrace + 2000ms) << "the reap's 0.2 s grace must win over the launch's 30 s";
  EXPECT_TRUE(receipt("r1").killed);
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
}

// The scope's stop timeout is the launch's grace (systemd 252 cannot change it later). A reap with a
// longer grace must still give the TERM ignorer that whole grace (so systemd must not be the one to
// SIGKILL it after the launch's 0.2 s), and the receipt must say that SIGKILL was needed. Red before:
// the reap ended right after the launch's grace with killed false.
TEST_F(AReap, HonoursALongerGraceThanTheLaunchsAndReportsTheKill) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_TRUE(ignores_signal(pids["ignoreterm"], SIGTERM));
  Output reap = ctl({"reap", "--grace", "1.2", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_EQ(to_string(receipt("r1").outcome), "complete");
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
  EXPECT_GE(reap.took, 1150ms) << "the TERM ignorer did not get the reap's 1.2 s grace (the launch's was 0.2 s)";
  EXPECT_LT(reap.took, 3200ms) << "grace + 2 s";
  EXPECT_TRUE(receipt("r1").killed) << "the TERM ignorer needed SIGKILL, yet the receipt says killed false:\n"
                                    << reap.out;
}

TEST_F(AReap, OfProcessesThatHeedTermEndsWithoutSigkillAndWithoutWaitingForTheGrace) {
  pid_t launcher =
      ctl_background("launch", {"launch", "--grace", "30", "r1", "--", kEscaper, "--pidfile", path("run.pid")});
  ASSERT_EQ(await_pidfile(path("run.pid")), launcher);
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_LT(reap.took, 1000ms);
  EXPECT_FALSE(receipt("r1").killed);
  EXPECT_FALSE(alive(launcher));
}

TEST_F(AReap, OfARunWhoseUnitWasStoppedOutOfBandFindsNoScope) {
  pid_t launcher =
      ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("run.pid")});
  ASSERT_EQ(await_pidfile(path("run.pid")), launcher);
  Record rec = record("r1");
  stop_nerved();  // no nerved watches the run: the scope vanishes unseen (a watched run ends complete, exited)
  ASSERT_EQ(stop_out_of_band(rec.unit), "");
  ASSERT_TRUE(wait_gone(launcher, kEventTimeout));
  ASSERT_TRUE(wait_folder_gone(cgroup_folder(rec.cgroup), 2000ms));
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_THAT(reap.out, HasSubstr("run r1: no_scope"));
  EXPECT_EQ(to_string(receipt("r1").outcome), "no_scope");
}

TEST_F(AReap, WithoutAGraceUsesTheLaunchsGrace) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "--grace", "0.5", "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_LT(reap.took, 2500ms) << "the launch's grace was 0.5 s";
  EXPECT_GE(reap.took, 450ms) << "the TERM ignorer must have had its grace";
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
}

TEST_F(AReap, CalledTwiceAtOnceGivesBothCallersTheSameReceipt) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  pid_t a = ctl_background("reap-a", {"reap", "--json", "r1"});
  pid_t b = ctl_background("reap-b", {"reap", "--json", "r1"});
  auto code_a = wait_child(a, kEventTimeout), code_b = wait_child(b, kEventTimeout);
  ASSERT_TRUE(code_a && code_b) << "a reap did not return";
  EXPECT_EQ(*code_a, 0) << read_file(path("reap-a.err")).value_or("");
  EXPECT_EQ(*code_b, 0) << read_file(path("reap-b.err")).value_or("");
  std::string out_a = read_file(path("reap-a.out")).value_or(""), out_b = read_file(path("reap-b.out")).value_or("");
  EXPECT_EQ(out_a, out_b);
  EXPECT_EQ(to_string(parse_receipt(out_a).outcome), "complete") << out_a;
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
}

TEST_F(AReap, OfAnUnknownRunFailsWithNoSuchRunAndCreatesNothing) {
  Output reap = ctl({"reap", "nope"});
  EXPECT_EQ(reap.exit_code, 1) << reap.out << reap.err;
  EXPECT_THAT(reap.err, HasSubstr("org.nerve.Lifecycle1.Error.NoSuchRun"));
  EXPECT_THAT(reap.err, HasSubstr("'nope'"));
  EXPECT_EQ(reap.out, "");
  EXPECT_THAT(list_folder(runs_), ::testing::IsEmpty());
}

TEST_F(AReap, ClosesAPipeThatABackgroundProcessOfTheRunHolds) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", "sh", "-c", "sleep 20 & echo started; wait"}, p[1]);
  ::close(p[1]);
  std::string got;
  bool started = read_until(p[0], "started\n", kEventTimeout, &got);
  if (started) {
    // The run's processes (sh and its sleep), tracked by pid for TearDown.
    std::istringstream procs(read_file(cgroup_folder(record("r1").leaf) + "/cgroup.procs").value_or(""));
    for (pid_t pid; procs >> pid;) track(pid, true);
  } else {
    ::close(p[0]);
  }
  ASSERT_TRUE(started) << "no 'started' from the run within " << kEventTimeout.count() << " ms; read: '" << got << "'";

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  auto returned = Clock::now();
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  bool eof = false;
  std::string rest = read_until_eof(p[0], 1000ms, &eof);
  auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - returned);
  ::close(p[0]);
  EXPECT_TRUE(eof) << "the run's stdout pipe was still open 1 s after the reap returned (read: '" << rest << "')";
  EXPECT_LT(waited, 1000ms);
}

TEST_F(AReap, TwiceReturnsTheSameReceiptTheSecondTime) {
  pid_t launcher =
      ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("run.pid")});
  ASSERT_EQ(await_pidfile(path("run.pid")), launcher);

  Output first = ctl({"reap", "--json", "r1"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_FALSE(alive(launcher));
  Receipt r1 = parse_receipt(first.out);
  EXPECT_EQ(to_string(r1.outcome), "complete") << r1.error;

  Output second = ctl({"reap", "--json", "r1"});
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(second.out, first.out) << "a second reap must return the final receipt unchanged";
  Output human = ctl({"reap", "r1"});
  EXPECT_EQ(human.exit_code, 0) << human.out << human.err;
  EXPECT_THAT(human.out, HasSubstr("run r1: complete"));
  Receipt stored = receipt("r1");
  EXPECT_EQ(stored.reaped_at, r1.reaped_at) << "the second reap rewrote receipt.json";
}

}  // namespace
}  // namespace nerve::itest

namespace nerve::itest {
namespace {

// Run controls: timeouts, freeze and cancel end the whole escaper tree, and the receipt says why.
class ARunControl : public NervedTest {
 protected:
  void expect_all_gone(const std::map<std::string, pid_t>& pids) {
    for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
  }
};

TEST_F(ARunControl, CancelFromTheCommandLineSendsItsSignalAndRecordsTheCause) {
  auto pids = launch_escaper(path("markers"));
  ASSERT_FALSE(HasFailure());
  std::string controllers = " " + read_file(cgroup_folder(record("r1").cgroup) + "/cgroup.controllers").value_or("");
  auto offered = [&](const std::string& c) {
    return controllers.find(" " + c + " ") != std::string::npos || controllers.find(" " + c + "\n") != std::string::npos;
  };
  Output bad = ctl({"cancel", "--signal", "NOPE", "r1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("'NOPE'"));
  Output c = ctl({"cancel", "--signal", "INT", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.out, HasSubstr("run r1: complete"));
  EXPECT_THAT(c.out, HasSubstr("cause:         cancelled"));
  EXPECT_THAT(c.out, HasSubstr("cpu:"));
  expect_all_gone(pids);
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_TRUE(r.cause);
  EXPECT_EQ(to_string(*r.cause), "cancelled");
  ASSERT_TRUE(r.usage) << "no usage snapshot in the receipt";
  EXPECT_TRUE(r.usage->cpu_usage_usec.has_value()) << "cpu.stat is always there on cgroup2";
  // A figure whose controller the scope does not have is null (printed n/a), never 0.
  if (!offered("memory")) {
    EXPECT_FALSE(r.usage->memory_peak_bytes) << "no memory controller, yet a memory peak of " << *r.usage->memory_peak_bytes;
    EXPECT_FALSE(r.usage->oom_kills);
    EXPECT_THAT(c.out, HasSubstr("memory peak:   n/a"));
  }
  if (!offered("pids")) {
    EXPECT_FALSE(r.usage->tasks_peak) << "no pids controller, yet a tasks peak";
    EXPECT_THAT(c.out, HasSubstr("tasks peak:    n/a"));
  }
  if (!offered("io")) {
    EXPECT_FALSE(r.usage->io_read_bytes || r.usage->io_write_bytes) << "no io controller, yet io bytes";
    EXPECT_THAT(c.out, HasSubstr("io:            n/a"));
  }
  std::cerr << "note: the scope's controllers here: '" << controllers << "'\n";
}

TEST_F(ARunControl, AFrozenEscaperTreeIsFrozenAndStillReapedCompletely) {
  auto pids = launch_escaper(path("markers"));
  ASSERT_FALSE(HasFailure());
  Record rec = record("r1");
  Output f = ctl({"freeze", "r1"});
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  auto events = read_file(cgroup_folder(rec.cgroup) + "/cgroup.events").value_or("");
  EXPECT_THAT(events, HasSubstr("frozen 1")) << "FreezeUnit returned but the cgroup is not frozen";
  Output r = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("run r1: complete"));
  EXPECT_LT(r.took, kShortGrace + 3000ms);
  expect_all_gone(pids);
  Receipt receipt_r1 = receipt("r1");
  EXPECT_EQ(to_string(receipt_r1.outcome), "complete") << receipt_r1.error;
  EXPECT_EQ(receipt_r1.unit, rec.unit);
  EXPECT_EQ(receipt_r1.invocation_id, rec.invocation_id);
  EXPECT_TRUE(receipt_r1.killed) << "the TERM ignorer can only go by SIGKILL";
  EXPECT_THAT(r.out, HasSubstr("killed:        yes"));
  ASSERT_TRUE(receipt_r1.cause);
  EXPECT_EQ(to_string(*receipt_r1.cause), "reaped");
  EXPECT_THAT(r.out, HasSubstr("cause:         reaped"));
  ASSERT_TRUE(receipt_r1.usage);
  EXPECT_TRUE(receipt_r1.usage->cpu_usage_usec) << "cpu.stat is there on every cgroup2";
  // usage_final says whether the snapshot came after the cgroup emptied; systemd often removes the
  // folder first, and then the receipt says the figures are a lower bound (never passed off as exact).
  std::cerr << "note: usage_final " << receipt_r1.usage_final << "\n";
  Output again = ctl({"thaw", "r1"});
  EXPECT_EQ(again.exit_code, 1) << "thaw of a reaped run must fail with RunFinished: " << again.out << again.err;
  EXPECT_THAT(again.err, HasSubstr("RunFinished"));
}

}  // namespace
}  // namespace nerve::itest
