// SPDX-License-Identifier: LGPL-2.1-or-later
// Run ids and the scope unit names made from them.
//
// A run id is 1 to 128 characters of [A-Za-z0-9._:-] and does not start with '.'. That alphabet is a
// subset of the unit-name alphabet, so a run id needs no escaping to be part of a unit name, can never
// name a path outside the runs folder ('/' is not in it, and '.' / '..' start with '.'), and prints
// safely. The scope of attempt N of run R is "nerve-R-<nonce>.scope", where the nonce is 16 random hex
// digits: a new unit name for every attempt, so an old name can never be mistaken for a new scope.
#pragma once

#include "base/result.h"

#include <optional>
#include <string>
#include <string_view>

namespace nerve {

inline constexpr std::size_t kRunIdMax = 128;

// Why 'id' is not a valid run id (a sentence without the value), or nullopt if it is valid.
std::optional<std::string> run_id_problem(std::string_view id);

// org.nerve.Lifecycle1.Error.InvalidRunId, quoting the value, unless 'id' is valid.
Result<void> check_run_id(std::string_view id);

// systemd's rule for unit names (unit_name_is_valid, plain names): at most 255 characters, a known
// suffix, a non-empty prefix of [A-Za-z0-9:_.\-].
bool is_valid_unit_name(std::string_view name);

// "nerve-<run>-<nonce>.scope".
std::string scope_unit_name(std::string_view run, std::string_view nonce);

}  // namespace nerve
