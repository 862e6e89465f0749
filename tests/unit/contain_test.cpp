// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/contain.h"

#include "doubles.h"
#include "base/errors.h"
#include "run/reap_decision.h"
#include "base/run_id.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace nerve;
using namespace std::chrono_literals;
using ::testing::_;
using ::testing::DoAll;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;
using ::testing::SaveArg;

namespace {

constexpr pid_t kPid = 4321;
const std::string kCgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/the.scope";
constexpr std::uint64_t kId = 77;

// A contain of run r1 whose scope starts when job_ends() is called and then looks as it should:
// active, with an InvocationID and a cgroup that holds the pid.
class AContainOp : public ::testing::Test, protected test::World {
 protected:
  ContainRequest request{"r1", kPid, 5'000'000, false, {OwnerKind::Process, 99, 12345, ""}, {}, "", 0};
  ScopeSpec spec;
  Done<void> job_done;
  UnitState unit{test::kInvocationId, "active", kCgroup, ""};
  std::optional<ContainReply> reply;
  std::optional<Error> error;

  AContainOp() {
    ON_CALL(systemd, start_scope).WillByDefault(DoAll(SaveArg<0>(&spec), SaveArg<1>(&job_done)));
    ON_CALL(systemd, lookup).WillByDefault(Invoke([this](const std::string&) { return Result<UnitState>(unit); }));
    ON_CALL(cgroups, member_of(kPid)).WillByDefault(Return(kCgroup));
    ON_CALL(cgroups, id(kCgroup)).WillByDefault(Return(kId));
  }

  void contain(unsigned attempt = 1) {
    ContainOp::start(deps, request, attempt, [this](Result<ContainReply> r) {
      if (r)
        reply = *r;
      else
        error = r.error();
    });
  }
  void job_ends(Result<void> job = {}) {
    ASSERT_TRUE(job_done) << "no scope was asked for";
    job_done(std::move(job));
  }
  RunState state_on_disk() const { return test::load(store, "r1").value().state; }
};

}  // namespace

TEST_F(AContainOp, WritesTheIntentRecordBeforeItAsksForTheScope) {
  EXPECT_CALL(systemd, start_scope).WillOnce(Invoke([this](const ScopeSpec& spec, auto) {
    auto r = test::load(store, "r1");
    ASSERT_TRUE(r) << "no record on disk when the scope was asked for";
    EXPECT_EQ(r->state, RunState::Launching);
    EXPECT_EQ(r->unit, spec.unit);
    EXPECT_EQ(r->nonce.size(), 16u);
    EXPECT_EQ(r->boot_id, test::kBootId);
    EXPECT_EQ(r->attempt, 1u);
    EXPECT_EQ(r->leader_pid, kPid);
    EXPECT_EQ(r->owner.pid, 99);
  }));
  contain();
}

TEST_F(AContainOp, NamesTheScopeWithItsNonceAndPutsTheNonceInTheDescription) {
  contain(3);
  const Record r = test::load(store, "r1").value();
  EXPECT_EQ(spec.unit, scope_unit_name("r1", r.nonce));
  EXPECT_TRUE(is_valid_unit_name(spec.unit));
  EXPECT_THAT(spec.description, HasSubstr("nonce=" + r.nonce));
  EXPECT_EQ(spec.description, scope_description(r));
  EXPECT_EQ(spec.pid, kPid);
  EXPECT_EQ(spec.stop_timeout_usec, 5'000'000u);
}

TEST_F(AContainOp, UsesANewNonceForEveryAttempt) {
  contain(1);
  const std::string first = spec.unit;
  contain(2);
  EXPECT_NE(spec.unit, first);
}

TEST_F(AContainOp, WritesTheRunningRecordBeforeItReplies) {
  ContainOp::start(deps, request, 1, [this](Result<ContainReply> r) {
    ASSERT_TRUE(r) << r.error().message;
    auto on_disk = test::load(store, "r1");
    ASSERT_TRUE(on_disk);
    EXPECT_EQ(on_disk->state, RunState::Running);
    EXPECT_EQ(on_disk->invocation_id, test::kInvocationId);
    EXPECT_EQ(on_disk->cgroup, kCgroup);
    EXPECT_EQ(on_disk->cgroup_id, kId);
    reply = *r;
  });
  job_ends();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->unit, spec.unit);
  EXPECT_EQ(reply->invocation_id, test::kInvocationId);
  EXPECT_EQ(reply->cgroup, kCgroup);
  EXPECT_EQ(reply->attempt, 1u);
}

TEST_F(AContainOp, DoesNotReplyBeforeTheJobEnds) {
  contain();
  EXPECT_FALSE(reply);
  EXPECT_FALSE(error);
}

TEST_F(AContainOp, FailsWithScopeFailedAndMarksTheRecordFailedWhenTheJobIsNotDone) {
  contain();
  job_ends(Error{systemd_error::JobFailed, "its job ended with result 'failed'"});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("'failed'"));
  EXPECT_FALSE(reply);
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

TEST_F(AContainOp, FailsWithScopeFailedWhenTheUnitIsNotActive) {
  unit.active_state = "inactive";
  contain();
  job_ends();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("inactive"));
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

TEST_F(AContainOp, FailsWithScopeFailedWhenTheUnitCannotBeReadAfterItsStart) {
  EXPECT_CALL(systemd, lookup).WillOnce(Return(test::query_failed("org.freedesktop.DBus.Error.AccessDenied")));
  contain();
  job_ends();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

TEST_F(AContainOp, FailsWithScopeFailedWhenThePidIsInAnotherCgroup) {
  EXPECT_CALL(cgroups, member_of(kPid)).WillOnce(Return(std::string("/user.slice/elsewhere.scope")));
  contain();
  job_ends();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("'/user.slice/elsewhere.scope'"));
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

TEST_F(AContainOp, FailsWithScopeFailedWhenThePidIsGone) {
  EXPECT_CALL(cgroups, member_of(kPid)).WillOnce(Return(std::nullopt));
  contain();
  job_ends();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
}

TEST_F(AContainOp, FailsWithScopeFailedWhenTheCgroupIsNotVisible) {
  EXPECT_CALL(cgroups, id(kCgroup)).WillOnce(Return(std::nullopt));
  contain();
  job_ends();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

TEST_F(AContainOp, FailsWithRecordFailedAndAsksForNoScopeWhenTheIntentCannotBeWritten) {
  std::ofstream(store.run_path("r1")) << "a file where the run folder belongs";
  EXPECT_CALL(systemd, start_scope).Times(0);
  contain();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::RecordFailed);
  EXPECT_THAT(error->message, HasSubstr(store.run_path("r1")));
}

TEST_F(AContainOp, FailsWithInvalidRunIdForARunThatMakesNoUnitName) {
  request.run = "a/b";
  EXPECT_CALL(systemd, start_scope).Times(0);
  contain();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::InvalidRunId);
  EXPECT_TRUE(std::filesystem::is_empty(store.path()));
}

// A start job whose JobRemoved never comes (a stalled or restarted manager) fails
// the attempt after kStartJobTimeout (30 s) instead of keeping the run busy for ever; a late end of
// the job is ignored.
TEST_F(AContainOp, FailsWithScopeFailedWhenTheStartJobNeverEnds) {
  contain();
  ASSERT_TRUE(job_done) << "no scope was asked for";
  timers.advance(std::chrono::minutes(2));
  ASSERT_TRUE(error) << "the contain is still waiting for its start job";
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("did not finish"));
  EXPECT_EQ(state_on_disk(), RunState::Failed);
  job_ends();
  EXPECT_FALSE(reply) << "a late job end made a failed attempt succeed";
}

// On systemd 252 the pid goes to StartTransientUnit as a number (PIDs; PIDFDs is
// not supported). If the process ended and its pid was reused before systemd moved it, the scope
// holds another process: the start time read at the request and after the move tells them apart.
TEST_F(AContainOp, RefusesAProcessWhosePidWasReusedBeforeSystemdMovedIt) {
  EXPECT_CALL(cgroups, start_time(kPid))
      .WillOnce(Return(std::optional<std::uint64_t>(1000)))   // the process that asked
      .WillRepeatedly(Return(std::optional<std::uint64_t>(2000)));  // another one, same pid
  contain();
  job_ends();
  ASSERT_TRUE(error) << "a process that reused the pid was taken for the one to contain";
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("start time is 2000, not 1000 (the pid was reused)"));
  EXPECT_FALSE(reply);
  EXPECT_EQ(state_on_disk(), RunState::Failed);
  EXPECT_EQ(test::load(store, "r1")->leader_start_time, 1000u);
}

TEST_F(AContainOp, ContainsTheProcessWhoseStartTimeIsUnchanged) {
  EXPECT_CALL(cgroups, start_time(kPid)).WillRepeatedly(Return(std::optional<std::uint64_t>(1000)));
  contain();
  job_ends();
  ASSERT_TRUE(reply) << error->message;
  EXPECT_EQ(test::load(store, "r1")->leader_start_time, 1000u);
}

TEST_F(AContainOp, AsksForNoScopeWhenTheProcessIsAlreadyGone) {
  ON_CALL(cgroups, start_time(kPid)).WillByDefault(Return(std::nullopt));
  EXPECT_CALL(systemd, start_scope).Times(0);
  contain();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("is gone"));
  EXPECT_TRUE(std::filesystem::is_empty(store.path())) << "no record for an attempt that started nothing";
}

// 5,000-run soak: a manager busy with thousands of units answered a started scope's lookup after the
// call's deadline; the scope was fine, but the launch failed. A timed-out lookup is asked again.
TEST_F(AContainOp, AsksForTheScopeAgainWhenItsLookupTimesOut) {
  EXPECT_CALL(systemd, lookup)
      .WillOnce(Return(test::query_failed("org.freedesktop.DBus.Error.NoReply")))
      .WillOnce(Return(test::query_failed("org.freedesktop.DBus.Error.Timeout")))
      .WillOnce(Return(Result<UnitState>(unit)));
  contain();
  job_ends();
  ASSERT_TRUE(reply) << (error ? error->message : "no answer");
  EXPECT_EQ(state_on_disk(), RunState::Running);
}

TEST_F(AContainOp, FailsWhenEveryLookupOfTheScopeTimesOut) {
  EXPECT_CALL(systemd, lookup).Times(kScopeLookupTries).WillRepeatedly(Return(test::query_failed("org.freedesktop.DBus.Error.NoReply")));
  contain();
  job_ends();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("NoReply"));
}

namespace {

constexpr std::uint64_t kRunLeafId = 78;

// A contain with holders: the scope gets a holder, and then its leaves.
class AContainWithAHolder : public AContainOp {
 protected:
  ::testing::NiceMock<test::MockHolders> holders;
  AContainWithAHolder() {
    deps.holders = &holders;
    ON_CALL(cgroups, member_of(test::kHolderPid)).WillByDefault(Return(kCgroup));
    ON_CALL(cgroups, make_leaves(kCgroup, kId, kPid, test::kHolderPid))
        .WillByDefault(Return(Result<Leaves>(Leaves{kRunLeafId, "memory pids", ""})));
  }
};

}  // namespace

TEST_F(AContainWithAHolder, PutsTheHolderIntoTheScopeWithThePid) {
  contain();
  EXPECT_EQ(spec.pid, kPid);
  EXPECT_EQ(spec.holder, test::kHolderPid);
}

TEST_F(AContainWithAHolder, MakesTheLeavesAfterTheMembershipCheckAndRecordsTheLeaf) {
  contain();
  EXPECT_CALL(cgroups, make_leaves(kCgroup, kId, kPid, test::kHolderPid));
  EXPECT_CALL(holders, kill).Times(0);
  job_ends();
  ASSERT_TRUE(reply) << (error ? error->message : "");
  auto r = test::load(store, "r1");
  EXPECT_EQ(r->leaf, kCgroup + "/run");
  EXPECT_EQ(r->leaf_id, kRunLeafId);
}

// No run goes on without its leaf: its receipt could not have its figures. The command is not
// started, the record says failed, and the holder goes so that the scope empties.
TEST_F(AContainWithAHolder, RefusesAndKillsTheHolderWhenTheLeavesCannotBeMade) {
  ON_CALL(cgroups, make_leaves).WillByDefault(Return(Result<Leaves>(Error{"nerve.Cgroup.LeavesFailed", "mkdir run: EACCES"})));
  contain();
  EXPECT_CALL(holders, kill(test::kHolderPid));
  job_ends();
  ASSERT_FALSE(reply) << "the command was told to exec without a leaf";
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("mkdir run: EACCES"));
  EXPECT_THAT(error->message, HasSubstr("was not started"));
  EXPECT_THAT(error->message, HasSubstr("Delegate=yes"));
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

TEST_F(AContainWithAHolder, RefusesWhenTheHolderIsNotInTheScope) {
  ON_CALL(cgroups, member_of(test::kHolderPid)).WillByDefault(Return(std::string("/elsewhere")));
  EXPECT_CALL(cgroups, make_leaves).Times(0);
  contain();
  EXPECT_CALL(holders, kill(test::kHolderPid));
  job_ends();
  ASSERT_FALSE(reply);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ScopeFailed);
  EXPECT_THAT(error->message, HasSubstr("'/elsewhere'"));
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

TEST_F(AContainWithAHolder, KillsTheHolderWhenTheScopeFails) {
  contain();
  EXPECT_CALL(holders, kill(test::kHolderPid));
  job_ends(Error{systemd_error::JobFailed, "job failed"});
  EXPECT_TRUE(error);
}

// A holder that cannot be started (nerve-hold not installed): no scope is asked for and the command
// does not start; the error says why and what to do.
TEST_F(AContainWithAHolder, RefusesWithoutAScopeWhenNoHolderCanBeStarted) {
  ON_CALL(holders, spawn).WillByDefault(Return(Result<pid_t>(Error{"nerve.Holder.SpawnFailed", "cannot start the scope holder /x/nerve-hold: No such file or directory"})));
  EXPECT_CALL(systemd, start_scope).Times(0);
  contain();
  ASSERT_FALSE(reply);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->name, error::ContainmentUnavailable);
  EXPECT_THAT(error->message, HasSubstr("/x/nerve-hold"));
  EXPECT_THAT(error->message, HasSubstr("the command was not started"));
  EXPECT_THAT(error->message, HasSubstr("NERVE_HOLD_HELPER"));
  EXPECT_EQ(state_on_disk(), RunState::Failed);
}

// The caller is told to exec only once the record says released, and the running record is that one
// write: a nerved that dies before it leaves the launching intent, which says the command never
// started (reconcile.h), as a running record that is not released would, at one write less a launch.
TEST_F(AContainWithAHolder, WritesTheRunningRecordOnceAndReleasedBeforeItReplies) {
  std::optional<Record> at_reply;
  std::vector<Record> written;
  store.set_observer([&written](const std::string&, const StoreChange& c) {
    if (c.after) written.push_back(*c.after);
  });
  ContainOp::start(deps, request, 1, [this, &at_reply](Result<ContainReply> r) {
    ASSERT_TRUE(r) << r.error().message;
    at_reply = test::load(store, "r1");
  });
  EXPECT_FALSE(test::load(store, "r1")->released) << "the intent says released";
  job_ends();
  ASSERT_TRUE(at_reply);
  EXPECT_EQ(at_reply->state, RunState::Running);
  EXPECT_TRUE(at_reply->released) << "the caller was told to exec before the record said so";
  ASSERT_EQ(written.size(), 2u) << "a launch writes its intent and its running record, nothing more";
  EXPECT_EQ(written[0].state, RunState::Launching);
  EXPECT_EQ(written[1].state, RunState::Running);
  EXPECT_TRUE(written[1].released);
}
