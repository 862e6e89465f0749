// SPDX-License-Identifier: LGPL-2.1-or-later
// Run properties: the resource limits and the timeout a run's scope is started with.
//
// A property is given as `KEY=VALUE` in the syntax of `systemd-run -p` (sizes with K/M/G/T and %,
// "infinity", times with units: parsed by size.h and duration.h), checked here before anything starts, and turned into the typed
// properties of StartTransientUnit that systemd-run would send for it (some keys become another
// property on the bus: CPUQuota= is CPUQuotaPerSecUSec, MemoryMax=50% is MemoryMaxScale, RuntimeMaxSec=
// is RuntimeMaxUSec). A run's RuntimeMaxSec is its timeout instead, nerve's own deadline, and is not
// sent (take_runtime_max, run_controls.h); a slice's is sent, and systemd refuses it. The record keeps the assignments as given. Supported keys: see
// supported_property_keys(); docs/dbus-api.md lists them with their syntax.
#pragma once

#include "base/errors.h"
#include "base/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nerve {

// A D-Bus value of the types these properties use: t (uint64), u (uint32) or ay (bytes).
using PropertyValue = std::variant<std::uint64_t, std::uint32_t, std::vector<std::uint8_t>>;

struct UnitProperty {
  std::string name;  // the property's name on the bus (org.freedesktop.systemd1.Scope)
  PropertyValue value;
  bool operator==(const UnitProperty&) const = default;
};

// The error of a bad property (errors.h).
inline constexpr const char* kInvalidProperty = error::InvalidProperty;

inline constexpr std::uint64_t kInfinity = UINT64_MAX;  // CGROUP_LIMIT_MAX and USEC_INFINITY

// The keys accepted in KEY=VALUE, in the order the docs list them.
const std::vector<std::string>& supported_property_keys();

// One assignment. Error InvalidProperty naming the key and quoting the value when the key is not
// supported or the value does not parse.
Result<UnitProperty> parse_unit_property(std::string_view assignment);
// All of them; the first bad one is the error. A key given twice: the last one counts, as in systemd.
Result<std::vector<UnitProperty>> parse_unit_properties(const std::vector<std::string>& assignments);

}  // namespace nerve
