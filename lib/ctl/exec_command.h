// The last step of every launch: exec the command in place, with the signal handling it expects.
#pragma once

#include <string>
#include <vector>

namespace nerve::ctl {

// Restores default dispositions for INT, QUIT, TERM, HUP and PIPE (a shell leaves INT and QUIT
// ignored in background jobs), unblocks every signal, and execvp's 'cmd'. Returns only on failure,
// with errno.
int exec_command(const std::vector<std::string>& cmd);

}  // namespace nerve::ctl
