// SPDX-License-Identifier: LGPL-2.1-or-later
// Scopes a run's processes asked the manager for (run/escaped_scopes.h): found by the environment or
// the ancestry of their processes (real child processes of this test, so /proc is the real one),
// reaped before the run's own scope, named in the receipt.
#include "lifecycle_fixture.h"

#include "run/escaped_scopes.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

using namespace nerve;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Return;

extern char** environ;

namespace {

const std::string kOther = "run-r0a1b2c3.scope";
const std::string kOtherCgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/" + kOther;

class AnEscapedScope : public test::LifecycleTest {
 protected:
  ~AnEscapedScope() override {
    for (pid_t p : children_) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
  }

  // A sleeping child of this test with exactly 'env' as its environment.
  pid_t child(std::vector<std::string> env) {
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    char sleep_word[] = "sleep", hundred[] = "100";
    char* argv[] = {sleep_word, hundred, nullptr};
    pid_t pid = 0;
    EXPECT_EQ(::posix_spawn(&pid, "/bin/sleep", nullptr, nullptr, argv, envp.data()), 0);
    children_.push_back(pid);
    return pid;
  }

  // Run r1, running.
  Record running() {
    contained("r1");
    return test::load(store, "r1").value();
  }
  // Another scope of the manager (kOther) holds 'pid'.
  void other_scope_holds(const Record& r, pid_t pid) {
    units[kOther] = {std::string(32, 'b'), "active", kOtherCgroup, "/bin/sleep 100"};
    populated[kOtherCgroup] = true;
    cgroup_ids[kOtherCgroup] = 900;
    ON_CALL(systemd, list_scopes("*.scope"))
        .WillByDefault(Return(Result<std::vector<std::string>>(std::vector<std::string>{r.unit, kOther, "session-2.scope"})));
    ON_CALL(cgroups, pids(kOtherCgroup)).WillByDefault(Return(std::vector<pid_t>{pid}));
  }

  // Reaps r1 and checks that only its own scope was stopped and the receipt names no escaped scope.
  void reaped_with_no_escaped_scope(const Record& r) {
    auto& result = reap("r1");
    ASSERT_TRUE(result.receipt);
    EXPECT_THAT(events, ElementsAre("start " + r.unit, "stop " + r.unit));
    EXPECT_THAT(result.receipt->escaped, IsEmpty());
  }

 private:
  std::vector<pid_t> children_;
};

}  // namespace

TEST_F(AnEscapedScope, WhoseProcessCarriesTheRunsVariablesIsReapedFirstAndNamedInTheReceipt) {
  Record r = running();
  pid_t p = child({"NERVE_RUN=r1", "PATH=/usr/bin", "INVOCATION_ID=" + r.invocation_id});
  other_scope_holds(r, p);
  auto& result = reap("r1");
  ASSERT_TRUE(result.receipt);
  EXPECT_EQ(result.receipt->outcome, Outcome::Complete);
  EXPECT_THAT(events, ElementsAre("start " + r.unit, "stop " + kOther, "stop " + r.unit));
  ASSERT_EQ(result.receipt->escaped.size(), 1u);
  EXPECT_EQ(result.receipt->escaped[0].unit, kOther);
  EXPECT_THAT(result.receipt->escaped[0].pids, ElementsAre(p));
  EXPECT_EQ(test::load_receipt(store, "r1")->escaped.size(), 1u);
}

TEST_F(AnEscapedScope, IsLeftAloneWhenItsProcessHasAnotherInvocationId) {
  Record r = running();
  other_scope_holds(r, child({"NERVE_RUN=r1", "INVOCATION_ID=" + std::string(32, 'c')}));
  reaped_with_no_escaped_scope(r);
}

// What `systemd-run --scope` leaves in its command's environment: the run's NERVE_RUN and
// NERVE_RUN_ATTEMPT, and INVOCATION_ID replaced by the invocation id of its own new scope.
TEST_F(AnEscapedScope, WhoseProcessCarriesTheInvocationIdOfItsOwnScopeAndTheRunsAttemptIsTheRuns) {
  Record r = running();
  pid_t p = child({"NERVE_RUN=r1", "NERVE_RUN_ATTEMPT=" + std::to_string(r.attempt), "INVOCATION_ID=" + std::string(32, 'b')});
  other_scope_holds(r, p);
  auto& result = reap("r1");
  ASSERT_TRUE(result.receipt);
  EXPECT_THAT(events, ElementsAre("start " + r.unit, "stop " + kOther, "stop " + r.unit));
  ASSERT_EQ(result.receipt->escaped.size(), 1u);
  EXPECT_THAT(result.receipt->escaped[0].pids, ElementsAre(p));
}

TEST_F(AnEscapedScope, WithTheInvocationIdOfItsOwnScopeButAnotherAttemptIsLeftAlone) {
  Record r = running();
  other_scope_holds(r, child({"NERVE_RUN=r1", "NERVE_RUN_ATTEMPT=" + std::to_string(r.attempt + 1),
                              "INVOCATION_ID=" + std::string(32, 'b')}));
  reaped_with_no_escaped_scope(r);
}

TEST_F(AnEscapedScope, WithoutTheRunsVariablesIsFoundByAnAncestorInTheRunsCgroup) {
  Record r = running();
  other_scope_holds(r, child({}));  // a cleared environment; its parent (this test) stands for the run's shell
  ON_CALL(cgroups, member_of(::getpid())).WillByDefault(Return(std::optional<std::string>(r.cgroup)));
  auto& result = reap("r1");
  ASSERT_TRUE(result.receipt);
  EXPECT_THAT(events, ElementsAre("start " + r.unit, "stop " + kOther, "stop " + r.unit));
  ASSERT_EQ(result.receipt->escaped.size(), 1u);
}

// Every process of a run descends from its first one: a process that started before it (by its
// start time; here one clock tick before) is none of the run's, whatever its environment says.
TEST_F(AnEscapedScope, IsLeftAloneWhenItsProcessStartedBeforeTheRun) {
  Record r = running();
  pid_t p = child({"NERVE_RUN=r1", "INVOCATION_ID=" + r.invocation_id});
  ON_CALL(cgroups, start_time(p)).WillByDefault(Return(std::optional<std::uint64_t>(test::kLeaderStartTime - 1)));
  other_scope_holds(r, p);
  reaped_with_no_escaped_scope(r);
}

// An ancestor in the run's cgroup that started before the run was moved there, not forked there: its
// older children are not the run's, and the walk up stops at it.
TEST_F(AnEscapedScope, IsLeftAloneWhenItsAncestorInTheRunsCgroupStartedBeforeTheRun) {
  Record r = running();
  other_scope_holds(r, child({}));
  ON_CALL(cgroups, member_of(::getpid())).WillByDefault(Return(std::optional<std::string>(r.cgroup)));
  ON_CALL(cgroups, start_time(::getpid())).WillByDefault(Return(std::optional<std::uint64_t>(test::kLeaderStartTime - 1)));
  reaped_with_no_escaped_scope(r);
}

TEST_F(AnEscapedScope, NotSearchedForBecauseTheListingFailedLeavesTheReapPending) {
  contained("r1");
  ON_CALL(systemd, list_scopes("*.scope")).WillByDefault(Return(Result<std::vector<std::string>>(
      Error{"org.freedesktop.DBus.Error.NoReply", "no reply"})));
  auto& result = reap("r1");
  ASSERT_TRUE(result.receipt);
  EXPECT_EQ(result.receipt->outcome, Outcome::PendingRetry);
  EXPECT_THAT(result.receipt->error, HasSubstr("cannot list the user manager's scopes"));
}

TEST(EscapedScopeNames, NeverTakeNervesOwnScopesOrTheManagersInitScope) {
  EXPECT_TRUE(never_escaped("nerve-r1-0123456789abcdef.scope"));
  EXPECT_TRUE(never_escaped("init.scope"));
  EXPECT_FALSE(never_escaped("run-r0a1b2c3.scope"));
  EXPECT_FALSE(never_escaped("xinit.scope"));
}

// The manager holds itself in init.scope and never moves a process there: each reap would otherwise
// look it up and read every process in it (where nerved itself may run, that is all of them).
TEST_F(AnEscapedScope, TheManagersInitScopeIsNeverLookedUp) {
  Record r = running();
  ON_CALL(systemd, list_scopes("*.scope"))
      .WillByDefault(Return(Result<std::vector<std::string>>(std::vector<std::string>{r.unit, "init.scope"})));
  EXPECT_CALL(systemd, lookup(::testing::_)).Times(::testing::AnyNumber());
  EXPECT_CALL(systemd, lookup("init.scope")).Times(0);
  auto& result = reap("r1");
  ASSERT_TRUE(result.receipt);
  EXPECT_EQ(result.receipt->outcome, Outcome::Complete);
}
