// SPDX-License-Identifier: LGPL-2.1-or-later
// Starting a command that waits for permission to exec.
//
// spawn_held starts the small helper nerve-held (held_helper.h) with posix_spawn, not a fork of
// nerved: its cost does not grow with the daemon. The child is in a new session with default signal
// handling and its stdio; it goes to the working folder and then blocks until it is released, so
// nerved can put it into its run's scope before any of the command's code runs: the held-child
// protocol of held_child.h (an exec failure is reported through a close-on-exec pipe; EOF on it means
// the exec happened). A sealed child, once released (so in its scope), enters a new cgroup namespace
// before it execs (sealing.h).
#pragma once

#include "base/fd.h"

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace nerve {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in the PATH of 'env' if it has no '/'
  std::vector<std::string> env;   // KEY=VALUE
  std::string cwd;
  int stdio[3] = {-1, -1, -1};
  bool sealed = false;  // after its release, the child enters a new cgroup namespace (sealing.h)
};

struct HeldChild {
  pid_t pid = -1;
  Fd pidfd;   // readable when the child exits
  Fd go;      // write 'X' to let it exec; close to make it exit 125
  Fd report;  // EOF: exec happened; otherwise "errno message"
};

// The file argv0 names: itself if it has a '/', else the first executable file of that name in the
// PATH entry of 'env' (or /usr/local/bin:/usr/bin:/bin without one); nullopt if there is none.
// Relative PATH entries (and an empty one, ".") are taken relative to 'cwd', where the command runs.
std::optional<std::string> resolve_command(const std::string& argv0, const std::vector<std::string>& env,
                                           const std::string& cwd = "");

// Throws std::system_error when the child cannot be made (ENOENT when the command or the helper is
// not found, EBADF for a stdio fd < 0).
HeldChild spawn_held(const SpawnSpec& spec);

// Lets the child exec, with RUN_ENV (NERVE_RUN=, NERVE_RUN_ATTEMPT=, INVOCATION_ID=; at most three,
// 500 bytes) added to its environment: they replace any of the same names in SpawnSpec::env.
// false if it is already gone.
bool release(HeldChild& child, const std::vector<std::string>& run_env = {});

}  // namespace nerve
