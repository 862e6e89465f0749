// SPDX-License-Identifier: LGPL-2.1-or-later
// The caller's uid: nerved checks it on every call that changes something (Reap, Cancel, Forget and
// Reconcile among them; AccessDenied), and the session bus already keeps
// other users out: a process of another uid cannot even connect to it, so cannot reach nerved.
#include "hardening_support.h"

#include <gmock/gmock.h>
#include <sys/wait.h>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;

class HardeningAccess : public Hardening {};

TEST_F(HardeningAccess, AnotherUidCannotReachNervedOnTheSessionBus) {
  if (::geteuid() != 0) GTEST_SKIP() << "becoming another uid needs root (CAP_SETUID); the root pass of the suite runs this";
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(p[0]);
    std::string said;
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
      said = "setuid failed";
    } else {
      try {
        auto bus = sdbus::createSessionBusConnection();
        auto proxy = sdbus::createProxy(*bus, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
        proxy->callMethod("Reap").onInterface("org.nerve.Lifecycle1.Manager").withArguments(std::string("r1"), std::uint64_t{0});
        said = "reached nerved";
      } catch (const sdbus::Error& e) {
        said = e.getName();
      }
    }
    (void)!::write(p[1], said.data(), said.size());
    ::_exit(0);
  }
  ::close(p[1]);
  bool eof = false;
  std::string said = read_until_eof(p[0], 10'000ms, &eof);
  ::close(p[0]);
  wait_child(pid, 5000ms);
  EXPECT_NE(said, "reached nerved");
  EXPECT_NE(said, "setuid failed");
  // Either the bus refuses the connection, or nerved answers AccessDenied.
  EXPECT_THAT(said, ::testing::AnyOf(::testing::HasSubstr("org.freedesktop.DBus.Error"),
                                     ::testing::HasSubstr("AccessDenied"), ::testing::HasSubstr("sdbus.Error")))
      << said;
  EXPECT_TRUE(alive(nerved_pid_));
}

}  // namespace
}  // namespace nerve::itest
