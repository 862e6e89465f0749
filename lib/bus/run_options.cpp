// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bus/run_options.h"

#include "base/conventions.h"
#include "base/errors.h"
#include "base/run_controls.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace nerve {

namespace {
constexpr unsigned kContain = static_cast<unsigned>(RunMethod::Contain);
constexpr unsigned kLaunch = static_cast<unsigned>(RunMethod::Launch);

const char* method_name(unsigned method) { return method == kContain ? "Contain" : "Launch"; }

Result<void> store_grace(const sdbus::Variant& v, RunOptions& o) {
  auto grace = v.get<std::uint64_t>();
  if (auto checked = check_grace(grace); !checked) return checked;
  if (grace) o.contain.grace_usec = grace;  // 0: the default, already there
  return {};
}

Result<void> store_properties(const sdbus::Variant& v, RunOptions& o) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto& p : v.get<std::vector<sdbus::Struct<std::string, std::string>>>()) pairs.emplace_back(p.get<0>(), p.get<1>());
  auto parsed = parse_property_pairs(pairs);
  if (!parsed) return parsed.error();
  RunControls& c = o.contain.controls;
  c.properties.insert(c.properties.end(), parsed->properties.begin(), parsed->properties.end());
  auto all = parse_unit_properties(c.properties);
  if (!all) return all.error();
  c.unit_properties = std::move(*all);
  return {};
}

Result<void> store_slice(const sdbus::Variant& v, RunOptions& o) {
  auto slice = v.get<std::string>();
  if (auto checked = check_slice_name(slice); !checked) return checked.error();
  o.contain.controls.slice = std::move(slice);
  return {};
}

// The table, in the order of the keys (the order the options of a call are looked at).
constexpr RunOption kOptions[] = {
    {"grace_usec", "t", "an unsigned 64-bit integer", kLaunch, &store_grace},
    {"keep", "b", "a boolean", kContain | kLaunch,
     [](const sdbus::Variant& v, RunOptions& o) -> Result<void> { o.contain.keep = v.get<bool>(); return {}; }},
    {"owner_bus_name", "s", "a string", kContain,
     [](const sdbus::Variant& v, RunOptions& o) -> Result<void> { o.owner_bus_name = v.get<std::string>(); return {}; }},
    {"properties", "a(ss)", "an array of (KEY, VALUE) string pairs", kContain | kLaunch, &store_properties},
    {"reap_on_exit", "b", "a boolean", kLaunch,
     [](const sdbus::Variant& v, RunOptions& o) -> Result<void> { o.contain.reap_on_exit = v.get<bool>(); return {}; }},
    {"sealed", "b", "a boolean", kContain | kLaunch,
     [](const sdbus::Variant& v, RunOptions& o) -> Result<void> { o.sealed = v.get<bool>(); return {}; }},
    {"slice", "s", "a string", kContain | kLaunch, &store_slice},
    {"timeout_usec", "t", "an unsigned 64-bit integer", kContain | kLaunch,
     [](const sdbus::Variant& v, RunOptions& o) -> Result<void> {
       o.contain.controls.timeout = Duration::from_usec(v.get<std::uint64_t>());
       return {};
     }},
};

const RunOption* find_option(const std::string& name) {
  auto it = std::find_if(std::begin(kOptions), std::end(kOptions), [&](const RunOption& o) { return name == o.name; });
  return it == std::end(kOptions) ? nullptr : &*it;
}

Result<void> apply(unsigned method, const std::string& key, const sdbus::Variant& value, RunOptions& into) {
  const RunOption* option = find_option(key);
  if (!option || !(option->methods & method)) {
    std::string message = "unknown option " + quote_value(key);
    if (option) message += " (an option of " + std::string(method_name(method == kContain ? kLaunch : kContain)) + " only)";
    return Error{error::InvalidArgument, message};
  }
  std::string type = value.peekValueType();
  if (type != option->type)
    return Error{error::InvalidArgument, "option " + quote_value(key) + " must be " + option->what + " (" + option->type +
                                             "); it is of type " + quote_value(type)};
  return option->store(value, into);
}
}  // namespace

Result<void> check_grace(std::uint64_t grace_usec) {
  if (grace_usec > kMaxGraceUsec)
    return Error{error::InvalidArgument, "grace " + std::to_string(grace_usec) + " us is longer than the limit of one hour"};
  return {};
}

std::span<const RunOption> run_option_table() { return kOptions; }

Result<RunOptions> parse_run_options(RunMethod method, const BusOptions& options, const ContainRequest& defaults) {
  RunOptions out;
  out.contain = defaults;
  if (method == RunMethod::Launch) out.contain.reap_on_exit = true;
  for (const auto& [key, value] : options)
    if (auto applied = apply(static_cast<unsigned>(method), key, value, out); !applied) return applied.error();
  return out;
}

}  // namespace nerve
