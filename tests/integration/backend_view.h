// SPDX-License-Identifier: LGPL-2.1-or-later
// What a test sees of the backend that holds the runs, the same questions on both: the systemd user
// manager's units (systemctl), or, under the harness's --no-manager mode (NERVE_TEST_BACKEND=cgroup),
// the cgroup backend's folders under NERVE_CGROUP_ROOT, read as that backend defines a unit
// (lib/system/cgroup_backend.h: a scope is a folder <root>/<unit> or <root>/<slice>/<unit>, its
// InvocationID the folder's cgroup id as 32 hex digits, active while the folder exists).
#pragma once

#include <optional>
#include <string>
#include <vector>

// For a test of what only a user manager does (a stalled manager, its private socket, its own
// units): skipped, visibly, on the cgroup backend, which has none.
#define NERVE_NEEDS_USER_MANAGER()                                                              \
  do {                                                                                          \
    if (::nerve::itest::cgroup_backend())                                                       \
      GTEST_SKIP() << "tests the systemd user manager, which the cgroup backend does not have"; \
  } while (0)

namespace nerve::itest {

// True under the harness's --no-manager mode: nerved runs with --backend=cgroup.
bool cgroup_backend();

// The cgroup backend's folder of UNIT (a scope or a slice), as a path under the mount; nullopt when
// there is none.
std::optional<std::string> unit_folder(const std::string& unit);

// The nerve-* scopes of the cgroup backend, one "UNIT loaded active running" line each, as systemctl
// list-units prints live units ("" when none).
std::string cgroup_nerve_units();

// A property of UNIT on the cgroup backend, as `systemctl show -p NAME --value` would print it for
// the unit the backend emulates: ActiveState, InvocationID, Slice, TasksMax, MemoryMax, CPUQuotaPerSecUSec,
// RuntimeMaxUSec ("infinity": the backend has no unit timeout; a run's timeout is nerved's own).
// nullopt for a property it does not know (the test then names it).
std::optional<std::string> cgroup_unit_property(const std::string& unit, const std::string& name);

// Stops UNIT behind nerved's back, as `systemctl --user stop` does on the systemd backend; on the
// cgroup backend: cgroup.kill, until no process is listed below it, and the folder removed once it is
// empty (by this, or by nerved, which collects an emptied scope; one that holds an ended child of the
// test stays populated until the test waits for it). "" when done, else what failed.
std::string stop_out_of_band(const std::string& unit);

// A command line that runs ARGV in place inside a scope named UNIT in SLICE that nerve did not make:
// `systemd-run --user --scope` on the systemd backend; on the cgroup backend a shell that makes the
// folder where the backend would, moves itself into it and execs ARGV.
std::vector<std::string> foreign_scope_command(const std::string& unit, const std::string& slice,
                                               const std::vector<std::string>& argv);

// On the cgroup backend, the first controller that one of ASSIGNMENTS ("TasksMax=40", ...) needs and
// the subtree's root does not offer (the backend refuses such a limit by name; RunControlsEnforced
// checks that refusal); "" when all are offered, and always on the systemd backend (which records a
// limit whose controller is missing).
std::string controller_missing_for(const std::vector<std::string>& assignments);

// GTEST_SKIP, visibly, naming the controller, when controller_missing_for(ASSIGNMENTS) names one.
#define NERVE_NEEDS_CONTROLLERS_FOR(...)                                                                 \
  do {                                                                                                   \
    if (std::string missing = ::nerve::itest::controller_missing_for(__VA_ARGS__); !missing.empty())   \
      GTEST_SKIP() << "the cgroup backend refuses these limits by name without the " << missing         \
                   << " controller, which this subtree does not offer (RunControlsEnforced checks it)"; \
  } while (0)

}  // namespace nerve::itest
