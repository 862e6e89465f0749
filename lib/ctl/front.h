// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl, the program a person or an engine runs: a small front that starts fast (static libstdc++,
// libnerve over sd-bus, no sdbus-c++: about half the dynamic linking of nervectl-full) and runs the
// hot verbs itself: `launch` without --wait (launch.cpp) and the verbs that act on one run (`reap`,
// `cancel`, `freeze`, `thaw`, `forget`: run_verbs.cpp), one call of libnerve each (nerve.h), so every
// such verb exercises the library engines link. It parses
// every command line with the same parser and table (args.h, verb_table.h), so help, --version and
// usage errors are its own; any other verb it hands over unchanged, by exec, to nervectl-full
// (ctl.h's ctl_main), found next to it or in LIBEXECDIR/nerve (companion.h; $NERVE_CTL_FULL in tests).
#pragma once

#include "ctl/ctl.h"

namespace nerve::ctl {

inline constexpr const char* kFullProgramName = "nervectl-full";

// The front's table: the rows of nervectl-full's verbs run hand_on.
Verbs front_verbs();
// Execs nervectl-full with the same command line; returns (1) only when that fails, having said why.
int hand_on(const Call& c);

int front_main(int argc, char** argv);

}  // namespace nerve::ctl
