// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/errors.h"
#include "base/unit_properties.h"

#include <gtest/gtest.h>

using namespace nerve;

namespace {
UnitProperty parsed(const std::string& assignment) {
  auto p = parse_unit_property(assignment);
  EXPECT_TRUE(p.ok()) << assignment << ": " << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : UnitProperty{};
}
Error refused(const std::string& assignment) {
  auto p = parse_unit_property(assignment);
  EXPECT_FALSE(p.ok()) << assignment << " was accepted";
  return p.ok() ? Error{} : p.error();
}
constexpr std::uint64_t GiB = 1ull << 30;
}  // namespace

TEST(AMemoryLimit, TakesSizesWithBase1024Suffixes) {
  EXPECT_EQ(parsed("MemoryMax=4G"), (UnitProperty{"MemoryMax", 4 * GiB}));
  EXPECT_EQ(parsed("MemoryHigh=512M"), (UnitProperty{"MemoryHigh", std::uint64_t{512} << 20}));
  EXPECT_EQ(parsed("MemorySwapMax=1.5G"), (UnitProperty{"MemorySwapMax", 3 * GiB / 2}));
  EXPECT_EQ(parsed("MemoryMax=4096"), (UnitProperty{"MemoryMax", std::uint64_t{4096}}));
  EXPECT_EQ(parsed("MemoryMax=1G 512M"), (UnitProperty{"MemoryMax", GiB + (std::uint64_t{512} << 20)}));
}

TEST(AMemoryLimit, TakesInfinityAsNoLimit) { EXPECT_EQ(parsed("MemoryMax=infinity"), (UnitProperty{"MemoryMax", kInfinity})); }

TEST(AMemoryLimit, GivenAsAPercentageBecomesTheScalePropertyAsSystemdRunSendsIt) {
  // systemd-run rounds to the nearest (UINT32_SCALE_FROM_PERMYRIAD): 50% is 2^31.
  EXPECT_EQ(parsed("MemoryMax=50%"), (UnitProperty{"MemoryMaxScale", std::uint32_t{0x80000000u}}));
  EXPECT_EQ(parsed("MemoryMax=33.33%"), (UnitProperty{"MemoryMaxScale", std::uint32_t{1431512599u}}));
  EXPECT_EQ(parsed("MemoryHigh=100%"), (UnitProperty{"MemoryHighScale", std::uint32_t{UINT32_MAX}}));
}

TEST(AMemoryLimit, RefusesANonsenseValueQuotingIt) {
  auto e = refused("MemoryMax=lots");
  EXPECT_EQ(e.name, kInvalidProperty);
  EXPECT_NE(e.message.find("'MemoryMax'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("'lots'"), std::string::npos) << e.message;
  refused("MemoryMax=");
  refused("MemoryMax=4X");
  refused("MemoryMax=-1G");
  refused("MemoryMax=150%");
}

TEST(ACpuQuota, IsAPercentageOfOneCpuSentAsMicrosecondsPerSecond) {
  EXPECT_EQ(parsed("CPUQuota=50%"), (UnitProperty{"CPUQuotaPerSecUSec", std::uint64_t{500000}}));
  EXPECT_EQ(parsed("CPUQuota=200%"), (UnitProperty{"CPUQuotaPerSecUSec", std::uint64_t{2000000}}));
  EXPECT_EQ(parsed("CPUQuota=12.5%"), (UnitProperty{"CPUQuotaPerSecUSec", std::uint64_t{125000}}));
  refused("CPUQuota=50");
  refused("CPUQuota=0%");
}

// A huge percentage is refused, never wrapped: CPUQuota=184467440738% once became 0.9% of a CPU.
// systemd takes at most an int of permyriad (21474836.47%).
TEST(ACpuQuota, AtItsBoundaries) {
  EXPECT_EQ(parsed("CPUQuota=0.01%"), (UnitProperty{"CPUQuotaPerSecUSec", std::uint64_t{100}}));
  EXPECT_EQ(parsed("CPUQuota=21474836.47%"), (UnitProperty{"CPUQuotaPerSecUSec", std::uint64_t{2147483647} * 100}));
  for (const char* huge : {"CPUQuota=21474836.48%", "CPUQuota=184467440738%", "CPUQuota=9223372036854775808%",
                           "CPUQuota=18446744073709551615%", "CPUQuota=99999999999999999999999%"}) {
    Error e = refused(huge);
    EXPECT_NE(e.message.find("out of range"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("'CPUQuota'"), std::string::npos) << e.message;
  }
  EXPECT_NE(refused("CPUQuota=-50%").message.find("negative"), std::string::npos);
  refused("CPUQuota=12.345%");
  refused("CPUQuota=infinity");
  refused("CPUQuota=50");
}

// Sizes at the boundaries of uint64: 2^64-1 bytes is infinity (CGROUP_LIMIT_MAX); 2^64 and beyond,
// negative, and percentages above 100% or huge are refused naming the key and quoting the value.
TEST(AMemoryLimit, AtItsBoundaries) {
  EXPECT_EQ(parsed("MemoryMax=0"), (UnitProperty{"MemoryMax", std::uint64_t{0}}));
  EXPECT_EQ(parsed("MemoryMax=1"), (UnitProperty{"MemoryMax", std::uint64_t{1}}));
  EXPECT_EQ(parsed("MemoryMax=18446744073709551614"), (UnitProperty{"MemoryMax", kInfinity - 1}));
  EXPECT_EQ(parsed("MemoryMax=18446744073709551615"), (UnitProperty{"MemoryMax", kInfinity}));
  EXPECT_EQ(parsed("MemoryMax=8E"), (UnitProperty{"MemoryMax", std::uint64_t{1} << 63}));
  EXPECT_EQ(parsed("MemoryMax=0%"), (UnitProperty{"MemoryMaxScale", std::uint32_t{0}}));
  for (const char* bad : {"MemoryMax=18446744073709551616", "MemoryMax=16E", "MemoryMax=-1", "MemoryMax=-1G",
                          "MemoryMax=100.01%", "MemoryMax=184467440738%", "MemoryMax=-5%", "MemoryHigh=99999999999999999999999K"}) {
    Error e = refused(bad);
    std::string value = std::string(bad).substr(std::string(bad).find('=') + 1);
    EXPECT_NE(e.message.find("'" + value + "'"), std::string::npos) << e.message;
  }
}

TEST(ATasksLimit, AtItsBoundaries) {
  EXPECT_EQ(parsed("TasksMax=1"), (UnitProperty{"TasksMax", std::uint64_t{1}}));
  EXPECT_EQ(parsed("TasksMax=18446744073709551614"), (UnitProperty{"TasksMax", kInfinity - 1}));
  EXPECT_EQ(parsed("TasksMax=100%"), (UnitProperty{"TasksMaxScale", std::uint32_t{UINT32_MAX}}));
  for (const char* bad : {"TasksMax=18446744073709551616", "TasksMax=-1", "TasksMax=101%", "TasksMax=184467440738%"})
    refused(bad);
}

TEST(AWeight, IsFrom1To10000) {
  EXPECT_EQ(parsed("CPUWeight=100"), (UnitProperty{"CPUWeight", std::uint64_t{100}}));
  EXPECT_EQ(parsed("IOWeight=10000"), (UnitProperty{"IOWeight", std::uint64_t{10000}}));
  refused("CPUWeight=0");
  refused("IOWeight=10001");
  refused("CPUWeight=high");
}

TEST(ATasksLimit, TakesACountAPercentageOrInfinity) {
  EXPECT_EQ(parsed("TasksMax=64"), (UnitProperty{"TasksMax", std::uint64_t{64}}));
  EXPECT_EQ(parsed("TasksMax=infinity"), (UnitProperty{"TasksMax", kInfinity}));
  EXPECT_EQ(parsed("TasksMax=10%"), (UnitProperty{"TasksMaxScale", std::uint32_t{429496730u}}));
  refused("TasksMax=4K");
}

TEST(AllowedCpus, BecomeTheBitmaskSystemdTakes) {
  EXPECT_EQ(parsed("AllowedCPUs=0-3,6"), (UnitProperty{"AllowedCPUs", std::vector<std::uint8_t>{0x4f}}));
  EXPECT_EQ(parsed("AllowedCPUs=9"), (UnitProperty{"AllowedCPUs", std::vector<std::uint8_t>{0x00, 0x02}}));
  EXPECT_EQ(parsed("AllowedCPUs=1 2"), (UnitProperty{"AllowedCPUs", std::vector<std::uint8_t>{0x06}}));
  refused("AllowedCPUs=3-1");
  refused("AllowedCPUs=a");
  refused("AllowedCPUs=");
}

TEST(ARuntimeLimit, TakesSystemdTimeSyntaxAndBecomesRuntimeMaxUSec) {
  EXPECT_EQ(parsed("RuntimeMaxSec=600"), (UnitProperty{"RuntimeMaxUSec", std::uint64_t{600'000'000}}));
  EXPECT_EQ(parsed("RuntimeMaxSec=1min 30s"), (UnitProperty{"RuntimeMaxUSec", std::uint64_t{90'000'000}}));
  EXPECT_EQ(parsed("RuntimeMaxSec=500ms"), (UnitProperty{"RuntimeMaxUSec", std::uint64_t{500'000}}));
  EXPECT_EQ(parsed("RuntimeMaxSec=1.5h"), (UnitProperty{"RuntimeMaxUSec", std::uint64_t{5'400'000'000}}));
  EXPECT_EQ(parsed("RuntimeMaxSec=infinity"), (UnitProperty{"RuntimeMaxUSec", kInfinity}));
  EXPECT_EQ(parsed("RuntimeMaxSec=1us"), (UnitProperty{"RuntimeMaxUSec", std::uint64_t{1}}));
  EXPECT_EQ(parsed("RuntimeMaxSec=20000w"), (UnitProperty{"RuntimeMaxUSec", std::uint64_t{20000} * 604800 * 1'000'000}));
  EXPECT_EQ(parsed("RuntimeMaxSec=9223372036854775808us"), (UnitProperty{"RuntimeMaxUSec", std::uint64_t{1} << 63}));
  EXPECT_EQ(parsed("RuntimeMaxSec=18446744073709551614us"), (UnitProperty{"RuntimeMaxUSec", kInfinity - 1}));
  EXPECT_NE(refused("RuntimeMaxSec=18446744073709551615us").message.find("out of range"), std::string::npos);
  EXPECT_NE(refused("RuntimeMaxSec=40000000w").message.find("out of range"), std::string::npos);
  EXPECT_NE(refused("RuntimeMaxSec=-1s").message.find("negative"), std::string::npos);
  refused("RuntimeMaxSec=0");
  refused("RuntimeMaxSec=10 parsecs");
}

TEST(AnUnknownKey, IsRefusedNamingItAndTheSupportedOnes) {
  auto e = refused("Delegate=yes");
  EXPECT_EQ(e.name, kInvalidProperty);
  EXPECT_NE(e.message.find("'Delegate'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("'yes'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("MemoryMax"), std::string::npos) << e.message;
  refused("memorymax=1G");
}

TEST(AnAssignment, WithoutAnEqualsSignIsRefused) {
  EXPECT_EQ(refused("MemoryMax").name, kInvalidProperty);
  EXPECT_EQ(refused("=4G").name, kInvalidProperty);
}

TEST(SeveralAssignments, AreParsedTogetherAndTheLastOfOneKeyCounts) {
  auto ps = parse_unit_properties({"MemoryMax=1G", "TasksMax=10", "MemoryMax=2G"});
  ASSERT_TRUE(ps.ok());
  EXPECT_EQ(*ps, (std::vector<UnitProperty>{{"TasksMax", std::uint64_t{10}}, {"MemoryMax", 2 * GiB}}));
  auto bad = parse_unit_properties({"MemoryMax=1G", "CPUQuota=fast"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'fast'"), std::string::npos);
}

TEST(TheSupportedKeys, AreAtLeastTheOnesTheDocsPromise) {
  for (const char* k : {"MemoryMax", "MemoryHigh", "MemorySwapMax", "CPUQuota", "CPUWeight", "TasksMax",
                        "IOWeight", "AllowedCPUs", "RuntimeMaxSec"}) {
    auto& keys = supported_property_keys();
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
  }
}
