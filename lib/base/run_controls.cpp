// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/run_controls.h"

#include "base/errors.h"
#include "base/run_id.h"

#include <algorithm>

namespace nerve {

Result<void> check_slice_name(std::string_view slice) {
  auto bad = [&](const char* why) {
    return Error{error::InvalidArgument, "slice " + quote_value(slice) + " " + why};
  };
  constexpr std::string_view kSuffix = ".slice";
  if (slice.size() <= kSuffix.size() || slice.substr(slice.size() - kSuffix.size()) != kSuffix)
    return bad("is not a slice name (NAME.slice)");
  if (!is_valid_unit_name(slice)) return bad("has characters a unit name cannot have");
  auto prefix = slice.substr(0, slice.size() - kSuffix.size());
  if (prefix == "-") return {};
  if (prefix.front() == '-' || prefix.back() == '-' || prefix.find("--") != std::string_view::npos)
    return bad("has a dash at the start, the end, or twice (dashes separate the parts of a slice path)");
  return {};
}

Result<RunControls> parse_property_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  RunControls c;
  for (const auto& [key, value] : pairs) c.properties.push_back(key + "=" + value);
  auto parsed = parse_unit_properties(c.properties);
  if (!parsed) return parsed.error();
  c.unit_properties = std::move(*parsed);
  return c;
}

Result<void> take_runtime_max(RunControls& c) {
  auto it = std::find_if(c.unit_properties.begin(), c.unit_properties.end(),
                         [](const UnitProperty& p) { return p.name == "RuntimeMaxUSec"; });
  if (it == c.unit_properties.end()) return {};
  Duration given = Duration::from_usec(std::get<std::uint64_t>(it->value));
  if (!given.is_limit()) given = Duration{};  // infinity: no timeout
  if (c.timeout.is_limit() && given != c.timeout) {
    std::string assignment = "RuntimeMaxSec";
    for (const auto& a : c.properties)
      if (a.rfind("RuntimeMaxSec=", 0) == 0) assignment = a;  // the last one counts
    return Error{error::InvalidProperty,
                 "property " + quote_value(assignment) + " and timeout_usec " +
                     quote_value(std::to_string(c.timeout.usec())) +
                     " (--timeout) are one control, the run's timeout, with different values; give one of them, or the same value"};
  }
  c.timeout = given;
  c.unit_properties.erase(it);
  return {};
}

std::string refused_assignment(const RunControls& controls, std::string_view message) {
  std::string named, all;
  for (const auto& a : controls.properties) {
    all += (all.empty() ? "" : " ") + a;
    std::string key = a.substr(0, a.find('='));
    auto p = parse_unit_property(a);
    if (message.find(key) != std::string_view::npos || (p && message.find(p->name) != std::string_view::npos))
      named = a;
  }
  return named.empty() ? all : named;
}

}  // namespace nerve
