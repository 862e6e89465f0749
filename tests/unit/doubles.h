// Test doubles for the interfaces the lifecycle logic reaches the world through: GMock doubles of
// Systemd, Cgroups and OwnerWatch, a manual clock for Timers, and World, which bundles them with a
// real RunStore in a fresh temporary folder into the Deps the operations take.
#pragma once

#include "deps.h"
#include "printers.h"
#include "reap_decision.h"
#include "run_id.h"
#include "temp_dir.h"

#include <gmock/gmock.h>

#include <map>
#include <utility>

namespace nerve::test {

class MockSystemd : public Systemd {
 public:
  MOCK_METHOD(std::string, version, (std::string * error), (override));
  MOCK_METHOD(Lookup, lookup, (const std::string& unit), (override));
  MOCK_METHOD(bool, list_scopes, (const std::string& pattern, std::vector<std::string>* units, std::string* error),
              (override));
  MOCK_METHOD(void, start_scope, (const ScopeSpec& spec, std::function<void(JobOutcome)> done), (override));
  MOCK_METHOD(void, stop_unit, (const std::string& unit, std::function<void(JobOutcome)> done), (override));
  MOCK_METHOD(std::string, kill_unit, (const std::string& unit, int signo), (override));
};

class MockCgroups : public Cgroups {
 public:
  MOCK_METHOD(std::optional<std::uint64_t>, id, (const std::string& cgroup), (override));
  MOCK_METHOD(bool, populated, (const std::string& cgroup), (override));
  MOCK_METHOD(std::vector<pid_t>, pids, (const std::string& cgroup), (override));
  MOCK_METHOD(bool, kill_if, (const std::string& cgroup, std::uint64_t expected_id), (override));
  MOCK_METHOD(int, watch, (const std::string& cgroup, std::function<void()> changed), (override));
  MOCK_METHOD(void, unwatch, (int handle), (override));
  MOCK_METHOD(std::optional<std::string>, member_of, (pid_t pid), (override));
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

// What systemd says of the unit of 'r' while it runs.
inline Lookup found(const Record& r) {
  return {LookupStatus::Found, {r.invocation_id, "active", r.cgroup, scope_description(r)}, ""};
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
