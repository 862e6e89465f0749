// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/slice_properties.h"

#include "base/errors.h"

namespace nerve {

namespace {

std::vector<std::uint8_t> trimmed(std::vector<std::uint8_t> mask) {
  while (!mask.empty() && mask.back() == 0) mask.pop_back();
  return mask;
}

bool same(const PropertyValue& sent, const PropertyValue& now) {
  if (auto* a = std::get_if<std::vector<std::uint8_t>>(&sent))
    if (auto* b = std::get_if<std::vector<std::uint8_t>>(&now)) return trimmed(*a) == trimmed(*b);
  return sent == now;
}

// A value as a person reads it: a number, "infinity", or the CPUs of a mask ("0 1 5").
std::string shown(const PropertyValue& v) {
  if (auto* mask = std::get_if<std::vector<std::uint8_t>>(&v)) {
    std::string cpus;
    for (std::size_t i = 0; i < mask->size() * 8; ++i)
      if ((*mask)[i / 8] & (1u << (i % 8))) cpus += (cpus.empty() ? "" : " ") + std::to_string(i);
    return cpus.empty() ? "(none)" : cpus;
  }
  if (auto* t = std::get_if<std::uint64_t>(&v)) return *t == kInfinity ? "infinity" : std::to_string(*t);
  return std::to_string(std::get<std::uint32_t>(v));
}

// The assignment as given ("KEY=VALUE") that became the bus property NAME; the last one counts.
std::string given_as(const RunControls& controls, const std::string& name) {
  std::string given = name;
  for (const auto& a : controls.properties)
    if (auto p = parse_unit_property(a); p && p->name == name) given = a;
  return given;
}

}  // namespace

Result<void> check_applied(const std::string& slice, const RunControls& controls,
                           const std::map<std::string, PropertyValue>& read) {
  for (const auto& p : controls.unit_properties) {
    if (p.name.ends_with("Scale")) continue;
    auto now = read.find(p.name);
    std::string has = now == read.end() ? "no such property" : quote_value(shown(now->second));
    if (now != read.end() && same(p.value, now->second)) continue;
    return Error{error::InvalidProperty, "systemd did not apply " + quote_value(given_as(controls, p.name)) +
                                             " to slice " + quote_value(slice) + ": its " + p.name + " is " + has +
                                             " (sent " + quote_value(shown(p.value)) + ")"};
  }
  return {};
}

void set_slice_properties(Systemd& systemd, const std::string& slice, const RunControls& controls, Done<void> done) {
  systemd.set_unit_properties(slice, controls.unit_properties, [&systemd, slice, controls, done](Result<void> set) {
    if (!set)
      return done(Error{error::InvalidProperty, "systemd refused the properties of slice " + quote_value(slice) + " (" +
                                                    quote_value(refused_assignment(controls, set.error().message)) +
                                                    "): " + set.error().message});
    systemd.read_properties(slice, kSliceInterface,
                            [slice, controls, done](Result<std::map<std::string, PropertyValue>> read) {
                              if (!read)
                                return done(Error{error::InvalidProperty,
                                                  "the properties of slice " + quote_value(slice) +
                                                      " cannot be read back from systemd: " + read.error().message});
                              done(check_applied(slice, controls, *read));
                            });
  });
}

}  // namespace nerve
