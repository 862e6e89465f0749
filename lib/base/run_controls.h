// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's controls: its unit properties, its slice and its timeout, as the options of
// Contain and Launch give them. Everything is checked before anything starts; the record keeps the
// properties as given ("KEY=VALUE"), the slice and the timeout.
#pragma once

#include "base/duration.h"
#include "base/result.h"
#include "base/unit_properties.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nerve {

inline constexpr const char* kDefaultSlice = "nerve.slice";

struct RunControls {
  std::vector<std::string> properties;       // "KEY=VALUE", as given
  std::vector<UnitProperty> unit_properties;  // what they parse to
  std::string slice;                          // the scope's slice; "" = systemd's default
  Duration timeout;                           // the run's timeout, nerve's deadline (take_runtime_max); zero or infinity = none
};

// The run's timeout is one control, given as timeout_usec (`--timeout`) or as the unit property
// RuntimeMaxSec=: this moves a RuntimeMaxSec out of the unit properties into 'timeout', so that
// nerve's own deadline ends the run (run/deadlines.h: its reap's rules and its receipt's usage), and
// systemd is never given RuntimeMaxUSec. The assignment stays in 'properties', as given.
// RuntimeMaxSec=infinity is no timeout (zero). Both given with different values (zero and infinity are
// the same: none): error InvalidProperty
// quoting both (the same value is one timeout).
Result<void> take_runtime_max(RunControls& controls);

// A systemd slice name: unit name characters, ending in ".slice", dashes only between parts
// ("a-b.slice" is b inside a); "-.slice" is the root slice. Error InvalidArgument quoting it.
Result<void> check_slice_name(std::string_view slice);

// The (KEY, VALUE) pairs of a `properties` option, parsed: error InvalidProperty naming the key.
Result<RunControls> parse_property_pairs(const std::vector<std::pair<std::string, std::string>>& pairs);

// The assignment as given ("KEY=VALUE") whose key or bus property systemd's MESSAGE names (the last
// one given), for an error that quotes what systemd refused; all of them, space separated, when the
// message names none.
std::string refused_assignment(const RunControls& controls, std::string_view message);

}  // namespace nerve
