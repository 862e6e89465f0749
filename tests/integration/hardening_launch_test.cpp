// SPDX-License-Identifier: LGPL-2.1-or-later
// Launches and relaunches. A reap meant for an
// earlier attempt never reaches a later one; a refused Launch leaves the finished run as it was; a
// `launch --wait` cancelled before its exec ends at once; PATH entries are relative to the command's cwd.
#include "hardening_support.h"
#include "backend_view.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>

#include <filesystem>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Options = std::map<std::string, sdbus::Variant>;

class HardeningLaunch : public Hardening {
 protected:
  void TearDown() override {
    run_.reset();
    manager_.reset();
    bus_.reset();
    Hardening::TearDown();
  }

  void connect() {
    bus_ = sdbus::createSessionBusConnection();
    manager_ = sdbus::createProxy(*bus_, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
  }

  // Launch on this test's connection (the engine), stdio /dev/null; the pid, or the error's name.
  std::pair<pid_t, std::string> launch(const std::string& run, const std::vector<std::string>& argv,
                                       std::vector<std::string> env = {"PATH=/usr/bin:/bin"}, bool reap_on_exit = true) {
    Options o;
    o["grace_usec"] = sdbus::Variant(std::uint64_t{1'000'000});
    o["reap_on_exit"] = sdbus::Variant(reap_on_exit);
    std::vector<sdbus::UnixFd> stdio;
    for (int i = 0; i < 3; ++i) stdio.emplace_back(::open("/dev/null", O_RDWR | O_CLOEXEC), sdbus::adopt_fd);
    sdbus::ObjectPath object;
    std::uint32_t pid = 0;
    try {
      manager_->callMethod("Launch").onInterface("org.nerve.Lifecycle1.Manager")
          .withArguments(run, argv, env, tmp_, stdio, o)
          .storeResultsTo(object, pid);
    } catch (const sdbus::Error& e) {
      last_error_ = e.getMessage();
      return {0, e.getName()};
    }
    track(static_cast<pid_t>(pid), true);
    return {static_cast<pid_t>(pid), ""};
  }

  std::int32_t exit_status(const std::string& run) {
    if (!run_) run_ = sdbus::createProxy(*bus_, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1/run/" + run);
    return run_->getProperty("ExitStatus").onInterface("org.nerve.Lifecycle1.Run").get<std::int32_t>();
  }

  std::unique_ptr<sdbus::IConnection> bus_;
  std::unique_ptr<sdbus::IProxy> manager_;
  std::unique_ptr<sdbus::IProxy> run_;
  std::string last_error_;
};

// Reaps keyed by attempt: relaunching a Launch'd run kills attempt 1's command; its reap-on-exit was
// queued behind the relaunch and then reaped attempt 2. Attempt 2 must keep running.
TEST_F(HardeningLaunch, TheReapOnExitOfAttemptOneNeverReapsAttemptTwo) {
  ASSERT_NO_FATAL_FAILURE(connect());
  auto [first, err1] = launch("re", {"sleep", "600"});
  ASSERT_EQ(err1, "") << last_error_;
  auto [second, err2] = launch("re", {"sleep", "600"});
  ASSERT_EQ(err2, "") << last_error_;
  EXPECT_TRUE(wait_gone(first, 5000ms));
  // The wrong reap, if it comes, comes at once: give it a bounded chance.
  bool reaped = eventually([&] { return !alive(second) || to_string(record("re").state) != "running"; }, 3000ms);
  EXPECT_FALSE(reaped) << "attempt 2 was reaped by attempt 1's reap on exit: state "
                       << to_string(record("re").state) << "\n" << log();
  EXPECT_EQ(record("re").attempt, 2u);
  EXPECT_TRUE(alive(second));
}

// Reaps keyed by attempt, the supervisor's part: `launch --wait` reaped its run by run id once its
// command ended. When another client relaunched the run, the relaunch ended attempt 1 (the
// supervisor's command), and the supervisor's final Reap, queued behind it, then reaped attempt 2. It
// now ends its own attempt only (ReapAttempt), which answers Superseded.
TEST_F(HardeningLaunch, LaunchWaitsFinalReapNeverReapsTheAttemptOfARelaunch) {
  pid_t supervisor = ctl_background("sup", {"launch", "--wait", "--grace", "1", "sv", "--", "sleep", "600"});
  ASSERT_TRUE(await_state({"sv"}, "running", 20'000ms)) << log();
  // Another client (this test is its owner) launches the same run again: the relaunch ends attempt 1.
  ctl_background("relaunch", {"launch", "--grace", "1", "sv", "--", "sleep", "600"});
  auto code = wait_child(supervisor, 20'000ms);
  ASSERT_TRUE(code.has_value()) << "the supervisor did not end after the relaunch ended its command";
  ASSERT_TRUE(eventually([&] { return record("sv").attempt == 2u && to_string(record("sv").state) == "running"; },
                         10'000ms))
      << log();
  for (pid_t p : run_pids("sv")) track(p, false);
  bool reaped = eventually([&] { return to_string(record("sv").state) != "running"; }, 2000ms);
  EXPECT_FALSE(reaped) << "the supervisor of attempt 1 reaped attempt 2: state " << to_string(record("sv").state)
                       << "\n" << read_file(path("sup.err")).value_or("") << log();
  EXPECT_THAT(read_file(path("sup.err")).value_or(""), HasSubstr("Superseded"));
}

// A Launch refused because the run is final keeps the run's ExitStatus (it once wiped it to -1).
TEST_F(HardeningLaunch, ARefusedLaunchKeepsTheFinishedRunsExitStatus) {
  ASSERT_NO_FATAL_FAILURE(connect());
  auto [pid, err] = launch("done", {"sh", "-c", "exit 7"});
  ASSERT_EQ(err, "") << last_error_;
  ASSERT_TRUE(await_state({"done"}, "reaped", 10'000ms)) << log();
  ASSERT_TRUE(eventually([&] { return exit_status("done") == 7; }, 5000ms)) << exit_status("done");
  std::string marker = path("ran");
  auto [pid2, err2] = launch("done", {"sh", "-c", "touch " + marker});
  EXPECT_EQ(err2, "org.nerve.Lifecycle1.Error.RunFinished") << last_error_;
  EXPECT_EQ(exit_status("done"), 7) << "the refused Launch changed the finished run's ExitStatus";
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// A relative PATH entry is resolved against the command's cwd (it once was against nerved's own).
TEST_F(HardeningLaunch, ARelativePathEntryIsResolvedAgainstTheCommandsCwd) {
  ASSERT_NO_FATAL_FAILURE(connect());
  std::string bin = path("relbin");
  ASSERT_EQ(::mkdir(bin.c_str(), 0700), 0);
  std::string marker = path("ran");
  {
    std::ofstream script(bin + "/hello");
    script << "#!/bin/sh\ntouch " << marker << "\n";
  }
  ASSERT_EQ(::chmod((bin + "/hello").c_str(), 0700), 0);
  auto [pid, err] = launch("rel", {"hello"}, {"PATH=relbin:/usr/bin:/bin"});
  EXPECT_EQ(err, "") << last_error_;
  EXPECT_TRUE(wait_for_file(marker, 5000ms));
}

// `launch --wait` cancelled (TERM) before its command execs: its held child kept TERM
// blocked until the exec, so the Cancel waited for the whole grace (here 30 s) before SIGKILL.
TEST_F(HardeningLaunch, LaunchWaitCancelledBeforeExecEndsWithoutWaitingForTheGrace) {
  std::string touched = path("touched");
  pid_t ctl_pid = start_background("launch", {"env", "NERVE_TEST_PAUSE=before-exec", kNervectl, "launch", "--wait",
                                              "--grace", "30", "w1", "--", kEscaper, "--touch", touched});
  ASSERT_TRUE(eventually([&] { return proc_state(ctl_pid) == 'T'; }, kEventTimeout))
      << "nervectl did not stop before its exec: " << describe_process(ctl_pid);
  ASSERT_TRUE(await_state({"w1"}, "running", 5000ms));
  for (pid_t p : run_pids("w1")) track(p, true);
  ASSERT_EQ(::kill(ctl_pid, SIGTERM), 0);
  ASSERT_EQ(::kill(ctl_pid, SIGCONT), 0);
  auto resumed = Clock::now();
  auto code = wait_child(ctl_pid, 20'000ms);
  ASSERT_TRUE(code.has_value()) << "nervectl still running 20 s after TERM";
  EXPECT_EQ(*code, 143);
  EXPECT_LT(since(resumed), 5000ms) << "the cancel waited for the grace";
  EXPECT_FALSE(std::filesystem::exists(touched));
  EXPECT_EQ(to_string(record("w1").state), "reaped");
}

// An owner that never goes away. A wrapper whose parent is the user manager (here a
// service's ExecStart; an orphaned wrapper is reparented to it the same way, the manager being a
// subreaper) was owned by the manager, so its run was tied to the manager's life without a word. It
// now has no owner, nerved says so, and the run lives until reaped. nerved knows the manager by
// $MANAGERPID, which systemd sets for the services it starts (nerved.service in real use).
TEST_F(HardeningLaunch, AWrapperRunByTheUserManagerHasNoOwnerAndRunsUntilReaped) {
  NERVE_NEEDS_USER_MANAGER();
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"MANAGERPID", std::to_string(manager_pid())}}));
  Output started = run(command({"systemd-run", "--user", "--quiet", "--collect", "--unit", "owner-um1", kNervectl,
                                "launch", "--grace", "1", "um1", "--", "sleep", "600"}));
  ASSERT_EQ(started.exit_code, 0) << started.err;
  ASSERT_TRUE(await_state({"um1"}, "running", 20'000ms)) << log();
  auto pids = run_pids("um1");
  ASSERT_EQ(pids.size(), 1u);
  track(pids[0], true);
  EXPECT_EQ(to_string(record("um1").owner.kind), "none");
  EXPECT_TRUE(eventually([&] { return log().find("it has no owner") != std::string::npos; }, 5000ms)) << log();
  EXPECT_TRUE(alive(pids[0]));
  Output reap = ctl({"reap", "um1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.err;
  EXPECT_TRUE(eventually([&] { return !alive(pids[0]); }, 10'000ms));
  run(command({"systemctl", "--user", "stop", "owner-um1.service"}));
}

}  // namespace
}  // namespace nerve::itest
