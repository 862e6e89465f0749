#include "ctl/front.h"

#include "ctl/args.h"
#include "ctl/verb_handlers.h"

#include "base/companion.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace nerve::ctl {

namespace {

// The verbs that act on one run (run_verbs.cpp).
constexpr std::pair<const char*, int (*)(const VerbArgs&)> kRunVerbs[] = {
    {"reap", reap}, {"cancel", cancel}, {"freeze", freeze}, {"thaw", thaw}, {"forget", forget}};

// The verbs the front leaves: nervectl-full with the same command line (returns only on failure).
int exec_full_program(const Verb& verb, char** argv) {
  std::string path = find_companion(kFullProgramName, "NERVE_CTL_FULL");
  if (path.empty()) {
    std::fprintf(stderr, "nervectl %s: %s, which runs this verb, is neither next to nervectl nor in its libexec "
                 "folder; reinstall nerve.\n", verb.name, kFullProgramName);
    return kExitError;
  }
  ::execv(path.c_str(), argv);
  std::fprintf(stderr, "nervectl %s: cannot execute %s: %s\n", verb.name, path.c_str(), std::strerror(errno));
  return kExitError;
}

}  // namespace

int front_main(int argc, char** argv) {
  Parsed p = parse_and_print(argc, argv);
  if (!p.verb) return p.exit_code;
  const std::string name = p.verb->name;
  if (name == "launch" && !p.args.wait) return launch(p.args);
  for (auto [verb, run] : kRunVerbs)
    if (name == verb) return run(p.args);
  return exec_full_program(*p.verb, argv);
}

}  // namespace nerve::ctl
