// The handlers of nervectl's verbs, one file each (or one file for a few small ones); verbs.cpp puts
// them in the table. Each gets its checked arguments (args.cpp), makes its bus calls and prints.
#pragma once

#include "ctl.h"

namespace nerve::ctl {

int launch(Context& ctx, const VerbArgs& a);  // launch.cpp (and supervise.cpp for --wait)
// run_verbs.cpp: the verbs that act on one run.
int reap(Context& ctx, const VerbArgs& a);
int cancel(Context& ctx, const VerbArgs& a);
int freeze(Context& ctx, const VerbArgs& a);
int thaw(Context& ctx, const VerbArgs& a);
int forget(Context& ctx, const VerbArgs& a);
int status(Context& ctx, const VerbArgs& a);  // status.cpp
int list(Context& ctx, const VerbArgs& a);    // list.cpp
int slice(Context& ctx, const VerbArgs& a);   // slice.cpp
// manager_verbs.cpp: the verbs about nerved as a whole.
int reconcile(Context& ctx, const VerbArgs& a);
int sealing(Context& ctx, const VerbArgs& a);

}  // namespace nerve::ctl
