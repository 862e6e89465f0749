// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's controls (-p, --timeout, --slice) as sdbus-c++ values, for the calls of nervectl-full
// (launch --wait's Contain, slice set). The front's launch gives the same options to libnerve
// (launch.cpp, libnerve/options.h); nerved checks them.
#pragma once

#include "ctl/ctl.h"

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <string>
#include <vector>

namespace nerve::ctl {

// "KEY=VALUE" strings as the (KEY, VALUE) pairs of the bus (a(ss)).
std::vector<sdbus::Struct<std::string, std::string>> property_pairs(const std::vector<std::string>& properties);

// The Contain options of a run's controls: "properties" (a(ss)), "timeout_usec", "slice".
void add_control_options(std::map<std::string, sdbus::Variant>& options, const RunControlArgs& controls);

}  // namespace nerve::ctl
