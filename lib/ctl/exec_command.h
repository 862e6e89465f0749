// The last step of every launch: exec the command in place, with the signal handling it expects.
#pragma once

#include "ctl.h"

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <string>
#include <vector>

namespace nerve::ctl {

// "KEY=VALUE" strings as the (KEY, VALUE) pairs of the bus (a(ss)).
std::vector<sdbus::Struct<std::string, std::string>> property_pairs(const std::vector<std::string>& properties);

// The Contain options of a run's controls: "properties" (a(ss)), "timeout_usec", "slice".
void add_control_options(std::map<std::string, sdbus::Variant>& options, const RunControlArgs& controls);

// The command's own view of its run (issue 10 item 7): NERVE_RUN, NERVE_RUN_ATTEMPT, INVOCATION_ID in
// this process's environment, from Contain's reply, before the exec.
void set_run_environment(const std::string& run, unsigned attempt, const std::string& invocation_id);

// Restores default dispositions for INT, QUIT, TERM, HUP and PIPE (a shell leaves INT and QUIT
// ignored in background jobs), unblocks every signal, and execvp's 'cmd'. Returns only on failure,
// with errno.
int exec_command(const std::vector<std::string>& cmd);

}  // namespace nerve::ctl
