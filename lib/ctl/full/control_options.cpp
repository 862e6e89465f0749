// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ctl/full/control_options.h"

#include "ctl/args.h"

namespace nerve::ctl {

std::vector<sdbus::Struct<std::string, std::string>> property_pairs(const std::vector<std::string>& properties) {
  std::vector<sdbus::Struct<std::string, std::string>> pairs;
  for (const auto& p : properties) {
    auto [key, value] = split_property(p);
    pairs.emplace_back(key, value);
  }
  return pairs;
}

void add_control_options(std::map<std::string, sdbus::Variant>& options, const RunControlArgs& controls) {
  if (!controls.properties.empty()) options["properties"] = sdbus::Variant(property_pairs(controls.properties));
  if (controls.timeout_usec) options["timeout_usec"] = sdbus::Variant(controls.timeout_usec);
  if (!controls.slice.empty()) options["slice"] = sdbus::Variant(controls.slice);
}

}  // namespace nerve::ctl
