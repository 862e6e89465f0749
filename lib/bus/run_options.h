// SPDX-License-Identifier: LGPL-2.1-or-later
// The options (a{sv}) of Contain and Launch: one table of every option (its name, the D-Bus type it
// must have, the methods that take it, where it goes in the request) and one pure parse of a method's
// options into its request, or the InvalidArgument (or InvalidProperty) error of the first bad one.
//
// Refused, before anything is recorded or started: a key the method does not take ("unknown option
// 'KEY'"), a value of another D-Bus type ("option 'KEY' must be a boolean (b); it is of type 's'"), a
// grace_usec over one hour, a slice that is no slice name, a property that does not parse. What needs
// the bus or the host is checked by the manager object after the parse: whether owner_bus_name is the
// caller's parent's connection, and whether the host can seal a sealed run.
#pragma once

#include "base/result.h"
#include "run/contain.h"

#include <sdbus-c++/Types.h>

#include <map>
#include <optional>
#include <span>
#include <string>

namespace nerve {

using BusOptions = std::map<std::string, sdbus::Variant>;

// The methods that take options, as bits of RunOption::methods.
enum class RunMethod : unsigned { Contain = 1, Launch = 2 };

// What a method's options say.
struct RunOptions {
  // Launch's whole request but the command, or the options' part of a Contain's (grace, pid and owner
  // are the manager's): grace_usec, keep, reap_on_exit and the controls.
  ContainRequest contain;
  bool sealed = false;
  std::optional<std::string> owner_bus_name;  // Contain's owner_bus_name, unchecked
};

struct RunOption {
  const char* name;
  const char* type;  // the D-Bus signature the value must have
  const char* what;  // the type in words, for errors
  unsigned methods;  // RunMethod bits
  // Stores 'value' (of 'type') into the options; an error when the value itself is refused.
  Result<void> (*store)(const sdbus::Variant& value, RunOptions& into);
};

// A grace (of Contain, Launch, Reap, Cancel, ReapAttempt) up to one hour; InvalidArgument quoting it.
Result<void> check_grace(std::uint64_t grace_usec);

// Every option of Contain and Launch.
std::span<const RunOption> run_option_table();

// 'options' of 'method' applied over 'defaults' (nerved's slice, properties and grace; a run's own
// properties come after nerved's, so that its own win for the same key). Launch's reap_on_exit is true
// unless it says otherwise, and its grace_usec 0 is the default grace.
Result<RunOptions> parse_run_options(RunMethod method, const BusOptions& options, const ContainRequest& defaults);

}  // namespace nerve
