// SPDX-License-Identifier: LGPL-2.1-or-later
#include "record/record_pack.h"

#include "printers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

using namespace nerve;

namespace {

Record full_record(const std::string& run) {
  Record r;
  r.run = run;
  r.attempt = 3;
  r.nonce = "0123456789abcdef";
  r.unit = "nerve-" + run + "-0123456789abcdef.scope";
  r.boot_id = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0";
  r.invocation_id = "11111111111111111111111111111111";
  r.cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/" + r.unit;
  r.cgroup_id = 1ull << 40;
  r.state = RunState::Reaping;
  r.leader_pid = 4242;
  r.grace_usec = 5'000'000;
  r.keep = true;
  r.leader_start_time = 987654321;
  r.reap_on_exit = true;
  r.owner = {OwnerKind::Bus, 77, 123456789, ":1.42"};
  r.properties = {"MemoryMax=1G", "CPUQuota=50%"};
  r.slice = "nerve.slice";
  r.timeout_usec = 7'000'000;
  r.parent = "outer";
  r.created_at = "2024-05-01T10:00:00.000Z";
  r.updated_at = "2024-05-01T10:00:01.000Z";
  r.leaf = leaf_of(r.cgroup);
  r.leaf_id = (1ull << 40) + 1;
  return r;
}

// Every field, compared through the JSON nerve writes (Record has no operator==).
void expect_same(const Record& a, const Record& b) { EXPECT_EQ(to_json_text(a), to_json_text(b)); }

}  // namespace

TEST(APackedRecord, UnpacksToTheRecordItWasPackedFrom) {
  StringPool pool;
  Record r = full_record("r1");
  expect_same(unpack(pack(r, pool), "r1", pool), r);
}

TEST(APackedRecord, KeepsAUnitAndACgroupThatAreNotTheUsualOnes) {
  StringPool pool;
  Record r = full_record("r1");
  r.unit = "nerve-other-0123456789abcdef.scope";  // not what run and nonce name
  r.cgroup = "/elsewhere";                         // does not end in the unit
  r.leaf = "/elsewhere/run";
  expect_same(unpack(pack(r, pool), "r1", pool), r);
  Record empty;
  empty.run = "e";
  empty.leader_pid = -1;
  empty.owner.pid = -5;
  expect_same(unpack(pack(empty, pool), "e", pool), empty);
}

TEST(APackedRecord, KeepsItsBackend) {
  StringPool pool;
  for (auto backend : {BackendKind::Systemd, BackendKind::Cgroup}) {
    Record r = full_record("r1");
    r.backend = backend;
    EXPECT_EQ(unpack(pack(r, pool), "r1", pool).backend, backend) << to_string(backend);
  }
}

TEST(APackedRecord, KeepsWhetherTheRunWasReleased) {
  StringPool pool;
  for (bool released : {true, false}) {
    Record r = full_record("r1");
    r.state = RunState::Running;
    r.released = released;
    EXPECT_EQ(unpack(pack(r, pool), "r1", pool).released, released);
  }
}

TEST(APackedRecord, KeepsTheRecordOfEveryStateAndOwner) {
  StringPool pool;
  for (auto state : {RunState::Launching, RunState::Running, RunState::Failed, RunState::Reaping, RunState::Reaped})
    for (auto kind : {OwnerKind::None, OwnerKind::Process, OwnerKind::Bus}) {
      Record r = full_record("r-" + to_string(state));
      r.state = state;
      r.owner.kind = kind;
      expect_same(unpack(pack(r, pool), r.run, pool), r);
    }
}

TEST(APackedRecord, KeepsTheRecordOfTheFirstFormatVersion) {
  std::ifstream in(std::string(NERVE_UNIT_FIXTURES) + "/record-v1.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Record r = parse_record(text);
  StringPool pool;
  expect_same(unpack(pack(r, pool), r.run, pool), r);
}

TEST(APackedRecord, IsSmallAndSharesWhatRecordsHaveInCommon) {
  StringPool pool;
  std::string a = pack(full_record("r1"), pool);
  std::size_t shared = pool.size();
  std::string b = pack(full_record("r2"), pool);
  EXPECT_EQ(pool.size(), shared) << "boot id, slice and cgroup folder are kept once";
  EXPECT_LT(a.size(), 200u) << "the JSON text is " << to_json_text(full_record("r1")).size() << " bytes";
  EXPECT_EQ(a.size(), b.size());
}

TEST(APackedRecord, ThatIsCutShortIsCorrupt) {
  StringPool pool;
  std::string p = pack(full_record("r1"), pool);
  EXPECT_THROW(unpack(std::string_view(p).substr(0, p.size() / 2), "r1", pool), RecordCorrupt);
}
