// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's own timing defaults: the deadlines of its calls to systemd, a reap's kill steps and the
// back-off of retries. What nerved and nervectl share (graces, client call timeouts, exec exit codes)
// is in conventions.h.
#pragma once

#include "base/conventions.h"

#include <chrono>
#include <cstddef>

namespace nerve {

// The deadline of each call nerved makes to the systemd user manager (SystemdOptions).
inline constexpr std::chrono::milliseconds kSystemdCallTimeout{5000};
// StartTransientUnit and StopUnit return once their job is queued; their call gets more time.
inline constexpr std::chrono::milliseconds kSystemdJobCallTimeout{10'000};
// A scope's start job ends in milliseconds; one whose JobRemoved has not come after this has failed
// (the held process is then never let exec). A stop job has no deadline of its own: the reap's
// timers (reaper.h) decide when it is over.
inline constexpr std::chrono::milliseconds kStartJobTimeout{30'000};
// GetRun's live part waits at most kLiveStateDeadline for systemd's lookup of the unit; then, and at
// once while systemd is late (a lookup missed it and has not been answered since), it answers from the
// cgroup tree (live_lookup.h: a stalled manager never delays a query).
inline constexpr std::chrono::milliseconds kLiveStateDeadline{20};

// Final reaps that run at once (their calls to systemd in flight); the others wait their turn in
// order. 5,000 owners gone at once must not send the manager 30,000 calls that all miss their deadline.
inline constexpr std::size_t kConcurrentReaps = 64;

// A started scope's lookup that times out is asked again, up to this many lookups in all (ContainOp).
inline constexpr int kScopeLookupTries = 3;

// The calls one client (bus connection) may have in flight; one more is answered LimitExceeded (call_gate.h).
inline constexpr std::size_t kCallsPerClient = 512;

// A reap: cgroup.kill this long after nerved's SIGKILL; pending_retry if processes are left this
// long after the grace.
inline constexpr auto kCgroupKillAfter = std::chrono::seconds(1);
inline constexpr auto kKillWait = std::chrono::seconds(10);

// A pending_retry reap is tried again after kRetryFirst, doubling up to kRetryMax.
inline constexpr auto kRetryFirst = std::chrono::seconds(1);
inline constexpr auto kRetryMax = std::chrono::minutes(5);

// nerved's metrics file (metrics_file.h): written at most once per interval (the default; nerved's
// --metrics-interval) after a change, and rewritten this often when nothing changes, so that its
// gauges (nerved's memory, its fds) and its mtime stay fresh.
inline constexpr auto kMetricsInterval = std::chrono::seconds(5);
inline constexpr auto kMetricsRefresh = std::chrono::seconds(60);

}  // namespace nerve
