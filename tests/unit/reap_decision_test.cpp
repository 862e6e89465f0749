// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/reap_decision.h"

#include "doubles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace nerve;
using nerve::test::found;
using nerve::test::kBootId;
using nerve::test::kCgroupId;
using ::testing::HasSubstr;

namespace {

class AReapDecision : public ::testing::Test {
 protected:
  Record record = test::running_record();
  Result<UnitState> lookup = found(record);
  std::optional<std::uint64_t> live_id = kCgroupId;
  BackendKind backend = BackendKind::Systemd;

  ReapDecision decide() const { return decide_reap(record, kBootId, backend, lookup, live_id); }
};

const Result<UnitState> kNoSuchUnit = test::not_loaded();

}  // namespace

TEST_F(AReapDecision, IsNoScopeForARecordOfAnotherBootEvenIfItsUnitLooksAlive) {
  record.boot_id = "ffffffffffffffffffffffffffffffff";
  auto d = decide();
  EXPECT_EQ(d.action, ReapAction::NoScope);
  EXPECT_THAT(d.reason, HasSubstr("boot"));
}

// A record of the cgroup backend read by a nerved on the systemd backend, and the other way round:
// on this boot its processes may live, and its unit or folder is not this backend's to stop. Kept
// (Retry), never NoScope and never a signal, and the reason names the backend that would reap it.
TEST_F(AReapDecision, IsRetryForARecordOfTheOtherBackendEvenIfItsUnitLooksAlive) {
  record.backend = BackendKind::Cgroup;
  auto d = decide();
  EXPECT_EQ(d.action, ReapAction::Retry);
  EXPECT_THAT(d.reason, HasSubstr("--backend cgroup"));
  record.backend = BackendKind::Systemd;
  backend = BackendKind::Cgroup;
  lookup = kNoSuchUnit;
  live_id = std::nullopt;
  d = decide();
  EXPECT_EQ(d.action, ReapAction::Retry);
  EXPECT_THAT(d.reason, HasSubstr("--backend systemd"));
}

TEST_F(AReapDecision, IsNoScopeForARecordOfTheOtherBackendFromAnotherBoot) {
  record.backend = BackendKind::Cgroup;
  record.boot_id = "ffffffffffffffffffffffffffffffff";
  EXPECT_EQ(decide().action, ReapAction::NoScope);
}

TEST_F(AReapDecision, IsNoScopeWhenNoScopeWasEverRequested) {
  record.unit.clear();
  EXPECT_EQ(decide().action, ReapAction::NoScope);
}

TEST_F(AReapDecision, IsRetryWhenTheQueryFailedNamingTheError) {
  lookup = test::query_failed("org.freedesktop.DBus.Error.Timeout");
  auto d = decide();
  EXPECT_EQ(d.action, ReapAction::Retry);
  EXPECT_THAT(d.reason, HasSubstr("org.freedesktop.DBus.Error.Timeout"));
}

TEST_F(AReapDecision, IsRetryNeverNoScopeWhenTheQueryFailedAndTheCgroupLooksGone) {
  lookup = Error{"org.freedesktop.DBus.Error.NoReply", "timeout"};
  live_id = std::nullopt;
  EXPECT_EQ(decide().action, ReapAction::Retry);
}

TEST_F(AReapDecision, IsNoScopeWhenTheUnitIsUnknownAndItsCgroupIsGone) {
  lookup = kNoSuchUnit;
  live_id = std::nullopt;
  EXPECT_EQ(decide().action, ReapAction::NoScope);
}

TEST_F(AReapDecision, IsKillCgroupWhenTheUnitIsUnknownButItsCgroupIsStillThere) {
  lookup = kNoSuchUnit;
  EXPECT_EQ(decide().action, ReapAction::KillCgroup);
}

TEST_F(AReapDecision, IsRefuseWhenTheUnitIsUnknownAndItsCgroupFolderHasAnotherId) {
  lookup = kNoSuchUnit;
  live_id = kCgroupId + 1;
  EXPECT_EQ(decide().action, ReapAction::Refuse);
}

TEST_F(AReapDecision, IsRefuseWhenTheUnitIsUnknownAndTheCgroupIdWasNeverRecorded) {
  lookup = kNoSuchUnit;
  record.cgroup_id = 0;
  EXPECT_EQ(decide().action, ReapAction::Refuse);
}

TEST_F(AReapDecision, IsRefuseWhenTheInvocationIdDiffers) {
  lookup->invocation_id = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
  auto d = decide();
  EXPECT_EQ(d.action, ReapAction::Refuse);
  EXPECT_THAT(d.reason, HasSubstr("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"));
}

TEST_F(AReapDecision, IsRefuseWhenTheUnitHasNoInvocationIdButOneWasRecorded) {
  lookup->invocation_id.clear();
  EXPECT_EQ(decide().action, ReapAction::Refuse);
}

TEST_F(AReapDecision, IsRefuseForARecordWithoutInvocationIdWhenTheDescriptionLacksTheNonce) {
  record.invocation_id.clear();
  lookup->description = "nerve run r1 attempt 1 nonce=ffffffffffffffff";
  EXPECT_EQ(decide().action, ReapAction::Refuse);
}

TEST_F(AReapDecision, IsStopForARecordWithoutInvocationIdWhenTheDescriptionCarriesTheNonce) {
  record.invocation_id.clear();
  lookup->description = scope_description(record);
  ASSERT_THAT(lookup->description, HasSubstr("nonce=" + record.nonce));
  EXPECT_EQ(decide().action, ReapAction::Stop);
}

TEST_F(AReapDecision, IsRefuseWhenTheCgroupIdDiffers) {
  live_id = kCgroupId + 1;
  EXPECT_EQ(decide().action, ReapAction::Refuse);
}

TEST_F(AReapDecision, IsStopWhenEverythingMatches) { EXPECT_EQ(decide().action, ReapAction::Stop); }

TEST_F(AReapDecision, IsStopWhenTheUnitMatchesAndItsCgroupIsAlreadyGone) {
  live_id = std::nullopt;
  EXPECT_EQ(decide().action, ReapAction::Stop);
}

TEST(AScopeDescription, CarriesTheRunTheAttemptAndTheNonce) {
  Record r = test::running_record();
  r.attempt = 2;
  EXPECT_EQ(scope_description(r), "nerve run r1 attempt 2 nonce=0123456789abcdef");
}

TEST(AScopeDescription, ReadsBackTheRunTheAttemptAndTheNonceItWasMadeOf) {
  nerve::Record r;
  r.run = "build.42:x-y";
  r.attempt = 3;
  r.nonce = "0123456789abcdef";
  auto id = nerve::parse_scope_description(nerve::scope_description(r));
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->run, r.run);
  EXPECT_EQ(id->attempt, 3u);
  EXPECT_EQ(id->nonce, r.nonce);
}

TEST(AScopeDescription, IsNotReadFromAnyOtherText) {
  for (const char* d : {"", "nerve run r1", "nerve run r1 attempt x nonce=0123456789abcdef",
                        "nerve run r1 attempt 1 nonce=0123", "nerve run r1 attempt 1 nonce=0123456789ABCDEF",
                        "run r1 attempt 1 nonce=0123456789abcdef", "nerve run r1 attempt  nonce=0123456789abcdef"})
    EXPECT_FALSE(nerve::parse_scope_description(d).has_value()) << d;
}
