// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl-full: every verb, through the generated sdbus-c++ proxy (the front, front.h, runs plain
// launch and the verbs of one run itself and execs this program for the others).
#include "ctl/ctl.h"

#include "ctl/args.h"
#include "ctl/bus_error.h"
#include "ctl/verb_table.h"

#include <sdbus-c++/Error.h>

namespace nerve::ctl {

namespace {

// nervectl-full as the table sees it (verb_table.h): a handler of nervectl-full, H, is called with
// this call's bus connection, and a failed bus call is told as report_bus_error tells it.
struct Full {
  template <class H>
  static int run(const Call& c) {
    Context ctx;
    try {
      return H{}(ctx, c.args);
    } catch (const sdbus::Error& e) {
      return report_bus_error(c.verb, BusFailure{e.getName(), e.getMessage()});
    }
  }
  template <class H>
  static constexpr int (*full)(const Call&) = run<H>;
};

}  // namespace

Verbs full_verbs() { return verb_table<Full>(); }

int ctl_main(int argc, char** argv) { return dispatch(full_verbs(), argc, argv); }

}  // namespace nerve::ctl
