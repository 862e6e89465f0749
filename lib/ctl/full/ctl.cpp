// nervectl-full: every verb, through the generated sdbus-c++ proxy (the front, front.h, runs plain
// launch and the verbs of one run itself and execs this program for the others).
#include "ctl/ctl.h"

#include "ctl/args.h"
#include "ctl/bus_error.h"
#include "ctl/full/doctor.h"
#include "ctl/full/events.h"
#include "ctl/full/supervise.h"
#include "ctl/verb_handlers.h"

#include <sdbus-c++/Error.h>

#include <cstdio>
#include <cstring>

namespace nerve::ctl {

namespace {

using Handler = int (*)(Context&, const VerbArgs&);

// launch: with --wait the supervisor (supervise.h), else as the front runs it.
int launch_verb(Context& ctx, const VerbArgs& a) {
  if (!a.wait) return launch(a);
  return supervise(ctx, SuperviseRequest{a.run, a.grace_usec, a.keep, a.cmd, a.sealed, a.controls});
}

// The verbs the front runs (front.h), when nervectl-full is called for them.
template <int (*Run)(const VerbArgs&)>
int front_verb(Context&, const VerbArgs& a) {
  return Run(a);
}

struct Handled {
  const char* verb;
  Handler run;
};

const Handled kHandlers[] = {
    {"launch", launch_verb},         {"reap", front_verb<reap>},     {"cancel", front_verb<cancel>},
    {"freeze", front_verb<freeze>},  {"thaw", front_verb<thaw>},     {"forget", front_verb<forget>},
    {"status", status},              {"list", list},                 {"reconcile", reconcile},
    {"slice", slice},                {"sealing", sealing},           {"events", events},
    {"doctor", doctor},
};

Handler handler_of(const Verb& verb) {
  for (const Handled& h : kHandlers)
    if (std::strcmp(h.verb, verb.name) == 0) return h.run;
  return nullptr;
}

}  // namespace

int ctl_main(int argc, char** argv) {
  Parsed p = parse_and_print(argc, argv);
  if (!p.verb) return p.exit_code;
  Handler run = handler_of(*p.verb);
  if (!run) {
    std::fprintf(stderr, "nervectl %s: no handler for this verb (a bug)\n", p.verb->name);
    return kExitError;
  }
  Context ctx;
  try {
    return run(ctx, p.args);
  } catch (const sdbus::Error& e) {
    return report_bus_error(*p.verb, BusFailure{e.getName(), e.getMessage()});
  }
}

}  // namespace nerve::ctl
