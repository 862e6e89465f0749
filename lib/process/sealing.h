// SPDX-License-Identifier: LGPL-2.1-or-later
// Sealed runs: a run's command starts in a new cgroup namespace rooted at its scope, so that it cannot
// move itself (or its children) out of the scope. docs/sealing.md has the design and its limits.
//
// The namespace only seals where cgroup2 is mounted with "nsdelegate" (the kernel then refuses any
// cgroup.procs write whose source or destination lies outside the writer's cgroup namespace). Without
// it the namespace changes only what /proc/self/cgroup shows, so a sealed launch is refused there
// (org.nerve.Lifecycle1.Error.SealingUnavailable) instead of pretending.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace nerve {

struct SealingStatus {
  bool available = false;
  // What was found: where cgroup2 is mounted and with which options; when unavailable, why and what
  // the host needs.
  std::string detail;
};

// Whether the mount table text (the format of /proc/self/mountinfo) allows sealing: a cgroup2 mount
// whose super options include nsdelegate. All cgroup2 mounts share one superblock, so any one tells.
SealingStatus sealing_from_mountinfo(std::string_view mountinfo);

// sealing_from_mountinfo over /proc/self/mountinfo, plus the user namespaces an unprivileged process
// needs to make a cgroup namespace (/proc/sys/user/max_user_namespaces > 0).
SealingStatus sealing_status();

// The lines seal_self writes to uid_map and gid_map (no allocation: async-signal-safe).
struct SealIds {
  char uid_map[32];  // "UID UID 1\n"
  char gid_map[32];  // "GID GID 1\n"
};
SealIds seal_ids(uid_t uid, gid_t gid);

// unshare(CLONE_NEWUSER | flags), then map only the caller's own uid and gid to themselves (setgroups
// denied first, as an unprivileged process must). Async-signal-safe. 0 or an errno value, *step naming
// the step that failed ("unshare", "setgroups", "uid_map", "gid_map").
int unshare_with_own_user_namespace(int flags, const char** step);

// In the contained process, after it is a member of its scope and before it execs: unshare its cgroup
// namespace, so the namespace's root is the scope. Without CAP_SYS_ADMIN (an unprivileged user) a user
// namespace is made with it, mapping only the process's own uid and gid to themselves (setgroups is
// denied in it, as unprivileged user namespaces require). Async-signal-safe, for a child between
// fork and exec. Returns 0 or an errno value; *step names the step that failed ("unshare",
// "setgroups", "uid_map", "gid_map").
int seal_self(const char** step);

// seal_self for the calling process (nervectl launch --sealed), then a check that the namespace is
// rooted at the process's cgroup ("0::/" in /proc/self/cgroup). "" on success, else what failed.
std::string seal_this_process();

}  // namespace nerve
