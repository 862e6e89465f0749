// SPDX-License-Identifier: LGPL-2.1-or-later
// cgroup_limits: a run's unit properties as the cgroup2 files systemd 252 would write for them, and
// back (the cgroup backend writes them itself).
#include "system/cgroup_limits.h"

#include <gtest/gtest.h>

namespace nerve {
namespace {

constexpr HostLimits kHost{.memory_bytes = 8ull << 30, .tasks = 4194304};

CgroupWrite write_of(const std::string& assignment, const HostLimits& host = kHost) {
  auto p = parse_unit_property(assignment);
  EXPECT_TRUE(p) << assignment << ": " << (p ? "" : p.error().message);
  auto w = cgroup_write_for(*p, host);
  EXPECT_TRUE(w) << assignment << ": " << (w ? "" : w.error().message);
  return w ? *w : CgroupWrite{};
}

TEST(ACgroupWrite, IsTheFileAndTextSystemdWritesForEachLimit) {
  const std::vector<std::pair<std::string, CgroupWrite>> cases = {
      {"MemoryMax=50M", {"memory", "memory.max", "52428800", "MemoryMax"}},
      {"MemoryMax=infinity", {"memory", "memory.max", "max", "MemoryMax"}},
      {"MemoryHigh=1G", {"memory", "memory.high", "1073741824", "MemoryHigh"}},
      {"MemorySwapMax=0", {"memory", "memory.swap.max", "0", "MemorySwapMax"}},
      {"TasksMax=64", {"pids", "pids.max", "64", "TasksMax"}},
      {"TasksMax=infinity", {"pids", "pids.max", "max", "TasksMax"}},
      {"CPUQuota=50%", {"cpu", "cpu.max", "50000 100000", "CPUQuota"}},
      {"CPUQuota=200%", {"cpu", "cpu.max", "200000 100000", "CPUQuota"}},
      {"CPUWeight=500", {"cpu", "cpu.weight", "500", "CPUWeight"}},
      {"IOWeight=20", {"io", "io.weight", "default 20", "IOWeight"}},
      {"AllowedCPUs=0-2,5", {"cpuset", "cpuset.cpus", "0-2,5", "AllowedCPUs"}},
  };
  for (const auto& [assignment, expected] : cases) EXPECT_EQ(write_of(assignment), expected) << assignment;
}

TEST(ACgroupWrite, OfAPercentageIsOfTheHostsMemoryInWholePagesAndOfItsPidLimit) {
  EXPECT_EQ(write_of("MemoryMax=50%").text, std::to_string(4ull << 30));
  EXPECT_EQ(write_of("TasksMax=10%").text, "419430");
}

TEST(ACgroupWrite, OfATinyCpuQuotaIsTheKernelsMinimumOf1ms) {
  EXPECT_EQ(write_of("CPUQuota=0.1%").text, "1000 100000");
}

TEST(ACgroupWrite, OfAPercentageIsRefusedByNameWhenTheHostsFigureIsUnknown) {
  auto p = parse_unit_property("MemoryMax=50%");
  ASSERT_TRUE(p);
  auto w = cgroup_write_for(*p, HostLimits{});
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("'MemoryMax'"), std::string::npos) << w.error().message;
}

TEST(ACgroupWrite, OfAPropertyWithNoCgroupFileIsRefusedQuotingIt) {
  auto p = parse_unit_property("RuntimeMaxSec=10");
  ASSERT_TRUE(p);
  auto w = cgroup_write_for(*p, kHost);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("'RuntimeMaxSec'"), std::string::npos) << w.error().message;
}

TEST(LimitsFromFiles, ReadBackWhatTheWritesSet) {
  auto limits = limits_from_files({{"memory.max", "52428800\n"},
                                   {"memory.high", "max\n"},
                                   {"pids.max", "64\n"},
                                   {"cpu.max", "50000 100000\n"},
                                   {"cpu.weight", "500\n"},
                                   {"io.weight", "default 20\n"},
                                   {"cpuset.cpus", "0-2,5\n"}});
  EXPECT_EQ(std::get<std::uint64_t>(limits.at("MemoryMax")), 52428800u);
  EXPECT_EQ(std::get<std::uint64_t>(limits.at("MemoryHigh")), kInfinity);
  EXPECT_EQ(std::get<std::uint64_t>(limits.at("TasksMax")), 64u);
  EXPECT_EQ(std::get<std::uint64_t>(limits.at("CPUQuotaPerSecUSec")), 500000u);
  EXPECT_EQ(std::get<std::uint64_t>(limits.at("CPUWeight")), 500u);
  EXPECT_EQ(std::get<std::uint64_t>(limits.at("IOWeight")), 20u);
  EXPECT_EQ(cpu_list(std::get<std::vector<std::uint8_t>>(limits.at("AllowedCPUs"))), "0-2,5");
}

TEST(LimitsFromFiles, LeavesOutWhatDoesNotParse) {
  auto limits = limits_from_files({{"memory.max", "lots\n"}, {"cpu.max", "max\n"}, {"io.weight", "8:0 100\n"}});
  EXPECT_TRUE(limits.empty());
}

TEST(ACpuList, NamesRunsAndSingleCpus) {
  EXPECT_EQ(cpu_list({0b0000'0111, 0b0000'0001}), "0-2,8");
  EXPECT_EQ(cpu_list({}), "");
}

}  // namespace
}  // namespace nerve
