// SPDX-License-Identifier: LGPL-2.1-or-later
// Which cgroup2 subtree the cgroup backend (system/cgroup_backend.h) may take: the rules, read from
// the host by nerved (nerved/backend.cpp) and by `nervectl doctor` alike.
//
// It never takes a delegation nobody gave it. A subtree is taken only when all of these hold:
//   1. cgroup2 is mounted, read-write (a read-only mount, as default Docker and Kubernetes give, is
//      refused with the fixes that apply);
//   2. the folder exists (nerve does not make the root of its own subtree) and nerved may write it,
//      its cgroup.procs and its cgroup.subtree_control (the kernel's delegation, cgroup-v2.rst
//      "Delegation Containment": as root, or chowned to nerved's user);
//   3. it is not a folder of the tree a systemd manages (a path through NAME.slice, NAME.scope,
//      NAME.service or init.scope) unless systemd delegated it (the user.delegate or trusted.delegate
//      mark systemd puts on a unit's cgroup with Delegate=yes, on the folder or one above it within
//      that tree) or the admin says so (--cgroup-delegated);
//   4. with no folder named (nerved's own cgroup is taken), not the root of the machine's own cgroup
//      namespace: the whole machine is never taken unasked.
// Then, when nerved's own cgroup is the subtree's root, nerved moves itself into <root>/supervisor,
// a leaf (systemd's CGROUP_DELEGATION.md: no process in an inner folder, so controllers can be
// enabled for the runs, which are folders beside it; nerved/backend.cpp).
#pragma once

#include "base/host_kind.h"
#include "base/result.h"

#include <string>

namespace nerve {

inline constexpr const char* kNoSubtree = "nerve.Cgroup.NoSubtree";
inline constexpr const char* kSupervisorLeaf = "supervisor";

// What the rules look at, read from the host by read_subtree_facts (a unit test gives its own).
struct SubtreeFacts {
  std::string mount;            // where cgroup2 is mounted; "" when it is not
  bool read_only = false;       // that mount is read-only
  std::string own_cgroup;       // nerved's cgroup, as /proc/self/cgroup names it
  bool initial_namespace = false;  // nerved's cgroup namespace is PID 1's
};
SubtreeFacts read_subtree_facts();

struct Subtree {
  std::string root;  // as /proc/PID/cgroup names it ("/" for a namespace's whole tree)
  std::string how;   // why this one, for the log: "--cgroup-root", "nerved's own cgroup"
};

// REQUESTED: --cgroup-root ("" = nerved's own cgroup), as a cgroup path or a path under the mount.
// Error kNoSubtree saying which rule failed and what would fix it.
Result<Subtree> choose_subtree(const SubtreeFacts& facts, const std::string& requested, bool delegated);

// The unit of systemd's tree ROOT is in, whose delegation would count ("" when it is not in one).
std::string systemd_unit_of(const std::string& cgroup);

// The fixes for a host with no user manager and no writable cgroup tree, one per line, for every kind
// of host (host_kind.h has the one that applies to this host).
std::string subtree_fixes();

// Why no run can be contained here: no user manager (NO_MANAGER says why) and no subtree (REFUSAL,
// choose_subtree's message); then the fix for this kind of host, and the others.
std::string no_backend(const std::string& no_manager, const std::string& refusal, HostKind host);

}  // namespace nerve
