// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/conventions.h"
#include "base/timestamps.h"
#include "record/record.h"

#include "printers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <utility>

using namespace nerve;
using nlohmann::json;
using ::testing::HasSubstr;

namespace {

Record full_record() {
  Record r;
  r.run = "r1";
  r.attempt = 3;
  r.unit = "nerve-r1-0123456789abcdef.scope";
  r.nonce = "0123456789abcdef";
  r.boot_id = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0";
  r.invocation_id = "11111111111111111111111111111111";
  r.cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/nerve-r1-0123456789abcdef.scope";
  r.cgroup_id = 1ull << 40;
  r.state = RunState::Running;
  r.leader_pid = 4242;
  r.grace_usec = 5'000'000;
  r.keep = true;
  r.owner = {OwnerKind::Bus, 77, 123456789, ":1.42"};
  r.created_at = "2024-05-01T10:00:00.000Z";
  r.updated_at = "2024-05-01T10:00:01.000Z";
  return r;
}

Receipt full_receipt() {
  Receipt r;
  r.run = "r1";
  r.attempt = 3;
  r.unit = "nerve-r1-0123456789abcdef.scope";
  r.invocation_id = "11111111111111111111111111111111";
  r.outcome = Outcome::Refused;
  r.error = "unit was replaced";
  r.killed = true;
  r.duration_usec = 1'234'567;
  r.reaped_at = "2024-05-01T10:00:02.000Z";
  return r;
}

std::string record_text_with(const std::function<void(json&)>& change) {
  json j = json::parse(to_json_text(full_record()));
  change(j);
  return j.dump();
}

}  // namespace

TEST(ARecord, SurvivesARoundTripThroughJson) {
  const Record in = full_record();
  const Record out = parse_record(to_json_text(in));
  EXPECT_EQ(out.version, kRecordVersion);
  EXPECT_EQ(out.run, in.run);
  EXPECT_EQ(out.attempt, in.attempt);
  EXPECT_EQ(out.unit, in.unit);
  EXPECT_EQ(out.nonce, in.nonce);
  EXPECT_EQ(out.boot_id, in.boot_id);
  EXPECT_EQ(out.invocation_id, in.invocation_id);
  EXPECT_EQ(out.cgroup, in.cgroup);
  EXPECT_EQ(out.cgroup_id, in.cgroup_id);
  EXPECT_EQ(out.state, in.state);
  EXPECT_EQ(out.leader_pid, in.leader_pid);
  EXPECT_EQ(out.grace_usec, in.grace_usec);
  EXPECT_EQ(out.keep, in.keep);
  EXPECT_EQ(out.owner.kind, in.owner.kind);
  EXPECT_EQ(out.owner.pid, in.owner.pid);
  EXPECT_EQ(out.owner.start_time, in.owner.start_time);
  EXPECT_EQ(out.owner.name, in.owner.name);
  EXPECT_EQ(out.created_at, in.created_at);
  EXPECT_EQ(out.updated_at, in.updated_at);
}

// Which backend holds the run: written by name, read back; a record of before the cgroup backend (no
// "backend") is the systemd backend's; any other name is corrupt, quoted.
TEST(ARecord, KeepsItsBackendAndReadsARecordWithoutOneAsSystemds) {
  Record r = full_record();
  EXPECT_THAT(to_json_text(r), HasSubstr("\"backend\": \"systemd\""));
  r.backend = BackendKind::Cgroup;
  EXPECT_THAT(to_json_text(r), HasSubstr("\"backend\": \"cgroup\""));
  EXPECT_EQ(parse_record(to_json_text(r)).backend, BackendKind::Cgroup);
  auto j = nlohmann::json::parse(to_json_text(r));
  j.erase("backend");
  EXPECT_EQ(parse_record(j.dump()).backend, BackendKind::Systemd);
  j["backend"] = "cgroupfs";
  try {
    parse_record(j.dump());
    ADD_FAILURE() << "a record with backend \"cgroupfs\" was read";
  } catch (const RecordCorrupt& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"cgroupfs\""));
  }
}

TEST(ARecord, KeepsEveryStateThroughARoundTrip) {
  for (auto st : {RunState::Launching, RunState::Running, RunState::Failed, RunState::Reaping, RunState::Reaped}) {
    Record r = full_record();
    r.state = st;
    EXPECT_EQ(parse_record(to_json_text(r)).state, st) << to_string(st);
  }
}

TEST(AReceipt, SurvivesARoundTripThroughJson) {
  const Receipt in = full_receipt();
  const Receipt out = parse_receipt(to_json_text(in));
  EXPECT_EQ(out.run, in.run);
  EXPECT_EQ(out.attempt, in.attempt);
  EXPECT_EQ(out.unit, in.unit);
  EXPECT_EQ(out.invocation_id, in.invocation_id);
  EXPECT_EQ(out.outcome, in.outcome);
  EXPECT_EQ(out.error, in.error);
  EXPECT_EQ(out.killed, in.killed);
  EXPECT_EQ(out.duration_usec, in.duration_usec);
  EXPECT_EQ(out.reaped_at, in.reaped_at);
}

TEST(AReceipt, WritesItsOutcomeUnderItsDocumentedName) {
  EXPECT_EQ(json::parse(to_json_text(full_receipt()))["outcome"], "refused");
  EXPECT_EQ(to_string(Outcome::NoScope), "no_scope");
  EXPECT_EQ(to_string(Outcome::PendingRetry), "pending_retry");
}

TEST(ParseRecord, ThrowsRecordCorruptOnTruncatedJson) {
  const std::string text = to_json_text(full_record());
  EXPECT_THROW(parse_record(text.substr(0, text.size() / 2)), RecordCorrupt);
  EXPECT_THROW(parse_record(""), RecordCorrupt);
}

TEST(ParseRecord, ThrowsRecordCorruptWhenTheJsonIsNotAnObject) {
  EXPECT_THROW(parse_record("[1, 2]"), RecordCorrupt);
  EXPECT_THROW(parse_record("\"r1\""), RecordCorrupt);
}

TEST(ParseRecord, ThrowsRecordCorruptOnANegativeAttemptOrCgroupId) {
  nerve::Record r;
  r.run = "r1";
  for (const char* field : {"attempt", "cgroup_id"}) {
    auto j = nlohmann::json::parse(nerve::to_json_text(r));
    j[field] = -1;
    EXPECT_THROW(nerve::parse_record(j.dump()), nerve::RecordCorrupt) << field;
  }
}

TEST(ParseRecord, ThrowsRecordCorruptNamingAMissingField) {
  try {
    parse_record(record_text_with([](json& j) { j.erase("unit"); }));
    FAIL() << "no error";
  } catch (const RecordCorrupt& e) {
    EXPECT_THAT(e.what(), HasSubstr("'unit'"));
  }
}

TEST(ParseRecord, ThrowsRecordCorruptOnAFieldOfTheWrongType) {
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j["cgroup_id"] = "42"; })), RecordCorrupt);
}

TEST(ParseRecord, ThrowsRecordCorruptOnAnUnknownVersion) {
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j["version"] = 2; })), RecordCorrupt);
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j.erase("version"); })), RecordCorrupt);
}

TEST(ParseRecord, ThrowsRecordCorruptOnAnUnknownState) {
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j["state"] = "zombie"; })), RecordCorrupt);
}

TEST(ParseRecord, AcceptsARecordWithoutOwner) {
  Record r = parse_record(record_text_with([](json& j) { j.erase("owner"); }));
  EXPECT_EQ(r.owner.kind, OwnerKind::None);
}

TEST(ParseReceipt, ThrowsRecordCorruptOnAnUnknownOutcome) {
  json j = json::parse(to_json_text(full_receipt()));
  j["outcome"] = "maybe";
  EXPECT_THROW(parse_receipt(j.dump()), RecordCorrupt);
}

TEST(ParseReceipt, ThrowsRecordCorruptOnTruncatedJson) {
  const std::string text = to_json_text(full_receipt());
  EXPECT_THROW(parse_receipt(text.substr(0, text.size() - 3)), RecordCorrupt);
}

TEST(ARunState, IsFinalOnlyOnceReapingHasStarted) {
  EXPECT_FALSE(is_final(RunState::Launching));
  EXPECT_FALSE(is_final(RunState::Running));
  EXPECT_FALSE(is_final(RunState::Failed));
  EXPECT_TRUE(is_final(RunState::Reaping));
  EXPECT_TRUE(is_final(RunState::Reaped));
}

TEST(AnOutcome, IsFinalUnlessPendingRetry) {
  EXPECT_TRUE(is_final(Outcome::Complete));
  EXPECT_TRUE(is_final(Outcome::NoScope));
  EXPECT_TRUE(is_final(Outcome::Refused));
  EXPECT_FALSE(is_final(Outcome::PendingRetry));
}

TEST(NowRfc3339, IsUtcWithMilliseconds) {
  EXPECT_THAT(now_rfc3339(), ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"));
}

// Upgrades: a record and a receipt written by nerve 0.1.0 (record format version 1), checked in as
// files (tests/unit/fixtures/*-v1.json) and never rewritten by the current writer, must still be read:
// every field of the file comes out of the parser with its value (written back, it is the same JSON).
// If the format's version changes, the parser must keep reading version 1: add a v2 fixture, keep these.
namespace {
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(NERVE_UNIT_FIXTURES) + "/" + name);
  if (!in) throw std::runtime_error("cannot read fixture " + name);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every field of the fixture but its version has the same value in `read`.
void expect_every_field_read(const json& file, const json& read) {
  ASSERT_EQ(file.at("version"), 1);
  for (auto& [key, value] : file.items()) {
    if (key == "version") continue;
    EXPECT_EQ(read.value(key, json()), value) << "field '" << key << "'";
  }
}
}  // namespace

TEST(ParseRecord, ReadsARecordOfVersion1) {
  std::string text = fixture("record-v1.json");
  Record r = parse_record(text);
  EXPECT_EQ(r.state, RunState::Running);
  EXPECT_EQ(r.cgroup_id, 8412u);
  expect_every_field_read(json::parse(text), json::parse(to_json_text(r)));
}

TEST(ParseReceipt, ReadsAReceiptOfVersion1) {
  std::string text = fixture("receipt-v1.json");
  Receipt r = parse_receipt(text);
  EXPECT_EQ(r.outcome, Outcome::Complete);
  EXPECT_TRUE(r.killed);
  expect_every_field_read(json::parse(text), json::parse(to_json_text(r)));
}

// A receipt of version 1 has no cause and no usage: they stay absent (written as null), not invented.
TEST(ParseReceipt, AVersion1ReceiptHasNoCauseAndNoUsage) {
  Receipt r = parse_receipt(fixture("receipt-v1.json"));
  EXPECT_FALSE(r.cause.has_value());
  EXPECT_FALSE(r.usage.has_value());
  json back = json::parse(to_json_text(r));
  EXPECT_TRUE(back.at("cause").is_null());
  EXPECT_TRUE(back.at("usage").is_null());
}

TEST(ParseReceipt, KeepsCauseAndUsageWithNullsForAbsentFigures) {
  Receipt r;
  r.run = "r";
  r.outcome = Outcome::Complete;
  r.cause = Cause::Timeout;
  r.usage = Usage{};
  r.usage->cpu_user_usec = 1200000;
  r.usage_final = true;
  json j = json::parse(to_json_text(r));
  EXPECT_EQ(j.at("cause"), "timeout");
  EXPECT_EQ(j.at("usage").at("cpu_user_usec"), 1200000);
  EXPECT_TRUE(j.at("usage").at("memory_peak_bytes").is_null());
  Receipt back = parse_receipt(to_json_text(r));
  EXPECT_EQ(back.cause, Cause::Timeout);
  EXPECT_EQ(back.usage, r.usage);
  EXPECT_TRUE(back.usage_final);
}

TEST(ParseReceipt, RefusesAnUnknownCause) {
  json j = json::parse(fixture("receipt-v1.json"));
  j["cause"] = "bored";
  EXPECT_THROW(parse_receipt(j.dump()), RecordCorrupt);
}

// The names on disk and on the bus (docs/records.md, docs/dbus-api.md), written out here once more so
// that a changed row of a table is a failing test, not a silently changed file format.
template <typename E>
void expect_names(std::initializer_list<std::pair<E, const char*>> names) {
  EXPECT_EQ(string_table_rows<E>().size(), names.size()) << "a value without its documented name";
  for (const auto& [value, name] : names) {
    EXPECT_EQ(to_string(value), name);
    EXPECT_EQ(from_string<E>(name), value) << name;
  }
}

TEST(ARunState, IsWrittenUnderItsDocumentedName) {
  expect_names<RunState>({{RunState::Launching, "launching"},
                          {RunState::Running, "running"},
                          {RunState::Failed, "failed"},
                          {RunState::Reaping, "reaping"},
                          {RunState::Reaped, "reaped"}});
  EXPECT_FALSE(from_string<RunState>("Running"));
}

TEST(AnOwnerKind, IsWrittenUnderItsDocumentedName) {
  expect_names<OwnerKind>({{OwnerKind::None, "none"}, {OwnerKind::Process, "process"}, {OwnerKind::Bus, "bus"}});
}

TEST(AnOutcome, IsWrittenUnderItsDocumentedName) {
  expect_names<Outcome>({{Outcome::Complete, "complete"},
                         {Outcome::NoScope, "no_scope"},
                         {Outcome::Refused, "refused"},
                         {Outcome::PendingRetry, "pending_retry"}});
}

TEST(Cause, IsWrittenUnderItsDocumentedName) {
  expect_names<Cause>({{Cause::Exited, "exited"},
                       {Cause::Cancelled, "cancelled"},
                       {Cause::Timeout, "timeout"},
                       {Cause::Oom, "oom"},
                       {Cause::OwnerGone, "owner_gone"},
                       {Cause::Relaunched, "relaunched"},
                       {Cause::Reconciled, "reconciled"},
                       {Cause::Reaped, "reaped"}});
}

TEST(ParseRecord, ThrowsRecordCorruptOnAnUnknownOwnerKind) {
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j["owner"]["kind"] = "Process"; })), RecordCorrupt);
}

TEST(ParseReceipt, KeepsTheEscapedScopesWithTheirPids) {
  Receipt r;
  r.run = "r";
  r.outcome = Outcome::Complete;
  r.escaped = {{"run-r0a1b2c3.scope", {41, 42}}};
  json j = json::parse(to_json_text(r));
  EXPECT_EQ(j.at("escaped").at(0).at("unit"), "run-r0a1b2c3.scope");
  Receipt back = parse_receipt(to_json_text(r));
  ASSERT_EQ(back.escaped.size(), 1u);
  EXPECT_EQ(back.escaped[0].unit, "run-r0a1b2c3.scope");
  EXPECT_EQ(back.escaped[0].pids, (std::vector<int>{41, 42}));
}

TEST(ParseReceipt, ReadsAReceiptWithoutEscapedAsNoneFoundAndRefusesAMalformedOne) {
  json j = json::parse(fixture("receipt-v1.json"));
  EXPECT_TRUE(parse_receipt(j.dump()).escaped.empty());
  j["escaped"] = json::array({{{"unit", 7}}});
  EXPECT_THROW(parse_receipt(j.dump()), RecordCorrupt);
}

TEST(ParseRfc3339, ReadsWhatNowRfc3339Writes) {
  auto t = parse_rfc3339("2026-11-02T09:20:44.050Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(t->time_since_epoch()).count(), 1793611244050);
  auto now = parse_rfc3339(now_rfc3339());
  ASSERT_TRUE(now);
  EXPECT_LT(std::chrono::abs(std::chrono::system_clock::now() - *now), std::chrono::seconds(2));
  EXPECT_FALSE(parse_rfc3339("yesterday"));
  EXPECT_FALSE(parse_rfc3339("2026-11-02T09:20:44.050+01:00"));
}

TEST(Deadline, IsCreatedAtPlusTheTimeout) {
  Record r;
  r.created_at = "2026-11-02T09:20:44.050Z";
  EXPECT_FALSE(deadline(r));
  r.timeout_usec = 1500000;
  ASSERT_TRUE(deadline(r));
  EXPECT_EQ(*deadline(r) - *parse_rfc3339(r.created_at), std::chrono::milliseconds(1500));
}

// timeout_usec at the boundaries of usec_t: 0 and 2^64-1 (systemd's infinity) are no timeout; a
// timeout past the end of the nanosecond clock (20000 weeks, 2^63, 2^64-2) falls due at its end,
// time_point::max(), never at a wrapped time before created_at (which would end the run at once).
TEST(Deadline, NeverWrapsBeforeCreatedAt) {
  Record r;
  r.created_at = "2026-11-02T09:20:44.050Z";
  auto created = *parse_rfc3339(r.created_at);
  r.timeout_usec = 0;
  EXPECT_FALSE(deadline(r));
  r.timeout_usec = UINT64_MAX;
  EXPECT_FALSE(deadline(r)) << "infinity is no timeout";
  r.timeout_usec = 1;
  EXPECT_EQ(*deadline(r), created + std::chrono::microseconds(1));
  for (std::uint64_t far : {std::uint64_t{20000} * 604800 * 1'000'000, std::uint64_t{1} << 63, UINT64_MAX - 1}) {
    r.timeout_usec = far;
    ASSERT_TRUE(deadline(r)) << far;
    EXPECT_EQ(*deadline(r), std::chrono::system_clock::time_point::max()) << far;
  }
  r.timeout_usec = 1000ull * 365 * 24 * 3600 * 1'000'000 / 10;  // 100 years: still on the clock
  EXPECT_EQ(*deadline(r) - created, std::chrono::hours(100 * 365 * 24));
}

TEST(ParseRecord, KeepsATimeoutOfAnyUint64) {
  for (std::uint64_t t : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 63, UINT64_MAX - 1, UINT64_MAX}) {
    Record r = full_record();
    r.timeout_usec = t;
    EXPECT_EQ(parse_record(to_json_text(r)).timeout_usec, t);
  }
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j["timeout_usec"] = -1; })), RecordCorrupt);
}

// A grace is at most an hour wherever it comes from (the bus, nervectl, nerved.conf): a record with a
// longer one was not written by nerve.
TEST(ParseRecord, RefusesAGraceLongerThanAnHour) {
  for (std::uint64_t g : {std::uint64_t{0}, std::uint64_t{1}, kMaxGraceUsec})
    EXPECT_EQ(parse_record(record_text_with([&](json& j) { j["grace_usec"] = g; })).grace_usec, g);
  for (std::uint64_t g : {kMaxGraceUsec + 1, std::uint64_t{1} << 63, UINT64_MAX})
    EXPECT_THROW(parse_record(record_text_with([&](json& j) { j["grace_usec"] = g; })), RecordCorrupt) << g;
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j["grace_usec"] = -1; })), RecordCorrupt);
}

TEST(ParseRecord, ReadsARecordOfBeforeLeavesAsOneWithoutALeaf) {
  Record r = parse_record(fixture("record-v1.json"));
  EXPECT_TRUE(r.leaf.empty());
  EXPECT_EQ(r.leaf_id, 0u);
  EXPECT_FALSE(has_leaf(r));
}

// A record of before "released" was kept was written running only once its caller had been told to
// exec: it reads as released. One written running but not yet released keeps saying so.
TEST(ParseRecord, ReadsARecordOfBeforeTheReleaseMarkAsReleasedAndKeepsTheMark) {
  EXPECT_TRUE(parse_record(fixture("record-v1.json")).released);
  Record r = parse_record(fixture("record-v1.json"));
  r.released = false;
  EXPECT_FALSE(parse_record(to_json_text(r)).released);
  EXPECT_EQ(json::parse(to_json_text(r)).at("released"), false);
  r.released = true;
  EXPECT_TRUE(parse_record(to_json_text(r)).released);
  EXPECT_THROW(parse_record(record_text_with([](json& j) { j["released"] = "yes"; })), RecordCorrupt);
}

TEST(ParseRecord, KeepsTheLeafAndRefusesOneThatIsNotTheRunLeafOfItsCgroup) {
  Record r = parse_record(fixture("record-v1.json"));
  r.leaf = leaf_of(r.cgroup);
  r.leaf_id = 9;
  Record back = parse_record(to_json_text(r));
  EXPECT_EQ(back.leaf, r.cgroup + "/run");
  EXPECT_EQ(back.leaf_id, 9u);
  EXPECT_TRUE(has_leaf(back));
  r.leaf = "/elsewhere/run";
  EXPECT_THROW(parse_record(to_json_text(r)), RecordCorrupt);
}
