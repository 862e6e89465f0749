// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve-held: the small program a Launch's held child runs until its release (so that a launch
// never forks the whole daemon). nerved starts it with posix_spawn (a vfork-style clone:
// no copy of the daemon's page tables, however big the daemon is) in a new session, with default
// signal handling, an empty signal mask and the command's stdio; the helper then keeps the held-child
// protocol of held_child.h in a small address space of its own: chdir, wait for the word, take the
// run's variables, enter the sealing namespaces (sealing.h: unshare(CLONE_NEWUSER) needs a task that
// shares its memory with no other), exec the command; a failed step is reported "ERRNO STEP" and
// exits 126/127.
//
// Its command line, built by held_helper_argv and read by held_helper_main, carries everything:
//   nerve-held VERSION GO_FD REPORT_FD FLAGS CWD PATH ARGC ARGV... ENV...
// FLAGS is "s" (sealed) or "-"; CWD is "" for none; PATH is the resolved file to exec. Its own
// environment is empty: the command's environment is in ENV, so nothing in it (LD_PRELOAD, ...)
// acts on the helper before the command is contained.
#pragma once

#include <string>
#include <vector>

namespace nerve {

inline constexpr const char* kHeldHelperName = "nerve-held";
// Bumped when the command line changes: a helper of another version refuses to run (exit 125).
inline constexpr const char* kHeldHelperVersion = "1";

struct HeldHelperArgs {
  int go = -1;
  int report = -1;
  bool sealed = false;
  std::string cwd;
  std::string path;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // without the run's variables (given with the release)
};

std::vector<std::string> held_helper_argv(const HeldHelperArgs& args);

// The helper's program (daemon/held_main.cpp). Returns only when its command line is not one of this
// version (125); otherwise it execs the command or exits.
int held_helper_main(int argc, char** argv);

// The helper nerved runs: $NERVE_HELD_HELPER if set, else nerve-held next to the running program (the
// build tree), else in the libexec folder relative to it (an installed nerved, whatever the prefix).
// "" if none is executable. Looked up once.
const std::string& held_helper_path();

}  // namespace nerve
