// SPDX-License-Identifier: LGPL-2.1-or-later
// The handlers of nervectl's verbs, as the table (verb_table.h) names them. Each gets its checked
// arguments (args.cpp), makes its bus calls and prints.
//   - The front's (lib/ctl): launch without --wait (launch.cpp) and the verbs that act on one run
//     (run_verbs.cpp), through libnerve (libnerve/nerve.h); both programs run them.
//   - nervectl-full's (lib/ctl/full, one file each or one for a few small ones), with the generated
//     proxy on a Context: declared here so that the table can name them, defined only in nervectl-full,
//     and named only where the front never compiles a call to them (verb_table.h).
#pragma once

#include "ctl/ctl.h"

namespace nerve::ctl {

int launch(const Call& c);  // launch.cpp, without --wait
// run_verbs.cpp: the verbs that act on one run.
int reap(const Call& c);
int cancel(const Call& c);
int freeze(const Call& c);
int thaw(const Call& c);
int forget(const Call& c);

int launch_waiting(Context& ctx, const VerbArgs& a);  // supervise.cpp: launch --wait
int status(Context& ctx, const VerbArgs& a);          // status.cpp
int list(Context& ctx, const VerbArgs& a);            // list.cpp
int slice(Context& ctx, const VerbArgs& a);           // slice.cpp
// manager_verbs.cpp: the verbs about nerved as a whole.
int reconcile(Context& ctx, const VerbArgs& a);
int sealing(Context& ctx, const VerbArgs& a);
int metrics(Context& ctx, const VerbArgs& a);
int events(Context& ctx, const VerbArgs& a);  // events.cpp
int doctor(Context& ctx, const VerbArgs& a);  // doctor.cpp

}  // namespace nerve::ctl
