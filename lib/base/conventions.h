// The numbers nerved and nervectl share, defined once: a run's grace (its default and its bound), the
// call timeout a client allows for a call that may wait for a reap, and the exit codes of a command
// that could not be started.
#pragma once

#include <cerrno>
#include <cstdint>

namespace nerve {

// A grace of 0 (a launch or a reap without one) means this.
inline constexpr std::uint64_t kDefaultGraceUsec = 10'000'000;
// A longer grace is refused (InvalidArgument; nervectl: a usage error).
inline constexpr std::uint64_t kMaxGraceUsec = 3600ull * 1'000'000;

// A call that may wait for a reap with GRACE_USEC (0: the default) allows for the grace plus a minute.
inline constexpr std::uint64_t kReapCallMarginUsec = 60'000'000;
inline constexpr std::uint64_t reap_call_timeout_usec(std::uint64_t grace_usec) {
  return (grace_usec ? grace_usec : kDefaultGraceUsec) + kReapCallMarginUsec;
}

// A command that could not be executed exits as a shell's would: 127 when it was not found, else 126.
inline constexpr int exec_failure_exit_code(int err) { return err == ENOENT ? 127 : 126; }

}  // namespace nerve
