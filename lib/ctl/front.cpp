// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ctl/front.h"

#include "ctl/args.h"
#include "ctl/verb_table.h"

#include "base/companion.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace nerve::ctl {

namespace {

// The front as the table sees it (verb_table.h): a handler of nervectl-full is hand_on, whatever H.
struct Front {
  template <class H>
  static constexpr int (*full)(const Call&) = hand_on;
};

}  // namespace

int hand_on(const Call& c) {
  std::string path = find_companion(kFullProgramName, "NERVE_CTL_FULL");
  if (path.empty()) {
    std::fprintf(stderr, "nervectl %s: %s, which runs this verb, is neither next to nervectl nor in its libexec "
                 "folder; reinstall nerve.\n", c.verb.name, kFullProgramName);
    return kExitError;
  }
  ::execv(path.c_str(), c.argv);
  std::fprintf(stderr, "nervectl %s: cannot execute %s: %s\n", c.verb.name, path.c_str(), std::strerror(errno));
  return kExitError;
}

Verbs front_verbs() { return verb_table<Front>(); }

int front_main(int argc, char** argv) { return dispatch(front_verbs(), argc, argv); }

}  // namespace nerve::ctl
