// SPDX-License-Identifier: LGPL-2.1-or-later
// Test doubles for the interfaces the lifecycle logic reaches the world through: GMock doubles of
// Systemd, Cgroups and OwnerWatch, a manual clock for Timers, and World, which bundles them with a
// real RunStore in a fresh temporary folder into the Deps the operations take.
#pragma once

#include "run/deps.h"
#include "printers.h"
#include "run/reap_decision.h"
#include "base/run_id.h"
#include "temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

namespace nerve::test {

// The queries (version, lookup, list_scopes, kill_unit) answer at once: each asynchronous call asks
// the mock method of the same name without the callback and passes its answer on. The jobs
// (start_scope, stop_unit) are mocked with their callbacks, so a test decides when a job ends.
class MockSystemd : public Systemd {
 public:
  MOCK_METHOD(Result<std::string>, version, ());
  MOCK_METHOD(Result<UnitState>, lookup, (const std::string& unit));
  MOCK_METHOD(Result<std::vector<std::string>>, list_scopes, (const std::string& pattern));
  MOCK_METHOD(Result<void>, kill_unit, (const std::string& unit, int signo));
  MOCK_METHOD(Result<void>, set_unit_properties, (const std::string& unit, const std::vector<UnitProperty>& properties));
  MOCK_METHOD(Result<void>, freezer, (const std::string& unit, bool freeze));
  using PropertyMap = std::map<std::string, PropertyValue>;
  MOCK_METHOD(Result<PropertyMap>, read_properties, (const std::string& unit, const std::string& interface));
  MOCK_METHOD(void, start_scope, (const ScopeSpec& spec, Done<void> done), (override));
  MOCK_METHOD(void, stop_unit, (const std::string& unit, Done<void> done), (override));

  MockSystemd() {
    using ::testing::Return;
    ON_CALL(*this, version).WillByDefault(Return(Result<std::string>(std::string("252"))));
    ON_CALL(*this, lookup).WillByDefault(Return(Result<UnitState>(no_such_unit())));
    ON_CALL(*this, list_scopes).WillByDefault(Return(Result<std::vector<std::string>>(std::vector<std::string>{})));
    ON_CALL(*this, kill_unit).WillByDefault(Return(Result<void>()));
    ON_CALL(*this, set_unit_properties).WillByDefault(Return(Result<void>()));
    ON_CALL(*this, read_properties).WillByDefault(Return(Result<PropertyMap>(PropertyMap{})));
  }
  void version(Done<std::string> done) override { done(version()); }
  void lookup(const std::string& unit, Done<UnitState> done) override {
    if (stall_lookups_of.count(unit))
      stalled_lookups.emplace_back(unit, std::move(done));
    else
      done(lookup(unit));
  }
  // A manager that does not answer about these units (yet): their lookups wait in stalled_lookups.
  std::set<std::string> stall_lookups_of;
  std::vector<std::pair<std::string, Done<UnitState>>> stalled_lookups;
  void list_scopes(const std::string& pattern, Done<std::vector<std::string>> done) override {
    done(list_scopes(pattern));
  }
  void kill_unit(const std::string& unit, int signo, Done<void> done) override { done(kill_unit(unit, signo)); }
  void set_unit_properties(const std::string& unit, const std::vector<UnitProperty>& properties,
                           Done<void> done) override {
    done(set_unit_properties(unit, properties));
  }
  void freezer(const std::string& unit, bool freeze, Done<void> done) override { done(freezer(unit, freeze)); }
  void read_properties(const std::string& unit, const std::string& interface, Done<PropertyMap> done) override {
    done(read_properties(unit, interface));
  }

  static Error no_such_unit() { return {systemd_error::NoSuchUnit, "unit not found"}; }
};

// The start time the cgroup double gives every pid unless a test says otherwise.
inline constexpr std::uint64_t kLeaderStartTime = 5555;

class MockCgroups : public Cgroups {
 public:
  MockCgroups() {
    ON_CALL(*this, start_time).WillByDefault(::testing::Return(std::optional<std::uint64_t>(kLeaderStartTime)));
    ON_CALL(*this, make_leaves)
        .WillByDefault(::testing::Return(Result<Leaves>(Error{"nerve.Cgroup.LeavesFailed", "not set up by the test"})));
    ON_CALL(*this, live_pids)
        .WillByDefault(::testing::Return(Result<std::vector<pid_t>>(Error{"nerve.Cgroup.Unreadable", "not set up by the test"})));
  }
  MOCK_METHOD(std::optional<std::uint64_t>, id, (const std::string& cgroup), (override));
  MOCK_METHOD(Result<bool>, populated, (const std::string& cgroup), (override));
  MOCK_METHOD(std::vector<pid_t>, pids, (const std::string& cgroup), (override));
  MOCK_METHOD(Result<std::vector<pid_t>>, live_pids, (const std::string& cgroup), (override));
  MOCK_METHOD(bool, kill_if, (const std::string& cgroup, std::uint64_t expected_id), (override));
  MOCK_METHOD(std::optional<Usage>, usage, (const std::string& cgroup, std::uint64_t expected_id), (override));
  MOCK_METHOD(bool, thaw_if, (const std::string& cgroup, std::uint64_t expected_id), (override));
  MOCK_METHOD(bool, frozen, (const std::string& cgroup), (override));
  MOCK_METHOD(Result<Leaves>, make_leaves, (const std::string& cgroup, std::uint64_t expected_id, pid_t pid, pid_t holder),
              (override));
  MOCK_METHOD(int, watch, (const std::string& cgroup, std::function<void()> changed), (override));
  MOCK_METHOD(void, unwatch, (int handle), (override));
  MOCK_METHOD(std::optional<std::string>, member_of, (pid_t pid), (override));
  MOCK_METHOD(std::optional<std::uint64_t>, start_time, (pid_t pid), (override));
  MOCK_METHOD(void, prime_migration, (), (override));
};

// Holders of scopes: spawn gives kHolderPid unless a test says otherwise.
inline constexpr pid_t kHolderPid = 8888;
class MockHolders : public Holders {
 public:
  MockHolders() { ON_CALL(*this, spawn).WillByDefault(::testing::Return(Result<pid_t>(kHolderPid))); }
  MOCK_METHOD(Result<pid_t>, spawn, (), (override));
  MOCK_METHOD(void, kill, (pid_t pid), (override));
  MOCK_METHOD(bool, spawned, (pid_t pid), (const, override));
};

class MockOwnerWatch : public OwnerWatch {
 public:
  MOCK_METHOD(bool, alive, (const Owner& owner), (override));
  MOCK_METHOD(void, watch, (const std::string& run, const Owner& owner, std::function<void()> gone), (override));
  MOCK_METHOD(void, unwatch, (const std::string& run), (override));
};

// A clock that moves only when told: advance() fires the timers that fall due, in order of their
// due time (then of their creation), each with now() set to its due time.
class ManualTimers : public Timers {
 public:
  Clock::time_point now() const override { return now_; }
  TimerId add_timer(Clock::duration after, std::function<void()> fn) override {
    TimerId id = next_++;
    due_.emplace(std::pair{now_ + after, id}, std::move(fn));
    return id;
  }
  void cancel_timer(TimerId id) override {
    std::erase_if(due_, [id](const auto& entry) { return entry.first.second == id; });
  }

  void advance(Clock::duration by) {
    const auto until = now_ + by;
    while (!due_.empty() && due_.begin()->first.first <= until) {
      auto first = due_.begin();
      now_ = first->first.first;
      auto fn = std::move(first->second);
      due_.erase(first);
      fn();
    }
    now_ = until;
  }
  std::size_t pending() const { return due_.size(); }

 private:
  Clock::time_point now_ = Clock::time_point{} + std::chrono::hours(1);
  TimerId next_ = 1;
  std::map<std::pair<Clock::time_point, TimerId>, std::function<void()>> due_;
};

inline constexpr const char* kBootId = "0123456789abcdef0123456789abcdef";
inline constexpr const char* kInvocationId = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
inline constexpr std::uint64_t kCgroupId = 4242;

// The record of a running attempt, as ContainOp leaves it, in this boot.
inline Record running_record(const std::string& run = "r1") {
  Record r;
  r.run = run;
  r.nonce = "0123456789abcdef";
  r.unit = scope_unit_name(run, r.nonce);
  r.boot_id = kBootId;
  r.invocation_id = kInvocationId;
  r.cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/" + r.unit;
  r.cgroup_id = kCgroupId;
  r.state = RunState::Running;
  r.leader_pid = 1234;
  r.grace_usec = 5'000'000;
  return r;
}

// The record of a running attempt whose scope has its leaves (a holder in hold/, the run in run/).
inline constexpr std::uint64_t kLeafId = 4343;
inline Record running_record_with_leaf(const std::string& run = "r1") {
  Record r = running_record(run);
  r.leaf = leaf_of(r.cgroup);
  r.leaf_id = kLeafId;
  return r;
}

// What systemd says of the unit of 'r' while it runs.
inline Result<UnitState> found(const Record& r) {
  return UnitState{r.invocation_id, "active", r.cgroup, scope_description(r)};
}
// What systemd says when a query fails ('name' is the bus error).
inline Result<UnitState> query_failed(const std::string& name) { return Error{name, name + ": no answer"}; }
inline Result<UnitState> not_loaded() { return MockSystemd::no_such_unit(); }

// Test shorthands for the store: a save that must work, and a load of a record that must be there.
inline void save(const RunStore& store, const Record& r) { ASSERT_TRUE(store.save(r)) << store.save(r).error().message; }
inline void save(const RunStore& store, const Receipt& r) { ASSERT_TRUE(store.save_receipt(r)); }
inline std::optional<Record> load(const RunStore& store, const std::string& run) {
  auto r = store.load(run);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : std::nullopt;
}
inline std::optional<Receipt> load_receipt(const RunStore& store, const std::string& run) {
  auto r = store.load_receipt(run);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : std::nullopt;
}

// The doubles and a real RunStore in a fresh folder, wired into Deps. Mocks are nice: a test states
// with EXPECT_CALL what it requires, and with Times(0) what must not happen.
struct World {
  TempDir tmp;
  RunStore store{tmp / "runs"};
  ::testing::NiceMock<MockSystemd> systemd;
  ::testing::NiceMock<MockCgroups> cgroups;
  ::testing::NiceMock<MockOwnerWatch> owners;
  ManualTimers timers;
  Deps deps{.systemd = systemd,
            .cgroups = cgroups,
            .timers = timers,
            .store = store,
            .owners = owners,
            .boot_id = kBootId,
            .unavailable = ""};
};

}  // namespace nerve::test
