// The numbers nerve's parts must agree on, in one place: graces, call deadlines, retry back-off and
// the exit codes of a command that could not be executed.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdint>

namespace nerve {

// A run's grace (TERM to SIGKILL) when the launch gives none, and the longest one accepted.
inline constexpr std::uint64_t kDefaultGraceUsec = 10'000'000;
inline constexpr std::uint64_t kMaxGraceUsec = 3600ull * 1'000'000;
inline constexpr std::uint64_t grace_or_default(std::uint64_t grace_usec) {
  return grace_usec ? grace_usec : kDefaultGraceUsec;
}

// How long a client waits for a call that may include a reap with 'grace_usec' (0: the default):
// the grace, plus a minute for systemd and the kill that follow it.
inline constexpr std::uint64_t kCallSlackUsec = 60'000'000;
inline constexpr std::uint64_t reap_call_timeout_usec(std::uint64_t grace_usec) {
  return grace_or_default(grace_usec) + kCallSlackUsec;
}

// The deadline of each call nerved makes to the systemd user manager (SystemdOptions).
inline constexpr std::chrono::milliseconds kSystemdCallTimeout{5000};
// StartTransientUnit and StopUnit return once their job is queued; their call gets more time.
inline constexpr std::chrono::milliseconds kSystemdJobCallTimeout{10'000};
// A scope's start job ends in milliseconds; one whose JobRemoved has not come after this has failed
// (the held process is then never let exec). A stop job has no deadline of its own: the reap's
// timers (reaper.h) decide when it is over.
inline constexpr std::chrono::milliseconds kStartJobTimeout{30'000};

// A reap: cgroup.kill this long after nerved's SIGKILL; pending_retry if processes are left this
// long after the grace.
inline constexpr auto kCgroupKillAfter = std::chrono::seconds(1);
inline constexpr auto kKillWait = std::chrono::seconds(10);

// A pending_retry reap is tried again after kRetryFirst, doubling up to kRetryMax.
inline constexpr auto kRetryFirst = std::chrono::seconds(1);
inline constexpr auto kRetryMax = std::chrono::minutes(5);

// The exit code of a command that could not be executed, as a shell reports it: 127 not found,
// 126 found but not executable (or any other exec error).
inline constexpr int kExitNotFound = 127;
inline constexpr int kExitCannotExec = 126;
inline constexpr int exec_failure_exit_code(int err) { return err == ENOENT ? kExitNotFound : kExitCannotExec; }

}  // namespace nerve
