// SPDX-License-Identifier: LGPL-2.1-or-later
// Sealed runs (docs/sealing.md): the command starts in a cgroup namespace rooted at its scope, and a
// sealed launch is refused, before anything runs, where the host cannot seal (cgroup2 without
// nsdelegate, as on the CI machine). Which tests run depends on the host, never silently: the others
// skip with the mount options that decided it.
#include "nerved_fixture.h"

#include "base/host.h"
#include "process/sealing.h"

#include <fcntl.h>
#include <csignal>
#include <gmock/gmock.h>
#include <sdbus-c++/sdbus-c++.h>
#include <unistd.h>

#include <filesystem>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kSealingUnavailable = "org.nerve.Lifecycle1.Error.SealingUnavailable";

// What this host allows, by the parser nerved uses, over the mount table of this test's namespace.
SealingStatus host_sealing() { return sealing_from_mountinfo(read_file("/proc/self/mountinfo").value_or("")); }

class ASealedLaunch : public NervedTest {
 protected:
  // The refusal leaves nothing: the command did not run, no record, no scope, no cgroup folder.
  void expect_nothing_started(const std::string& marker) {
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
    EXPECT_THAT(list_folder(runs_), IsEmpty()) << "a refused sealed launch created a run record";
    EXPECT_EQ(nerve_units(), "") << "a refused sealed launch started a scope";
    EXPECT_THAT(nerve_cgroup_folders(), IsEmpty());
  }

  // Launch over the bus from a helper process, with /dev/null as stdio, OPTIONS added.
  BusReply launch_over_bus(const std::string& run, const std::string& script,
                           std::map<std::string, sdbus::Variant> options) {
    return call_nerved([&](sdbus::IProxy& proxy) {
      int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
      std::vector<sdbus::UnixFd> stdio;
      for (int i = 0; i < 3; ++i) stdio.emplace_back(devnull);
      ::close(devnull);
      std::vector<std::string> argv{"/bin/sh", "-c", script}, env{"PATH=/usr/bin:/bin"};
      proxy.callMethod("Launch")
          .onInterface("org.nerve.Lifecycle1.Manager")
          .withArguments(run, argv, env, tmp_, stdio, options);
    });
  }
};

TEST_F(ASealedLaunch, IsRefusedWithSealingUnavailableBeforeAnythingRunsWhereCgroup2LacksNsdelegate) {
  SealingStatus host = host_sealing();
  if (host.available) GTEST_SKIP() << "this host can seal, so there is no refusal to test: " << host.detail;
  std::string marker = path("ran");
  for (bool wait : {false, true}) {
    SCOPED_TRACE(wait ? "launch --wait --sealed" : "launch --sealed");
    std::vector<std::string> args{"launch"};
    if (wait) args.push_back("--wait");
    args.insert(args.end(), {"--sealed", "s1", "--", "sh", "-c", "touch '" + marker + "'"});
    Output o = ctl(args);
    EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
    EXPECT_THAT(o.err, HasSubstr(kSealingUnavailable));
    EXPECT_THAT(o.err, HasSubstr("'s1' cannot be sealed"));
    EXPECT_THAT(o.err, HasSubstr("without nsdelegate")) << "the error must say why";
    EXPECT_THAT(o.err, HasSubstr("booted by systemd")) << "the error must say what the host needs";
    expect_nothing_started(marker);
  }
}

TEST_F(ASealedLaunch, OverTheBusIsRefusedTheSameWayBeforeTheChildIsForked) {
  SealingStatus host = host_sealing();
  if (host.available) GTEST_SKIP() << "this host can seal, so there is no refusal to test: " << host.detail;
  std::string marker = path("ran");
  BusReply r = launch_over_bus("s1", "touch '" + marker + "'", {{"sealed", sdbus::Variant(true)}});
  ASSERT_EQ(r.failure, "");
  EXPECT_EQ(r.error_name, kSealingUnavailable) << r.error_message;
  EXPECT_THAT(r.error_message, HasSubstr("without nsdelegate"));
  expect_nothing_started(marker);

  // sealed=false is no seal and no refusal.
  r = launch_over_bus("s2", "touch '" + marker + "'", {{"sealed", sdbus::Variant(false)}, {"keep", sdbus::Variant(true)}});
  EXPECT_EQ(r.error_name, "") << r.error_message;
  EXPECT_TRUE(wait_for_file(marker));
  EXPECT_EQ(ctl({"reap", "s2"}).exit_code, 0);
}

TEST_F(ASealedLaunch, WithANonBooleanSealedOptionIsRefusedAsInvalidArgumentOnEveryHost) {
  std::string marker = path("ran");
  BusReply r = launch_over_bus("s1", "touch '" + marker + "'", {{"sealed", sdbus::Variant(std::string("yes"))}});
  EXPECT_EQ(r.error_name, "org.nerve.Lifecycle1.Error.InvalidArgument") << r.error_message;
  EXPECT_THAT(r.error_message, HasSubstr("'sealed'"));
  r = call_nerved([](sdbus::IProxy& proxy) {
    std::map<std::string, sdbus::Variant> options{{"sealed", sdbus::Variant(1u)}};
    proxy.callMethod("Contain").onInterface("org.nerve.Lifecycle1.Manager").withArguments(std::string("s2"), std::uint64_t{0}, options);
  });
  EXPECT_EQ(r.error_name, "org.nerve.Lifecycle1.Error.InvalidArgument") << r.error_message;
  EXPECT_THAT(r.error_message, HasSubstr("'sealed' must be a boolean"));
  expect_nothing_started(marker);
}

TEST_F(ASealedLaunch, NervectlSealingSaysWhetherTheHostCanSealAndWhy) {
  SealingStatus host = host_sealing();
  Output o = ctl({"sealing"});
  EXPECT_EQ(o.exit_code, host.available ? 0 : 1) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr(host.available ? "sealing: available" : "sealing: unavailable"));
  EXPECT_THAT(o.out, HasSubstr(host.detail));
}

class ASealedRun : public ASealedLaunch {};

// The protection itself: only where the kernel enforces it.
TEST_F(ASealedRun, CannotMoveItselfOutOfItsScope) {
  SealingStatus host = host_sealing();
  if (!host.available) GTEST_SKIP() << "needs cgroup2 mounted with nsdelegate; here: " << host.detail;
  std::string seen = path("seen"), result = path("result"), ready = path("ready.pid");
  std::string script = "cat /proc/self/cgroup > '" + seen + "'; if echo $$ > '" + cgroup_root_ +
                       "/app.slice/cgroup.procs' 2>/dev/null; then echo moved; else echo refused; fi > '" + result +
                       "'; exec '" + kEscaper + "' --pidfile '" + ready + "'";
  pid_t launcher = ctl_background("launch", {"launch", "--sealed", "s1", "--", "sh", "-c", script});
  ASSERT_EQ(await_pidfile(ready), launcher);
  EXPECT_EQ(read_file(result).value_or(""), "refused\n") << "a sealed process moved itself out of its scope";
  EXPECT_THAT(lines_of(read_file(seen).value_or("")), ::testing::Contains("0::/"));
  EXPECT_EQ(proc_cgroup(launcher).value_or("(gone)"), record("s1").leaf);
  EXPECT_EQ(ctl({"reap", "--grace", "1", "s1"}).exit_code, 0);
  EXPECT_FALSE(alive(launcher));
}

// The mechanism, on any host: nerved is told to assume nsdelegate (test only), and each way of
// launching must start the command in a cgroup namespace rooted at its scope, as its own uid. (Without
// nsdelegate this protects nothing; that is why a real sealed launch is refused here.)
TEST_F(ASealedRun, StartsInACgroupNamespaceRootedAtItsScopeAsItsOwnUser) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"NERVE_TEST_ASSUME_NSDELEGATE", "1"}}));
  auto script = [&](const std::string& name) {
    // The uid file, awaited by the test, appears only once complete (rename).
    return "cat /proc/self/cgroup > '" + path(name + ".cgroup") + "'; id -u > '" + path(name + ".tmp") + "'; mv '" +
           path(name + ".tmp") + "' '" + path(name + ".uid") + "'";
  };
  auto expect_sealed = [&](const std::string& name) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(wait_for_file(path(name + ".uid")));
    EXPECT_THAT(lines_of(read_file(path(name + ".cgroup")).value_or("")), ::testing::Contains("0::/"))
        << "the command's cgroup namespace is not rooted at its scope";
    EXPECT_EQ(read_file(path(name + ".uid")).value_or(""), std::to_string(::getuid()) + "\n");
  };

  std::string ready = path("ready.pid");
  pid_t launcher = ctl_background(
      "launch", {"launch", "--sealed", "s1", "--", "sh", "-c", script("launch") + "; exec '" + kEscaper + "' --pidfile '" + ready + "'"});
  ASSERT_EQ(await_pidfile(ready), launcher);
  expect_sealed("launch");
  EXPECT_EQ(proc_cgroup(launcher).value_or("(gone)"), record("s1").leaf) << "seen from outside, it is in its scope";
  EXPECT_EQ(ctl({"reap", "--grace", "1", "s1"}).exit_code, 0);

  Output o = ctl({"launch", "--wait", "--sealed", "s2", "--", "sh", "-c", script("wait")});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  expect_sealed("wait");

  BusReply r = launch_over_bus("s3", script("bus"), {{"sealed", sdbus::Variant(true)}, {"keep", sdbus::Variant(true)}});
  EXPECT_EQ(r.error_name, "") << r.error_message;
  expect_sealed("bus");
  EXPECT_EQ(ctl({"reap", "s3"}).exit_code, 0);
  EXPECT_EQ(await_no_nerve_units(), "");
}

// Why a sealed launch is refused without nsdelegate: there, a process in a cgroup namespace rooted at
// its scope still moves itself out (the namespace is only a view). Made with the test switch.
TEST_F(ASealedRun, WouldNotBeSealedWithoutNsdelegateWhichIsWhyItIsRefused) {
  SealingStatus host = host_sealing();
  if (host.available) GTEST_SKIP() << "this host has nsdelegate, so the namespace does seal: " << host.detail;
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"NERVE_TEST_ASSUME_NSDELEGATE", "1"}}));
  std::string seen = path("seen"), ready = path("ready.pid");
  // Out of its scope into its slice (nerve.slice): two folders up from its run/ leaf, the namespace's
  // root.
  std::string script = "echo $$ > '" + cgroup_root_ + "/nerve.slice/cgroup.procs' && cat /proc/self/cgroup > '" +
                       seen + "'; exec '" + kEscaper + "' --pidfile '" + ready + "'";
  pid_t launcher = ctl_background("launch", {"launch", "--sealed", "s1", "--", "sh", "-c", script});
  ASSERT_EQ(await_pidfile(ready), launcher);
  EXPECT_THAT(lines_of(read_file(seen).value_or("")), ::testing::Contains("0::/../.."))
      << "inside its namespace, the process now sits above the namespace's root";
  EXPECT_EQ(proc_cgroup(launcher).value_or("(gone)"), "/nerve.slice") << "it left its scope";
  ::kill(launcher, SIGKILL);  // out of the scope, a reap would miss it
  EXPECT_TRUE(wait_gone(launcher, kEventTimeout));
  EXPECT_EQ(ctl({"reap", "--grace", "1", "s1"}).exit_code, 0);
}

}  // namespace
}  // namespace nerve::itest
