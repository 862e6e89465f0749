// `nervectl doctor`: whether this host has what nerve needs, one line per check (ok, FAIL, WARN,
// INFO) and, when a check fails, what to do. The checks are a table in doctor.cpp, in the order a
// run needs them: session bus, user manager, cgroup2, controllers, nerved, runs folder, a probe
// scope (created, checked and reaped through nerved), sealing. Exit 0 when every required check
// passed, 1 otherwise; --json prints an array of {check, status, detail, hint} instead.
#pragma once

#include "ctl/ctl.h"

namespace nerve::ctl {

int doctor(Context& ctx, const VerbArgs& a);

}  // namespace nerve::ctl
