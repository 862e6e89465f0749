// SPDX-License-Identifier: LGPL-2.1-or-later
#include "temp_dir.h"
#include "base/usage.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

using namespace nerve;

namespace {
// A folder laid out like a cgroup2 folder, with the kernel's own file formats.
struct FakeCgroup {
  test::TempDir dir;
  void put(const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; }
  Usage read() {
    int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    Usage u = read_usage(fd);
    ::close(fd);
    return u;
  }
};
}  // namespace

TEST(AUsageSnapshot, ReadsCpuTimesFromCpuStat) {
  FakeCgroup cg;
  cg.put("cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnice_usec 0\n");
  Usage u = cg.read();
  EXPECT_EQ(u.cpu_usage_usec, 1500u);
  EXPECT_EQ(u.cpu_user_usec, 1000u);
  EXPECT_EQ(u.cpu_system_usec, 500u);
}

TEST(AUsageSnapshot, LeavesFiguresAbsentWhenTheirControllerIsNotThereNeverZero) {
  FakeCgroup cg;
  cg.put("cpu.stat", "usage_usec 7\nuser_usec 4\nsystem_usec 3\n");
  Usage u = cg.read();
  EXPECT_FALSE(u.memory_peak_bytes);
  EXPECT_FALSE(u.tasks_peak);
  EXPECT_FALSE(u.io_read_bytes);
  EXPECT_FALSE(u.io_write_bytes);
  EXPECT_FALSE(u.oom_kills);
  nlohmann::json j = u;
  EXPECT_TRUE(j["memory_peak_bytes"].is_null());
  EXPECT_TRUE(j["oom_kills"].is_null());
  EXPECT_EQ(j["cpu_user_usec"], 4);
}

TEST(AUsageSnapshot, ReadsMemoryPeakOomKillsAndTasksPeakWhereTheControllersAre) {
  FakeCgroup cg;
  cg.put("memory.peak", "123456789\n");
  cg.put("memory.events", "low 0\nhigh 3\nmax 9\noom 1\noom_kill 2\noom_group_kill 0\n");
  cg.put("pids.peak", "17\n");
  Usage u = cg.read();
  EXPECT_EQ(u.memory_peak_bytes, 123456789u);
  EXPECT_EQ(u.oom_kills, 2u);
  EXPECT_EQ(u.tasks_peak, 17u);
  EXPECT_FALSE(u.cpu_usage_usec);
}

TEST(AUsageSnapshot, SumsIoBytesOverDevices) {
  FakeCgroup cg;
  cg.put("io.stat",
         "8:0 rbytes=1000 wbytes=2000 rios=1 wios=2 dbytes=0 dios=0\n"
         "253:1 rbytes=24 wbytes=6 rios=1 wios=1 dbytes=0 dios=0\n");
  Usage u = cg.read();
  EXPECT_EQ(u.io_read_bytes, 1024u);
  EXPECT_EQ(u.io_write_bytes, 2006u);
}

TEST(AUsageSnapshot, CountsAnEmptyIoStatAsZeroBytesBecauseTheControllerIsThere) {
  FakeCgroup cg;
  cg.put("io.stat", "");
  Usage u = cg.read();
  EXPECT_EQ(u.io_read_bytes, 0u);
  EXPECT_EQ(u.io_write_bytes, 0u);
}

TEST(AUsageSnapshot, IgnoresAGarbledFigure) {
  FakeCgroup cg;
  cg.put("cpu.stat", "usage_usec x\nuser_usec 5\n");
  cg.put("pids.peak", "max\n");
  Usage u = cg.read();
  EXPECT_FALSE(u.cpu_usage_usec);
  EXPECT_EQ(u.cpu_user_usec, 5u);
  EXPECT_FALSE(u.tasks_peak);
}

TEST(AUsageSnapshot, SurvivesAJsonRoundTripWithItsNulls) {
  Usage u;
  u.cpu_usage_usec = 10;
  u.oom_kills = 0;
  nlohmann::json j = u;
  EXPECT_EQ(j.get<Usage>(), u);
}

TEST(AUsageSnapshot, OfTheRealRootCgroupReadsCpuStat) {
  int fd = ::open("/sys/fs/cgroup/unified", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fd = ::open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Usage u = read_usage(fd);
  ::close(fd);
  if (!u.cpu_usage_usec) GTEST_SKIP() << "this host's cgroup2 root offers no cpu.stat";
  EXPECT_GT(*u.cpu_usage_usec, 0u);
}
