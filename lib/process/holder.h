// SPDX-License-Identifier: LGPL-2.1-or-later
// The holder of a run's scope: the small program nerve-hold (daemon/hold_main.cpp), started by nerved
// right before it asks for the scope, put into the scope with the process to contain, then moved into
// the scope's hold/ leaf (cgroups.h, make_leaves). While it lives the scope's cgroup is populated, so
// systemd never removes it: the run's figures in run/ stay readable after its last process is gone,
// until the reap has read them and ends the scope with cgroup.kill (reaper.h). It ignores every
// catchable signal: KillUnit's and StopUnit's TERM leave it; only SIGKILL ends it.
//
// It is posix_spawn'd (not forked) in a session of its own, at /, with /dev/null as its stdio and
// nothing else open; nerved keeps its pidfd and collects its exit, so no zombie stays.
#pragma once

#include "base/fd.h"
#include "base/result.h"

#include <sys/types.h>

#include <string>

namespace nerve {

inline constexpr const char* kHolderName = "nerve-hold";

struct Holder {
  pid_t pid = -1;
  Fd pidfd;  // readable when it has ended
};

// Where nerve-hold is (companion.h; $NERVE_HOLD_HELPER overrides), "" when not found.
const std::string& holder_path();

// Starts nerve-hold from 'path'. Error nerve.Holder.SpawnFailed naming the path and the reason.
Result<Holder> spawn_holder(const std::string& path = holder_path());

}  // namespace nerve
