// The handlers of nervectl's verbs, one file each (or one file for a few small ones); ctl.cpp finds
// each by its verb's name. Each gets its checked arguments (args.cpp), makes its bus calls and prints.
// launch (without --wait) and the verbs that act on one run are the front's (front.h): sd-bus, no
// Context; nervectl-full runs the same functions when it is called for them.
#pragma once

#include "ctl/ctl.h"

namespace nerve::ctl {

int launch(const VerbArgs& a);  // launch.cpp, without --wait (with it: supervise.h)
// run_verbs.cpp: the verbs that act on one run.
int reap(const VerbArgs& a);
int cancel(const VerbArgs& a);
int freeze(const VerbArgs& a);
int thaw(const VerbArgs& a);
int forget(const VerbArgs& a);
int status(Context& ctx, const VerbArgs& a);  // status.cpp
int list(Context& ctx, const VerbArgs& a);    // list.cpp
int slice(Context& ctx, const VerbArgs& a);   // slice.cpp
// manager_verbs.cpp: the verbs about nerved as a whole.
int reconcile(Context& ctx, const VerbArgs& a);
int sealing(Context& ctx, const VerbArgs& a);

}  // namespace nerve::ctl
