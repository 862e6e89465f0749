// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's process that asks the user manager for a scope of its own with the real
// `systemd-run --user --scope` (as podman's conmon and flatpak-spawn do): the reap finds that scope
// (run/escaped_scopes.h), reaps it first and names it in the receipt.
#include "nerved_fixture.h"
#include "backend_view.h"

#include "base/host.h"

#include <gmock/gmock.h>

#include <chrono>
#include <sstream>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class AnEscapedScope : public NervedTest {
 protected:
  void SetUp() override {
    NERVE_NEEDS_USER_MANAGER();  // a scope asked of the user manager (systemd-run --user --scope): none here
    NervedTest::SetUp();
  }
  enum class How {
    AsAChild,                  // systemd-run is a child of the run's shell, which lives on
    WithAClearedEnvironment,   // the same, under `env -i`
    WithItsParentGone,         // under `setsid -f`, whose parent exits at once: no ancestor in the run
  };
  // Launches run RUN whose shell runs `systemd-run --user --scope --unit=UNIT` (HOW) with a command
  // that writes its pid to MARKER and sleeps; the escaped pid, tracked.
  pid_t launch_escaping(const std::string& run, const std::string& unit, const std::string& marker,
                        How how = How::AsAChild) {
    std::string inner = "echo $$ > " + marker + ".tmp && mv " + marker + ".tmp " + marker + " && exec sleep 300";
    std::string escape = std::string(how == How::WithItsParentGone ? "setsid -f " : "") +
                         (how == How::WithAClearedEnvironment ? "env -i " : "env ") +
                         "XDG_RUNTIME_DIR=\"$XDG_RUNTIME_DIR\" " +
                         "systemd-run --user --scope --quiet --unit=" + unit + " /bin/sh -c '" + inner + "'";
    ctl_background(run, {"launch", "--grace", kShortGraceArg, run, "--", "/bin/sh", "-c", escape + "; sleep 300"});
    if (!wait_for_file(marker, 10s)) {
      ADD_FAILURE() << "the escaped command never wrote " << marker;
      return 0;
    }
    pid_t pid = read_pid_file(marker);
    track(pid, true);
    return pid;
  }
  // Reaps RUN (short grace) and checks that ESCAPED is gone and the receipt names UNIT, alone.
  void expect_reaped_with(const std::string& run, pid_t escaped, const std::string& unit) {
    Output reap = ctl({"reap", "--grace", kShortGraceArg, run});
    EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
    EXPECT_FALSE(alive(escaped)) << describe_process(escaped);
    Receipt r = receipt(run);
    ASSERT_EQ(r.escaped.size(), 1u);
    EXPECT_EQ(r.escaped[0].unit, unit);
  }
};

TEST_F(AnEscapedScope, IsReapedWithTheRunAndNamedInItsReceipt) {
  pid_t escaped = launch_escaping("r1", "escaped-r1.scope", path("marker"));
  ASSERT_GT(escaped, 0);
  Record rec = record("r1");
  // It really escaped: the user manager moved it out of the run's scope into one of its own.
  ASSERT_THAT(proc_cgroup(escaped).value_or("(gone)"), HasSubstr("/escaped-r1.scope"));
  ASSERT_NE(proc_cgroup(escaped).value_or(""), rec.cgroup);

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_THAT(reap.out, HasSubstr("run r1: complete"));
  EXPECT_THAT(reap.out, HasSubstr("escaped:       escaped-r1.scope (pids"));
  EXPECT_FALSE(alive(escaped)) << describe_process(escaped);

  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_EQ(r.escaped.size(), 1u);
  EXPECT_EQ(r.escaped[0].unit, "escaped-r1.scope");
  EXPECT_THAT(r.escaped[0].pids, ::testing::Contains(escaped));
  EXPECT_EQ(unit_property("escaped-r1.scope", "ActiveState"), "inactive");
}

TEST_F(AnEscapedScope, WithAClearedEnvironmentIsFoundByItsParentInTheRun) {
  pid_t escaped = launch_escaping("r1", "escaped-r1.scope", path("marker"), How::WithAClearedEnvironment);
  ASSERT_GT(escaped, 0);
  ASSERT_THAT(proc_cgroup(escaped).value_or("(gone)"), HasSubstr("/escaped-r1.scope"));
  expect_reaped_with("r1", escaped, "escaped-r1.scope");
}

// `systemd-run --scope` gives its command the new scope's INVOCATION_ID: with no ancestor in the run
// left, the run's NERVE_RUN and NERVE_RUN_ATTEMPT with that scope's own invocation id are what name it.
TEST_F(AnEscapedScope, WithItsParentGoneIsFoundByTheRunsVariablesInItsEnvironment) {
  pid_t escaped = launch_escaping("r1", "escaped-r1.scope", path("marker"), How::WithItsParentGone);
  ASSERT_GT(escaped, 0);
  ASSERT_THAT(proc_cgroup(escaped).value_or("(gone)"), HasSubstr("/escaped-r1.scope"));
  Record rec = record("r1");
  // Nothing between the escaped process and PID 1 is in the run any more.
  for (auto p = proc_parent(escaped); p && *p > 1; p = proc_parent(*p))
    ASSERT_NE(proc_cgroup(*p).value_or(""), rec.cgroup) << "pid " << *p << " is in the run";
  expect_reaped_with("r1", escaped, "escaped-r1.scope");
}

// What the search costs a reap: with 100 unrelated scopes of the manager present, against none.
// The figure is printed (docs/performance.md quotes it); the bound only catches a search gone wrong.
TEST_F(AnEscapedScope, SearchAmong100UnrelatedScopesCostsTheReapLittle) {
  auto reap_took = [this](const std::string& run) {
    std::string up = path(run + ".up");
    ctl_background(run, {"launch", "--grace", kShortGraceArg, run, "--", "/bin/sh", "-c", "touch " + up + "; exec sleep 300"});
    EXPECT_TRUE(wait_for_file(up, 10s));
    Output reap = ctl({"reap", "--grace", kShortGraceArg, run});
    EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
    return reap.took;  // the receipt's duration_usec counts the run's own scope only, not the search
  };
  milliseconds alone = reap_took("r0");
  // systemd-run --scope execs its command only once the scope is started: 100 lines read, 100 scopes.
  Output made = run(command({"/bin/sh", "-c",
                             "for i in $(seq 100); do systemd-run --user --scope --quiet --unit=idle-$i.scope "
                             "/bin/sh -c 'echo up; exec sleep 300 >/dev/null 2>&1' & done | head -n 100 >/dev/null"}),
                    60s);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  milliseconds among = reap_took("r1");
  std::cerr << "note: nervectl reap with no other scope " << alone.count() << " ms, among 100 unrelated scopes "
            << among.count() << " ms\n";
  EXPECT_TRUE(receipt("r1").escaped.empty());
  EXPECT_LT(among, alone + 2000ms) << "the search among 100 scopes took seconds";
  run(command({"systemctl", "--user", "kill", "--signal=KILL", "idle-*.scope"}));
}

// docs/sealing.md, "Keeping a run from the manager": a mount namespace of the command's own (with a
// user namespace, as any user may make here) that hides the manager's private socket and the bus
// socket, then a second user and mount namespace entered before the command, which locks those
// mounts: the command, root in its namespace, cannot unmount them, `systemd-run --user --scope` has
// nothing to ask, nothing escapes, and the reap finds none.
TEST_F(AnEscapedScope, CannotBeAskedForFromAMountNamespaceThatHidesTheManager) {
  std::string marker = path("marker");
  // Run by the command in the inner namespaces: the status of both unmounts and of systemd-run.
  std::string command =
      "umount \\$XDG_RUNTIME_DIR/systemd 2>/dev/null; a=\\$?; umount \\$XDG_RUNTIME_DIR/bus 2>/dev/null; b=\\$?; "
      "systemd-run --user --scope --quiet --unit=escaped-r1.scope /bin/true; "
      "echo \\$a \\$b \\$? > " + marker + ".tmp && mv " + marker + ".tmp " + marker;
  std::string hide =
      "mount -t tmpfs tmpfs \"$XDG_RUNTIME_DIR/systemd\" && mount --bind /dev/null \"$XDG_RUNTIME_DIR/bus\" && "
      "exec unshare --user --map-root-user --mount /bin/sh -c \"" + command + "\"";
  ctl_background("r1", {"launch", "--grace", kShortGraceArg, "r1", "--", "/bin/sh", "-c",
                        "unshare --user --map-root-user --mount /bin/sh -c '" + hide + "'; exec sleep 300"});
  ASSERT_TRUE(wait_for_file(marker, 10s)) << "the hidden manager was never tried";
  std::istringstream statuses(read_file(marker).value_or(""));
  int umount_private = 0, umount_bus = 0, systemd_run = 0;
  ASSERT_TRUE(statuses >> umount_private >> umount_bus >> systemd_run) << read_file(marker).value_or("");
  EXPECT_NE(umount_private, 0) << "the command unmounted what hides $XDG_RUNTIME_DIR/systemd";
  EXPECT_NE(umount_bus, 0) << "the command unmounted what hides $XDG_RUNTIME_DIR/bus";
  EXPECT_NE(systemd_run, 0) << "systemd-run reached the manager through the hidden sockets";
  EXPECT_NE(unit_property("escaped-r1.scope", "LoadState"), "loaded");
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_TRUE(receipt("r1").escaped.empty());
}

}  // namespace
}  // namespace nerve::itest
