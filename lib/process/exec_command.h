// SPDX-License-Identifier: LGPL-2.1-or-later
// The last step of every launch: exec the command in place, with the signal handling it expects.
#pragma once

#include <string>
#include <vector>

namespace nerve {

// The command's own view of its run: NERVE_RUN, NERVE_RUN_ATTEMPT, INVOCATION_ID in
// this process's environment, from Contain's reply, before the exec.
void set_run_environment(const std::string& run, unsigned attempt, const std::string& invocation_id);

// Restores default dispositions for INT, QUIT, TERM, HUP and PIPE (a shell leaves INT and QUIT
// ignored in background jobs), unblocks every signal, and execvp's 'cmd'. Returns only on failure,
// with errno.
int exec_command(const std::vector<std::string>& cmd);

}  // namespace nerve
