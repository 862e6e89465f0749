// SPDX-License-Identifier: LGPL-2.1-or-later
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

// A call that waits for no reap (Freeze, Thaw, Forget, queries): nerved answers it within its own
// deadlines on the user manager, so a client that has had no answer after this gives up (sd-bus's
// default method call timeout).
inline constexpr std::uint64_t kCallTimeoutUsec = 25'000'000;

// A call that may wait for a reap with GRACE_USEC allows for the grace plus a minute: the kill after
// it, the confirmation that the cgroup is empty (pending_retry after 10 s), the receipt and the reply.
// GRACE_USEC 0 stands for the default grace; a Reap or Cancel that gives none waits the run's own
// grace instead (the run object's GraceUSec property), and its client must bound its wait by that.
inline constexpr std::uint64_t kReapCallMarginUsec = 60'000'000;
inline constexpr std::uint64_t reap_call_timeout_usec(std::uint64_t grace_usec) {
  return (grace_usec ? grace_usec : kDefaultGraceUsec) + kReapCallMarginUsec;
}

// A command that could not be executed exits as a shell's would: 127 when it was not found, else 126.
inline constexpr int exec_failure_exit_code(int err) { return err == ENOENT ? 127 : 126; }

}  // namespace nerve
