// SPDX-License-Identifier: LGPL-2.1-or-later
// How nerved reaches the user manager (lib/system/systemd_link.h): its private socket, the session bus, the
// fall back from one to the other (logged, never silent), and that an idle nerved is not woken by
// other programs' bus connections and systemd jobs.
#include "nerved_fixture.h"
#include "backend_view.h"

#include <dirent.h>
#include <gmock/gmock.h>
#include <sdbus-c++/sdbus-c++.h>

#include <fstream>
#include <thread>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

// Context switches of all of PID's threads (/proc/PID/task/*/status): each is a wake-up.
long context_switches(pid_t pid) {
  long total = 0;
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& tid : list_folder(tasks)) {
    std::ifstream in(tasks + "/" + tid + "/status");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
        total += std::stol(line.substr(line.find(':') + 1));
  }
  return total;
}

class ASystemdBus : public NervedTest {
 protected:
  void SetUp() override {
    NERVE_NEEDS_USER_MANAGER();  // how nerved reaches the user manager: the cgroup backend has none
    NervedTest::SetUp();
  }
  // A launch and a reap through nervectl: the manager is reached, whichever way.
  void launch_and_reap(const std::string& run) {
    Output launch = ctl({"launch", run, "--", "true"});
    ASSERT_EQ(launch.exit_code, 0) << launch.out << launch.err;
    Output reap = ctl({"reap", "--grace", kShortGraceArg, run});
    EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  }
  std::string log() { return read_file(nerved_log_).value_or(""); }
  // A runtime folder without the manager's private socket, for nerved alone.
  Env without_private_socket() {
    std::string empty = path("runtime");
    ::mkdir(empty.c_str(), 0700);
    return {{"XDG_RUNTIME_DIR", empty}};
  }
};

class APrivateSystemdBus : public ASystemdBus {
 public:
  APrivateSystemdBus() { nerved_args_ = {"--systemd-bus", "private"}; }
};

class ASessionSystemdBus : public ASystemdBus {
 public:
  ASessionSystemdBus() { nerved_args_ = {"--systemd-bus", "session"}; }
};

class AnAutoSystemdBus : public ASystemdBus {
 public:
  AnAutoSystemdBus() { nerved_args_ = {"--systemd-bus", "auto"}; }
};

// The default never waits on the manager: opening a private connection does (sdbus-c++ 1.2 flushes
// its handshake), so a stopped manager would stall nerved (docs/performance.md).
TEST_F(ASystemdBus, UsesTheSessionBusByDefault) {
  ASSERT_NO_FATAL_FAILURE(launch_and_reap("r1"));
  EXPECT_THAT(log(), HasSubstr("systemd user manager: through the session bus"));
  EXPECT_THAT(log(), Not(HasSubstr("through its private socket")));
}

TEST_F(AnAutoSystemdBus, UsesTheManagersPrivateSocketWhenItExists) {
  ASSERT_NO_FATAL_FAILURE(launch_and_reap("r1"));
  EXPECT_THAT(log(), HasSubstr("systemd user manager: through its private socket"));
  EXPECT_THAT(log(), Not(HasSubstr("using the session bus")));
}

TEST_F(APrivateSystemdBus, LaunchesAndReapsThroughThePrivateSocket) {
  ASSERT_NO_FATAL_FAILURE(launch_and_reap("r1"));
  EXPECT_THAT(log(), HasSubstr("systemd user manager: through its private socket"));
}

TEST_F(ASessionSystemdBus, LaunchesAndReapsThroughTheSessionBus) {
  ASSERT_NO_FATAL_FAILURE(launch_and_reap("r1"));
  EXPECT_THAT(log(), HasSubstr("systemd user manager: through the session bus"));
  EXPECT_THAT(log(), Not(HasSubstr("through its private socket")));
}

TEST_F(AnAutoSystemdBus, FallsBackToTheSessionBusWithoutAPrivateSocketAndSaysSo) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved(without_private_socket()));
  ASSERT_NO_FATAL_FAILURE(launch_and_reap("r1"));
  EXPECT_THAT(log(), HasSubstr("cannot be used"));
  EXPECT_THAT(log(), HasSubstr("using the session bus"));
}

TEST_F(APrivateSystemdBus, WithoutAPrivateSocketStartsNothingAndNeverFallsBack) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved(without_private_socket()));
  std::string marker = path("ran");
  Output launch = ctl({"launch", "r1", "--", "touch", marker});
  EXPECT_NE(launch.exit_code, 0) << launch.out;
  EXPECT_THAT(launch.err, HasSubstr("ContainmentUnavailable"));
  EXPECT_FALSE(read_file(marker)) << "the command ran without containment";
  EXPECT_THAT(log(), Not(HasSubstr("using the session bus")));
}

// A client of the manager on the session bus that is subscribed: the manager then sends every job's
// JobRemoved to the session bus, where any match for it would wake nerved.
struct SubscribedClient {
  std::unique_ptr<sdbus::IConnection> bus = sdbus::createSessionBusConnection();
  std::unique_ptr<sdbus::IProxy> manager = sdbus::createProxy(*bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1");
  SubscribedClient() { manager->callMethod("Subscribe").onInterface("org.freedesktop.systemd1.Manager"); }
};

// Waits (bounded) until PID made no context switch for 'quiet': its own timers have run out.
bool settles(pid_t pid, milliseconds quiet, milliseconds timeout) {
  return eventually(
      [&] {
        long before = context_switches(pid);
        std::this_thread::sleep_for(quiet);
        return context_switches(pid) == before;
      },
      timeout);
}

void unrelated_activity(int clients, int jobs) {
  for (int i = 0; i < clients; ++i) {
    auto bus = sdbus::createSessionBusConnection();
  }
  for (int i = 0; i < jobs; ++i) {
    Output job = run(command({"systemd-run", "--user", "--scope", "-q", "--", "true"}));
    EXPECT_EQ(job.exit_code, 0) << job.err;
  }
}

void expect_not_woken(pid_t nerved, const std::string& how) {
  // After a launch and a reap, nerved's link to the manager lingers for a quarter of a second.
  ASSERT_TRUE(settles(nerved, 500ms, 10'000ms)) << "nerved never went idle";
  SubscribedClient subscribed;
  long before = context_switches(nerved);
  unrelated_activity(20, 10);
  long woken = context_switches(nerved) - before;
  // Before the filtered matches each client and each job woke nerved at least once (30 here).
  EXPECT_LE(woken, 3) << "nerved (" << how << ") was woken " << woken
                      << " times by 20 unrelated bus clients and 10 unrelated systemd jobs";
}

TEST_F(APrivateSystemdBus, IdleIsNotWokenByUnrelatedClientsAndJobs) {
  ASSERT_NO_FATAL_FAILURE(launch_and_reap("r1"));
  Output supervised = ctl({"launch", "--wait", "r2", "--", "true"});
  ASSERT_EQ(supervised.exit_code, 0) << supervised.err;
  expect_not_woken(nerved_pid_, "private socket");
}

TEST_F(ASessionSystemdBus, IdleIsNotWokenByUnrelatedClientsAndJobs) {
  ASSERT_NO_FATAL_FAILURE(launch_and_reap("r1"));
  Output supervised = ctl({"launch", "--wait", "r2", "--", "true"});
  ASSERT_EQ(supervised.exit_code, 0) << supervised.err;
  expect_not_woken(nerved_pid_, "session bus");
}

}  // namespace
}  // namespace nerve::itest
