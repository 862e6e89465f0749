// SPDX-License-Identifier: LGPL-2.1-or-later
// What this process uses, read from /proc/self and getrlimit: the figures Prometheus client
// libraries call process_* (open and allowed fds, resident memory, CPU time, start time). A figure
// that cannot be read is absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nerve {

struct SelfStats {
  std::optional<std::uint64_t> open_fds;       // entries of /proc/self/fd
  std::optional<std::uint64_t> max_fds;        // RLIMIT_NOFILE, soft
  std::optional<std::uint64_t> resident_bytes;  // /proc/self/statm's resident pages
  std::optional<double> cpu_seconds;           // user + system, /proc/self/stat
  std::optional<double> start_time_seconds;    // since the epoch: /proc/stat's btime + the start in ticks
};

SelfStats read_self_stats();

// The parsers, on the files' text: /proc/PID/stat's utime + stime and starttime (in clock ticks;
// the command's name, in parentheses, may hold spaces), /proc/stat's btime.
struct StatTicks {
  std::uint64_t cpu = 0;
  std::uint64_t start = 0;
};
std::optional<StatTicks> parse_stat_ticks(std::string_view stat);
std::optional<std::uint64_t> parse_btime(std::string_view proc_stat);

}  // namespace nerve
