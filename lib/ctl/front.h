// nervectl, the program a person or an engine runs: a small front that starts fast (static libstdc++,
// sd-bus from libsystemd, no sdbus-c++: about half the dynamic linking of nervectl-full) and runs the
// hot verbs itself: `launch` without --wait (launch.cpp) and the verbs that act on one run (`reap`,
// `cancel`, `freeze`, `thaw`, `forget`: run_verbs.cpp), one bus call each (lean_call.h). It parses every command line with the same parser (args.h), so help, --version and
// usage errors are its own; any other verb it hands over unchanged, by exec, to nervectl-full
// (ctl.h's ctl_main), found next to it or in LIBEXECDIR/nerve (companion.h; $NERVE_CTL_FULL in tests).
#pragma once

namespace nerve::ctl {

inline constexpr const char* kFullProgramName = "nervectl-full";

int front_main(int argc, char** argv);

}  // namespace nerve::ctl
