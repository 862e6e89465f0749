// SPDX-License-Identifier: LGPL-2.1-or-later
// Exact usage in every receipt: each run's processes are in the run/ leaf of its scope, a holder in
// hold/ keeps the scope (and run/ with its figures) until the reap has read them, however the run
// ends (docs/records.md, "Leaf and holder"). Each run here burns at least 1 s of CPU (the escaper's
// --burn, which proves it started with a pid file or a marker); its receipt must say complete,
// usage_final, and at least 0.9 s of CPU; and no holder may be left after a reap. Also: a run is
// found by ancestry, so a process that moved into a cgroup of its own below its run still starts
// nested runs of that run.
#include "nerved_fixture.h"

#include "base/host.h"

#include <gmock/gmock.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace nerve::itest {
namespace {

using ::testing::IsEmpty;
using namespace std::chrono_literals;

class ExactUsage : public NervedTest {
 protected:
  // The live nerve-hold processes of this test's tree (their cgroup is in this test's hierarchy).
  std::vector<pid_t> holders() const {
    std::vector<pid_t> out;
    for (const auto& name : list_folder("/proc")) {
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      pid_t pid = std::stoi(name);
      auto comm = read_file("/proc/" + name + "/comm");
      if (!comm || comm->rfind("nerve-hold", 0) != 0 || !alive(pid)) continue;
      auto cg = proc_cgroup(pid);
      if (cg && cg->find("/..") == std::string::npos && std::filesystem::exists(cgroup_folder(*cg))) out.push_back(pid);
    }
    return out;
  }
  void expect_no_holder_left() {
    EXPECT_TRUE(eventually([&] { return holders().empty(); }, 5000ms))
        << "holders left after the reaps: " << ::testing::PrintToString(holders());
  }
  // The receipt of RUN: complete with CAUSE, its figures read after its last process ended, with the
  // second of CPU it burned.
  void expect_exact(const std::string& run, const std::string& cause) {
    Receipt r = receipt(run);
    EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
    ASSERT_TRUE(r.cause);
    EXPECT_EQ(to_string(*r.cause), cause);
    EXPECT_TRUE(r.usage_final) << "the figures were read before the run's last process ended";
    ASSERT_TRUE(r.usage && r.usage->cpu_usage_usec) << "no CPU figure";
    EXPECT_GE(*r.usage->cpu_usage_usec, 900'000u) << "the run burned 1 s of CPU";
    Record rec = record(run);
    EXPECT_FALSE(rec.leaf.empty()) << "the run had no leaf";
    expect_no_holder_left();
  }
  // A burner of R that runs until it is ended (it writes burned.R once it used 1 s), launched in the
  // background; its pid (it is nervectl, which exec'd it).
  pid_t launch_burner(const std::string& run, std::vector<std::string> extra = {}, const std::string& grace = kShortGraceArg) {
    std::vector<std::string> args = {"launch", "--grace", grace};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const auto& a : {run, std::string("--"), kEscaper, std::string("--burn"), std::string("600000"),
                          std::string("--burned"), path("burned." + run)})
      args.push_back(a);
    pid_t pid = ctl_background("launch-" + run, args);
    EXPECT_TRUE(wait_for_file(path("burned." + run), 30'000ms)) << "the burner of " << run << " did not burn 1 s";
    return pid;
  }
};

TEST_F(ExactUsage, LaunchWaitOfACommandThatEndsGivesItsWholeCpu) {
  Output o = ctl({"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--burn", "1000"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  expect_exact("r1", "exited");
}

TEST_F(ExactUsage, LaunchWaitOfACommandThatLeavesASetsidChildGivesTheWholeCpu) {
  ASSERT_EQ(::mkdir(path("markers").c_str(), 0700), 0);
  Output o = ctl({"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--burn", "1000",
                  "--setsid-child", path("markers")});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  if (pid_t child = read_pid_file(path("markers") + "/setsid.pid")) {
    track(child, true);
    EXPECT_TRUE(wait_gone(child, kEventTimeout)) << describe_process(child);
  }
  expect_exact("r1", "exited");
}

TEST_F(ExactUsage, APlainLaunchWhoseCommandEndsEndsByItself) {
  Output o = ctl({"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--burn", "1000"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "the run did not end with its command";
  expect_exact("r1", "exited");
  // The final receipt is durable before the record says reaped (lazily, after it): wait for it.
  EXPECT_TRUE(eventually([&] { return record("r1").state == RunState::Reaped; }, 5000ms))
      << "the record still says " << to_string(record("r1").state);
}

TEST_F(ExactUsage, AReapOfARunningBurnerGivesItsWholeCpu) {
  launch_burner("r1");
  Output o = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  expect_exact("r1", "reaped");
  EXPECT_FALSE(receipt("r1").killed) << "TERM ends the burner";
}

TEST_F(ExactUsage, ACancelGivesItsWholeCpuAsFinal) {
  launch_burner("r1");
  Output o = ctl({"cancel", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  expect_exact("r1", "cancelled");
}

TEST_F(ExactUsage, ATimeoutGivesItsWholeCpu) {
  // 12 s: time for 1 s of CPU on a loaded machine; systemd's own SIGKILL of the scope 5 s after its TERM.
  launch_burner("r1", {"--timeout", "12"}, "5");
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json", 30'000ms)) << "the run did not end at its timeout";
  expect_exact("r1", "timeout");
}

TEST_F(ExactUsage, AnOwnerGoneGivesItsWholeCpu) {
  int in[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  std::string cmd = "'" + kNervectl + "' launch --grace " + kShortGraceArg + " r1 -- '" + kEscaper +
                    "' --burn 600000 --burned '" + path("burned.r1") + "' </dev/null & read line";
  SpawnSpec spec = command({"sh", "-c", cmd});
  spec.stdin_fd = in[0];
  pid_t owner = spawn(spec);
  track(owner, false);
  ::close(in[0]);
  ASSERT_TRUE(wait_for_file(path("burned.r1"), 30'000ms)) << "the burner did not burn 1 s";
  ::close(in[1]);  // the owner's `read` ends, and so does the owner
  ASSERT_TRUE(wait_child(owner, kEventTimeout).has_value());
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "no receipt after the owner exited";
  expect_exact("r1", "owner_gone");
}

TEST_F(ExactUsage, ARunThatEndsWhileNervedIsDownIsReapedAtTheNextStartWithItsWholeCpu) {
  pid_t burner = ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--burn",
                                           "3000", "--burned", path("burned.r1")});
  ASSERT_TRUE(wait_for_file(path("burned.r1"), 30'000ms)) << "the burner did not burn 1 s";
  ASSERT_EQ(::kill(nerved_pid_, SIGKILL), 0);
  EXPECT_EQ(await_nerved_exit(), 128 + SIGKILL);
  ASSERT_EQ(wait_child(burner, 30'000ms).value_or(-1), 0) << "the burner did not end while nerved was down";
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "reaped before nerved was killed";
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "the next nerved did not reap the ended run";
  expect_exact("r1", "exited");
}

// A relaunch ends the earlier attempt with a reap of its own: that attempt's receipt (cause
// relaunched, its whole CPU, read after its last process ended) is kept beside the run's own, and
// status lists it.
TEST_F(ExactUsage, ARelaunchKeepsTheEndedAttemptsReceiptWithItsWholeCpu) {
  launch_burner("r1");
  Output again = ctl({"launch", "--grace", kShortGraceArg, "r1", "--", "true"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "the second attempt did not end with its command";
  EXPECT_EQ(receipt("r1").attempt, 2u);
  auto text = read_file(runs_ + "/r1/receipt.attempt-1.json");
  ASSERT_TRUE(text) << "the relaunched attempt has no receipt";
  Receipt first = parse_receipt(*text);
  EXPECT_EQ(first.attempt, 1u);
  EXPECT_EQ(to_string(first.outcome), "complete") << first.error;
  ASSERT_TRUE(first.cause);
  EXPECT_EQ(to_string(*first.cause), "relaunched");
  EXPECT_TRUE(first.usage_final) << "the figures were read before the attempt's last process ended";
  ASSERT_TRUE(first.usage && first.usage->cpu_usage_usec) << "no CPU figure";
  EXPECT_GE(*first.usage->cpu_usage_usec, 900'000u) << "the first attempt burned 1 s of CPU";
  Output status = ctl({"status", "--json", "r1"});
  EXPECT_THAT(status.out, ::testing::HasSubstr("\"superseded_receipts\"")) << status.out << status.err;
  expect_no_holder_left();
}

// Without a holder a run's figures could not be read after it ends, so nerved does not run the
// command without one: the launch is refused (ContainmentUnavailable, naming the holder it could not
// start and what to do), the command never runs, and no scope is left.
TEST_F(ExactUsage, ALaunchWhoseHolderCannotStartIsRefusedAndItsCommandNeverRuns) {
  stop_nerved();
  const std::string missing = path("no-such-nerve-hold");
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"NERVE_HOLD_HELPER", missing}}));
  const std::string ran = path("ran");
  Output o = ctl({"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--touch", ran});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_THAT(o.err, ::testing::HasSubstr("ContainmentUnavailable"));
  EXPECT_THAT(o.err, ::testing::HasSubstr(missing));
  EXPECT_THAT(o.err, ::testing::HasSubstr("the command was not started"));
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the command ran without a holder";
  EXPECT_EQ(to_string(record("r1").state), "failed");
  EXPECT_EQ(await_no_nerve_units(), "");
  expect_no_holder_left();
}

// A process of run p makes a cgroup below its own (its run/ leaf), moves into it, and launches run
// q from there: q is p's child all the same, reaped first when p is reaped, and nothing is left.
TEST_F(ExactUsage, ARunStartedFromACgroupBelowItsRunIsThatRunsChild) {
  std::string script =
      "cg=$(sed -n 's/^0:://p' /proc/self/cgroup) && mkdir \"$NERVE_CGROUP_ROOT$cg/moved\" && "
      "echo $$ > \"$NERVE_CGROUP_ROOT$cg/moved/cgroup.procs\" && "
      "'" + kNervectl + "' launch --grace " + kShortGraceArg + " q -- '" + kEscaper + "' --pidfile '" + path("q.pid") +
      "' & exec '" + kEscaper + "' --pidfile '" + path("p.pid") + "'";
  ctl_background("launch-p", {"launch", "--grace", kShortGraceArg, "p", "--", "sh", "-c", script});
  pid_t p = await_pidfile(path("p.pid"));
  pid_t q = await_pidfile(path("q.pid"));
  ASSERT_GT(p, 0);
  ASSERT_GT(q, 0);
  ASSERT_THAT(proc_cgroup(q).value_or(""), ::testing::EndsWith("/run")) << "q is not in its own run/ leaf";
  EXPECT_EQ(record("q").parent, "p") << "q was started from inside p, below its leaf";
  Output o = ctl({"reap", "--grace", kShortGraceArg, "p"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_TRUE(wait_gone(q, kEventTimeout));
  EXPECT_TRUE(wait_gone(p, kEventTimeout));
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/q/receipt.json")) << "the child run was not reaped";
  EXPECT_LE(receipt("q").reaped_at, receipt("p").reaped_at) << "the child was not reaped first";
  expect_no_run_left("after the parent's reap");
  expect_no_holder_left();
}

}  // namespace
}  // namespace nerve::itest
