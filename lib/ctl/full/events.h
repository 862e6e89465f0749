// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl events`: nerved's signals as they come, one line each (JSON lines with --json), until
// SIGINT or SIGTERM (exit 0). Followed: every signal nerved sends under /org/nerve/Lifecycle1:
// RunExited of the manager, PropertiesChanged of the run objects, InterfacesAdded/Removed (a run object
// appearing or going, once nerved has an ObjectManager), and any other one by its name.
// Once it follows, it says so on stderr ("Following nerved's signals ..."), so a caller knows that
// nothing after that moment is missed. The handler, events(), is declared with the others
// (verb_handlers.h).
#pragma once

#include <string>

namespace nerve::ctl {

// The run id of a run object's path (/org/nerve/Lifecycle1/run/ESCAPED, "_XX" being the byte of hex
// XX, as nerved and sd_bus_path_encode escape), or "" for any other path.
std::string run_of_path(const std::string& path);

}  // namespace nerve::ctl
