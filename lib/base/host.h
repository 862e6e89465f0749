// SPDX-License-Identifier: LGPL-2.1-or-later
// Facts about this machine and its processes, read from /proc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace nerve {

// /proc/sys/kernel/random/boot_id without dashes (32 hex digits). Throws std::runtime_error.
std::string read_boot_id();

// The path of the "0::" line of /proc/PID/cgroup (the cgroup2 membership), or nullopt.
std::optional<std::string> proc_cgroup(pid_t pid);

// The two fields of /proc/PID/stat nerve reads: the parent pid (field 4) and the start time (field 22,
// clock ticks after boot). With the pid, the start time names one process: a reused pid has another.
struct ProcStat {
  pid_t parent = 0;
  std::uint64_t start_time = 0;
};
// nullopt if gone or unreadable; then *err (if given) is ENOENT or ESRCH when the process is gone,
// another errno when it is unknown.
std::optional<ProcStat> proc_stat(pid_t pid, int* err = nullptr);

// Field 22 of /proc/PID/stat (start time in clock ticks after boot), or nullopt if gone or unreadable;
// then *err (if given) is ENOENT or ESRCH when the process is gone, another errno when it is unknown
// (out of fds or memory: never to be read as "gone").
std::optional<std::uint64_t> proc_start_time(pid_t pid, int* err = nullptr);

// The parent pid (field 4 of /proc/PID/stat), or nullopt if gone.
std::optional<pid_t> proc_parent(pid_t pid);

// The mount point of the cgroup2 hierarchy (from /proc/self/mountinfo; /sys/fs/cgroup preferred),
// or nullopt when there is none. NERVE_CGROUP_ROOT overrides it.
std::optional<std::string> cgroup_root();

// 'bytes' random bytes from getrandom(2), as lowercase hex.
std::string random_hex(std::size_t bytes);

// 16 raw bytes as 32 lowercase hex digits.
std::string hex(const std::uint8_t* data, std::size_t n);

}  // namespace nerve
