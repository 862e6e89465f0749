// SPDX-License-Identifier: LGPL-2.1-or-later
// A companion program: one that a program of nerve runs, found where the build or the install put it:
// next to the running program (the build tree), else in the libexec folder relative to it (an
// installed program, whatever the prefix). nerved's nerve-held (held_helper.h) and nervectl's
// nervectl-full (ctl/front.h) are found this way.
#pragma once

#include <string>

namespace nerve {

// The path of the companion NAME: $ENV_OVERRIDE if that variable is set and not empty (tests), else
// NAME next to /proc/self/exe, else in its libexec folder; "" if none is executable.
std::string find_companion(const char* name, const char* env_override);

}  // namespace nerve
