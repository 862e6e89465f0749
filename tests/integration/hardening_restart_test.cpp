// SPDX-License-Identifier: LGPL-2.1-or-later
// Reap-on-exit and exit statuses across a restart of nerved. A Launch'd command
// that ends while nerved is down still gets its run reaped (an escaped descendant does not live on)
// and its RunExited once nerved is back.
#include "hardening_support.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;
using Options = std::map<std::string, sdbus::Variant>;

class HardeningRestart : public Hardening {
 protected:
  void TearDown() override {
    manager_.reset();
    bus_.reset();
    Hardening::TearDown();
  }
  std::unique_ptr<sdbus::IConnection> bus_;
  std::unique_ptr<sdbus::IProxy> manager_;
};

TEST_F(HardeningRestart, ACommandThatEndsWhileNervedIsDownIsReapedOnExitAfterTheRestart) {
  bus_ = sdbus::createSessionBusConnection();
  manager_ = sdbus::createProxy(*bus_, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
  std::vector<std::string> exited;
  manager_->uponSignal("RunExited").onInterface("org.nerve.Lifecycle1.Manager").call(
      [&](const std::string& run, std::int32_t code, std::int32_t sig, const std::string& cause) {
        exited.push_back(run + " " + std::to_string(code) + " " + std::to_string(sig) + " " + cause);
      });
  manager_->finishRegistration();

  // The command: an escaped descendant (pidfile), then it waits for its stdin to close.
  int in[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  std::string pidfile = path("escaped.pid");
  Options o;
  o["grace_usec"] = sdbus::Variant(std::uint64_t{1'000'000});
  o["reap_on_exit"] = sdbus::Variant(true);
  std::vector<sdbus::UnixFd> stdio;
  stdio.emplace_back(in[0], sdbus::adopt_fd);
  stdio.emplace_back(::open("/dev/null", O_WRONLY | O_CLOEXEC), sdbus::adopt_fd);
  stdio.emplace_back(::open("/dev/null", O_WRONLY | O_CLOEXEC), sdbus::adopt_fd);
  std::string script = "'" + kEscaper + "' --pidfile '" + pidfile + "' </dev/null & read x";
  sdbus::ObjectPath object;
  std::uint32_t pid = 0;
  manager_->callMethod("Launch").onInterface("org.nerve.Lifecycle1.Manager")
      .withArguments(std::string("rx"), std::vector<std::string>{"sh", "-c", script},
                     std::vector<std::string>{"PATH=/usr/bin:/bin"}, tmp_, stdio, o)
      .storeResultsTo(object, pid);
  stdio.clear();
  track(static_cast<pid_t>(pid), false);
  pid_t escaped = await_pidfile(pidfile);
  ASSERT_GT(escaped, 0);
  EXPECT_TRUE(record("rx").reap_on_exit);
  EXPECT_NE(record("rx").leader_start_time, 0u);

  // nerved dies; the command ends while it is down; nerved comes back.
  ASSERT_EQ(::kill(nerved_pid_, SIGKILL), 0);
  wait_child(nerved_pid_, 5000ms);
  nerved_pid_ = -1;
  ::close(in[1]);
  ASSERT_TRUE(wait_gone(static_cast<pid_t>(pid), 5000ms));
  ASSERT_NO_FATAL_FAILURE(start_nerved());

  EXPECT_TRUE(wait_gone(escaped, 10'000ms)) << "the escaped descendant of a finished command lives on:\n" << log();
  EXPECT_TRUE(await_state({"rx"}, "reaped", 10'000ms));
  auto deadline = Clock::now() + 5000ms;
  while (exited.empty() && Clock::now() < deadline) {
    while (bus_->processPendingRequest()) {
    }
    auto pd = bus_->getEventLoopPollData();
    pollfd p{pd.fd, pd.events, 0};
    ::poll(&p, 1, 100);
  }
  // Not nerved's child after the restart: the exit status is unknown, said as -1 with signal 0.
  EXPECT_EQ(exited, std::vector<std::string>{"rx -1 0 exited"}) << "no RunExited after the restart";
  EXPECT_EQ(to_string(receipt("rx").cause.value_or(Cause::Reaped)), "exited");
}

}  // namespace
}  // namespace nerve::itest
