// SPDX-License-Identifier: LGPL-2.1-or-later
// The cgroup2 tree as the lifecycle logic sees it, behind an interface so its unit tests can run
// without a kernel cgroup tree. RealCgroups (real_cgroups.h) is the real thing.
//
// A cgroup is named by its ControlGroup path (as systemd reports it, relative to the root of the
// cgroup2 hierarchy). Its id is the folder's inode number, unique for the cgroup's life: it is
// checked against the record before any signal, and cgroup.kill is written only through the folder
// fd whose id was checked, so a cgroup removed and re-created under the same path is never hit.
// Waiting for a cgroup to empty is a watch on its cgroup.events (inotify), never a sleep: arm the
// watch before the first read, so no change can fall between the two.
#pragma once

#include "base/host.h"
#include "base/result.h"
#include "base/usage.h"
#include "record/record.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

// The two leaves of a scope that has a holder (kRunLeaf, kHoldLeaf: record.h).
struct Leaves {
  std::uint64_t run_id = 0;       // the cgroup id of <scope>/run
  std::string controllers;        // the controllers enabled for the leaves ("" none), e.g. "memory pids"
  std::string controllers_error;  // why some the scope offers could not be enabled, or ""
};

class Cgroups {
 public:
  virtual ~Cgroups() = default;
  // The cgroup id (inode number) of 'cgroup', or nullopt if it is gone.
  virtual std::optional<std::uint64_t> id(const std::string& cgroup) = 0;
  // "populated" of cgroup.events: some process is in the cgroup or below it. A cgroup that is gone
  // is not populated; one that cannot be read is an Error (it is not known to be empty).
  virtual Result<bool> populated(const std::string& cgroup) = 0;
  // Every pid in the cgroup and below it (what can be read).
  virtual std::vector<pid_t> pids(const std::string& cgroup) = 0;
  // Every live process in the cgroup and below it, read completely (a process whose threads have all
  // exited is not listed, though it keeps the cgroup populated until the kernel releases it): an
  // Error when some part could not be read, which a cgroup removed meanwhile is not (it held none).
  virtual Result<std::vector<pid_t>> live_pids(const std::string& cgroup) {
    (void)cgroup;
    return Error{"nerve.Cgroup.Unreadable", "not supported here"};
  }
  // Opens 'cgroup', checks through that folder fd that its id is 'expected_id', and only then
  // writes cgroup.kill through the same fd. false if gone, replaced or unsupported (before 5.14).
  virtual bool kill_if(const std::string& cgroup, std::uint64_t expected_id) = 0;
  // What the cgroup used (usage.h), read through the folder fd whose id was checked to be
  // 'expected_id'; nullopt if gone or replaced.
  virtual std::optional<Usage> usage(const std::string& cgroup, std::uint64_t expected_id) = 0;
  // Writes "0" to cgroup.freeze through the checked folder fd: a frozen cgroup's processes handle
  // no signal but SIGKILL until thawed. false if gone, replaced, or the write failed.
  virtual bool thaw_if(const std::string& cgroup, std::uint64_t expected_id) = 0;
  // "frozen" of cgroup.events: the cgroup is frozen (false when gone or unreadable).
  virtual bool frozen(const std::string& cgroup) = 0;
  // Makes the leaves run/ and hold/ in 'cgroup' through its folder fd checked to be 'expected_id',
  // moves 'holder' into hold/ and then 'pid' into run/ (so the scope's own folder holds no process,
  // as the kernel wants before it enables a controller below it), then enables in the scope's
  // cgroup.subtree_control the controllers its cgroup.controllers offers (best effort: what failed is
  // in Leaves::controllers_error). Error nerve.Cgroup.LeavesFailed naming the step that failed.
  virtual Result<Leaves> make_leaves(const std::string& cgroup, std::uint64_t expected_id, pid_t pid, pid_t holder) {
    (void)cgroup, (void)expected_id, (void)pid, (void)holder;
    return Error{"nerve.Cgroup.LeavesFailed", "leaves are not supported here"};
  }
  // 'changed' runs on every change of cgroup.events and when the folder goes. -1: already gone. The
  // same cgroup may be watched more than once: each watch has its own handle.
  virtual int watch(const std::string& cgroup, std::function<void()> changed) = 0;
  virtual void unwatch(int handle) = 0;
  // The cgroup2 membership ("0::" line of /proc/PID/cgroup) of 'pid', or nullopt.
  virtual std::optional<std::string> member_of(pid_t pid) = 0;
  // The start time of 'pid' (field 22 of /proc/PID/stat), or nullopt when it is gone. With the pid it
  // names one process: a reused pid has another start time.
  virtual std::optional<std::uint64_t> start_time(pid_t pid) = 0;
  // The parent and the start time of 'pid' (host.h, ProcStat), or nullopt when it is gone.
  virtual std::optional<ProcStat> process(pid_t pid) {
    auto start = start_time(pid);
    auto parent = proc_parent(pid);
    if (!start || !parent) return std::nullopt;
    return ProcStat{*parent, *start};
  }
  // A migration is coming (a Contain or Launch arrived): start the kernel's grace period of it now,
  // in the background (migration_primer.h). Never fails; does nothing by default.
  virtual void prime_migration() {}
};

}  // namespace nerve
