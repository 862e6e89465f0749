// SPDX-License-Identifier: LGPL-2.1-or-later
// Scopes a run's processes asked the user manager for, found and reaped before the run's own scope.
//
// A process of a run that runs `systemd-run --user --scope CMD` (podman's conmon and flatpak-spawn do
// it too) calls StartTransientUnit with PIDs=[its own pid] and then execs CMD: the user manager moves
// it out of the run's scope into a scope of its own (run-XXXX.scope in app.slice), where the run's
// reap would never see it. So a final reap, after its fence and before it stops the run's scope,
// lists the manager's scopes (ListUnitsByPatterns "*.scope", nerve's own "nerve-*" and the manager's
// init.scope left out: never_escaped below), reads
// the pids of each (cgroup.procs below its ControlGroup) and takes as the run's every scope holding
// a process that
//   - has NERVE_RUN=<run> and INVOCATION_ID=<the run's invocation id> in /proc/PID/environ (every
//     process of a run inherits both; README, "The command knows its run"), or NERVE_RUN=<run>,
//     NERVE_RUN_ATTEMPT=<attempt> and INVOCATION_ID=<the invocation id of the scope that holds it>:
//     `systemd-run --scope` sets INVOCATION_ID to its new scope's before it execs the command, so
//     the run's own id is gone from exactly the processes this looks for, or
//   - has an ancestor (by parent pid) that is still in the run's cgroup or below it (as the escaped CMD's parent,
//     the shell that ran systemd-run, usually is).
// A process that started before the run's first process is none of the run's (a run's processes
// all descend from it), and is settled by its start time alone, with no environ or ancestry read.
// The limit: a process that cleared its environment (env -i, or a program that builds its own) and
// whose parent in the run is gone already (or that double-forked away from it) is not recognised.
// docs/sealing.md says how a run can be kept from reaching the manager at all.
//
// Each scope taken is reaped as the run's is (ReapOp, reaper.h: StopUnit, then the proof that its
// cgroup is empty, SIGKILL and cgroup.kill after the grace), all of them before the run's own scope,
// and named in the receipt ("escaped": unit and pids). The cost is paid at reap time only (one
// ListUnitsByPatterns, one lookup per other scope, their cgroup.procs and the environ of their
// processes), never on the launch path: docs/performance.md has the figure.
#pragma once

#include "run/deps.h"
#include "record/record.h"

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace nerve {

// Whether 'pid', held by a scope whose invocation id is 'scope_invocation_id', is a process of the
// run 'record' by the rules above (environ, or an ancestor in or below the run's cgroup). Reads /proc;
// 'cgroups' answers the memberships.
bool process_of_run(pid_t pid, const Record& record, Cgroups& cgroups, const std::string& scope_invocation_id);

// The name is one nerve never takes as escaped: its own scopes ("nerve-*.scope"), which are runs of
// their own (nested runs among them), and the manager's own init.scope, into which the manager never
// moves a process (it holds the manager itself), so that asking for a scope cannot lead there.
bool never_escaped(const std::string& unit);

struct EscapedReaps {
  std::vector<EscapedScope> scopes;  // what was found (and reaped)
  std::string error;                 // "" when the search and every reap were complete
};

// Finds the escaped scopes of 'record' and reaps them (grace_usec and signal as the run's own reap),
// then 'done'. Nothing is looked for in a record of another boot or one that never ran.
void reap_escaped_scopes(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Cause cause,
                         std::function<void(EscapedReaps)> done);

}  // namespace nerve
