// SPDX-License-Identifier: LGPL-2.1-or-later
// Lifecycle over a small simulated systemd, built on the GMock doubles: a scope exists from the end of
// its start job (start_job_ends()) until it is told to stop, by StopUnit or by KillUnit with SIGTERM
// or SIGKILL; then its cgroup empties at once, unless stop_empties is false (processes that survive
// every signal). 'events' logs "start <unit>" and "stop <unit>" in the order they were asked for.
#pragma once

#include "doubles.h"
#include "run/lifecycle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <memory>

namespace nerve::test {

struct ContainResult {
  std::optional<ContainReply> reply;
  std::optional<Error> error;
};
struct ReapResult {
  std::optional<Receipt> receipt;
  std::optional<Error> error;
};

// Stores a Result's value or error into the optionals of a *Result above.
template <typename T, typename Out>
void keep(Result<T> r, std::optional<Out>& value, std::optional<Error>& error) {
  if (r)
    value = std::move(*r);
  else
    error = r.error();
}

class LifecycleTest : public ::testing::Test, protected World {
 protected:
  static constexpr pid_t kPid = 4321;
  static constexpr auto kGrace = std::chrono::seconds(5);

  Lifecycle lifecycle;
  std::map<std::string, UnitState> units;
  std::map<std::string, bool> populated;  // by cgroup
  std::map<std::string, std::uint64_t> cgroup_ids;
  std::map<std::string, std::function<void()>> watchers;  // by cgroup
  std::vector<std::pair<ScopeSpec, Done<void>>> starts;
  std::vector<std::string> events;
  std::optional<std::string> leader_cgroup;
  bool stop_empties = true;

  LifecycleTest() : LifecycleTest(nullptr) {}
  // With holders, each scope gets a holder and its leaves (run/, hold/), as nerved's scopes do.
  explicit LifecycleTest(Holders* holders) : lifecycle{with_holders(holders)} {
    using ::testing::Invoke;
    using ::testing::Return;
    ON_CALL(systemd, start_scope).WillByDefault(Invoke([this](const ScopeSpec& spec, auto done) {
      events.push_back("start " + spec.unit);
      starts.emplace_back(spec, std::move(done));
    }));
    ON_CALL(systemd, lookup).WillByDefault(Invoke([this](const std::string& unit) -> Result<UnitState> {
      auto it = units.find(unit);
      if (it == units.end()) return test::not_loaded();
      return it->second;
    }));
    ON_CALL(systemd, stop_unit).WillByDefault(Invoke([this](const std::string& unit, auto done) {
      stop(unit);
      if (stop_empties) done(Result<void>());
    }));
    ON_CALL(systemd, kill_unit).WillByDefault(Invoke([this](const std::string& unit, int signo) {
      if (signo == SIGTERM || signo == SIGKILL) stop(unit);
      return Result<void>();
    }));
    ON_CALL(cgroups, id).WillByDefault(Invoke([this](const std::string& cgroup) -> std::optional<std::uint64_t> {
      if (!cgroup_ids.count(cgroup)) return std::nullopt;
      return cgroup_ids[cgroup];
    }));
    ON_CALL(cgroups, populated).WillByDefault(Invoke([this](const std::string& cgroup) { return populated[cgroup]; }));
    ON_CALL(cgroups, pids).WillByDefault(Return(std::vector<pid_t>{kPid}));
    ON_CALL(cgroups, watch).WillByDefault(Invoke([this](const std::string& cgroup, auto changed) {
      watchers[cgroup] = std::move(changed);
      return 1;
    }));
    ON_CALL(cgroups, member_of(kPid)).WillByDefault(Invoke([this] { return leader_cgroup; }));
  }

  ContainRequest request(const std::string& run, bool keep = false) const {
    return {run, kPid, std::chrono::microseconds(kGrace).count(), keep, {OwnerKind::Process, 99, 12345, ""}, {}, "", 0};
  }
  ContainResult& contain(const std::string& run, bool keep = false) {
    auto& result = *contains_.emplace_back(std::make_shared<ContainResult>());
    lifecycle.contain(request(run, keep), [&result](Result<ContainReply> r) { test::keep(r, result.reply, result.error); });
    return result;
  }
  ReapResult& reap(const std::string& run) {
    auto& result = *reaps_.emplace_back(std::make_shared<ReapResult>());
    lifecycle.reap(run, 0, [&result](Result<Receipt> r) { test::keep(r, result.receipt, result.error); });
    return result;
  }
  // Ends the job of the last scope asked for with "done": the scope is active and holds the pid.
  void start_job_ends() {
    ASSERT_FALSE(starts.empty()) << "no scope was asked for";
    auto& [spec, done] = starts.back();
    const std::string cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/" + spec.unit;
    const std::string n = std::to_string(starts.size());  // 32 characters, one per scope
    units[spec.unit] = {std::string(32 - n.size(), 'a') + n, "active", cgroup, spec.description};
    populated[cgroup] = true;
    cgroup_ids[cgroup] = 100 + starts.size();
    leader_cgroup = cgroup;
    done(Result<void>());
  }
  ContainResult& contained(const std::string& run, bool keep = false) {
    ContainResult& result = contain(run, keep);
    start_job_ends();
    EXPECT_TRUE(result.reply) << (result.error ? result.error->message : "no answer");
    return result;
  }
  // GetRun's answer, which the doubles give at once.
  Result<std::string> status_of(const std::string& run) {
    std::optional<Result<std::string>> answer;
    lifecycle.status_json(run, [&answer](Result<std::string> r) { answer = std::move(r); });
    EXPECT_TRUE(answer) << "no answer";
    return answer.value_or(Error{"test.NoAnswer", "no answer"});
  }
  RunState state_on_disk(const std::string& run) const { return test::load(store, run).value().state; }

 protected:
  Deps with_holders(Holders* holders) {
    deps.holders = holders;
    return deps;
  }
  // A stop (StopUnit, or a TERM to all through KillUnit) of a unit that exists; a stop of a unit that
  // is already gone changes nothing and is not an event.
  void stop(const std::string& unit) {
    auto it = units.find(unit);
    if (it == units.end()) return;
    events.push_back("stop " + unit);
    if (!stop_empties) return;
    const std::string cgroup = it->second.control_group;
    units.erase(it);
    populated[cgroup] = false;
    if (watchers.count(cgroup)) watchers[cgroup]();
  }

 private:
  std::vector<std::shared_ptr<ContainResult>> contains_;
  std::vector<std::shared_ptr<ReapResult>> reaps_;
};

}  // namespace nerve::test
