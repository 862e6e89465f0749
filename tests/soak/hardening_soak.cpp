// SPDX-License-Identifier: LGPL-2.1-or-later
// Soak at scale: 5,000 live runs held with their owners watched (one pidfd each:
// far beyond the default soft fd limit of 1,024), and every one reaped when its owner goes.
//
// 50 owners (sh processes) launch 100 runs each with `nervectl launch RUN -- sleep 3600`; an owner
// starts only once the previous one's runs are all running, so at most 100 launches are in flight.
// Then every owner is SIGKILLed at once: every run must end reaped with a complete receipt, and no
// nerve-* unit may be left. NERVE_SOAK_RUNS (a multiple of 100) makes it smaller for a quick check.
//
// Its own executable, nerve_hardening_soak (ctest -L soak), under its own private user manager.
#include "hardening_support.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;

class HardeningSoak : public Hardening {
 protected:
  static std::size_t open_fds(pid_t pid) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) ++n;
    return n;
  }
  static std::string rss_kib(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmRSS:", 0) == 0) return std::to_string(std::atol(line.c_str() + 6));
    return "?";
  }
  // The live nerve-hold processes (holder.h: one per live run): how many, and their private memory
  // (Private_Clean + Private_Dirty of smaps_rollup, in KiB) summed.
  static std::pair<std::size_t, long> holders() {
    std::size_t n = 0;
    long kib = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      std::string pid = e.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream comm(e.path() / "comm");
      std::string name;
      if (!std::getline(comm, name) || name != "nerve-hold") continue;
      ++n;
      std::ifstream smaps(e.path() / "smaps_rollup");
      for (std::string line; std::getline(smaps, line);)
        if (line.rfind("Private_", 0) == 0 && line.rfind("Private_Hugetlb", 0) != 0)
          kib += std::atol(line.c_str() + line.find(':') + 1);
    }
    return {n, kib};
  }
};

TEST_F(HardeningSoak, FiveThousandLiveRunsAreHeldAndAllReapedWhenTheirOwnersGo) {
  const char* env = std::getenv("NERVE_SOAK_RUNS");
  int total = env ? std::atoi(env) : 5000;
  constexpr int kPerOwner = 100;
  std::vector<pid_t> owners;
  std::vector<std::string> all;
  auto started = Clock::now();
  for (int o = 0; o * kPerOwner < total; ++o) {
    auto runs = run_ids("o" + std::to_string(o) + "r", kPerOwner);
    owners.push_back(start_owner("owner" + std::to_string(o), runs, "--grace 1", "sleep 3600"));
    ASSERT_TRUE(await_state(runs, "running", 120'000ms)) << "owner " << o << "'s runs did not all start\n" << log();
    all.insert(all.end(), runs.begin(), runs.end());
  }
  ASSERT_TRUE(alive(nerved_pid_));
  std::cout << "[ figures  ] " << all.size() << " runs running after " << since(started).count() << " ms; nerved: "
            << open_fds(nerved_pid_) << " fds, " << rss_kib(nerved_pid_) << " KiB RSS\n";
  auto [holding, holder_kib] = holders();
  std::cout << "[ figures  ] " << holding << " holders (nerve-hold), " << holder_kib << " KiB private memory in all ("
            << (holding ? holder_kib / static_cast<long>(holding) : 0) << " KiB each)\n";
  Timed list = timed_call("ListRuns", "", 30'000ms);
  EXPECT_EQ(list.error, "") << list.message;
  EXPECT_EQ(list.count, all.size());
  std::cout << "[ figures  ] ListRuns of " << list.count << " runs: " << list.took.count() << " ms\n";
  auto killed = Clock::now();
  for (pid_t o : owners) ::kill(o, SIGKILL);
  EXPECT_TRUE(await_state(all, "reaped", 900'000ms)) << "not every run was reaped after its owner went\n";
  std::cout << "[ figures  ] " << all.size() << " runs reaped " << since(killed).count()
            << " ms after their owners were killed\n";
  std::size_t incomplete = 0;
  for (const auto& r : all)
    if (to_string(receipt(r).outcome) != "complete") ++incomplete;
  EXPECT_EQ(incomplete, 0u);
  std::string units = await_no_nerve_units(60'000ms);
  std::size_t left = std::count(units.begin(), units.end(), '\n');
  EXPECT_EQ(left, 0u) << "nerve units left, the first: " << units.substr(0, 400);
  std::cout << "[ figures  ] left: " << incomplete << " runs without a complete receipt, " << left
            << " nerve units; nerved: " << open_fds(nerved_pid_) << " fds, " << rss_kib(nerved_pid_) << " KiB RSS\n";
  EXPECT_TRUE(alive(nerved_pid_));
  EXPECT_EQ(holders().first, 0u) << "holders left after every run was reaped";
}

}  // namespace
}  // namespace nerve::itest
