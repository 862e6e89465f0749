// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/self_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace nerve;

TEST(SelfStats, ReadsCpuAndStartTicksAfterANameWithSpacesAndParentheses) {
  // Fields 3.. of /proc/PID/stat: state ppid pgrp session tty tpgid flags minflt cminflt majflt
  // cmajflt utime(14) stime(15) cutime cstime priority nice threads itrealvalue starttime(22) ...
  auto t = parse_stat_ticks("42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0 9000 1000 200");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->cpu, 12u);
  EXPECT_EQ(t->start, 9000u);
}

TEST(SelfStats, RefusesAStatLineThatIsCutShort) { EXPECT_FALSE(parse_stat_ticks("42 (x) S 1 2 3")); }

TEST(SelfStats, ReadsBtimeFromProcStat) {
  EXPECT_EQ(parse_btime("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"), 1700000000u);
  EXPECT_FALSE(parse_btime("cpu 1\n"));
}

TEST(SelfStats, OfThisProcessCountItsOwnFdsAndMemory) {
  SelfStats before = read_self_stats();
  int fd = ::dup(1);
  SelfStats after = read_self_stats();
  ::close(fd);
  ASSERT_TRUE(before.open_fds && after.open_fds);
  EXPECT_EQ(*after.open_fds, *before.open_fds + 1);
  EXPECT_GT(after.resident_bytes.value_or(0), 0u);
  EXPECT_GT(after.max_fds.value_or(0), 0u);
  EXPECT_GT(after.start_time_seconds.value_or(0), 1.5e9);
}
