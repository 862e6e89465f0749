// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's controls as the `properties` (a(ss)) and `slice` options of Contain and Launch give them
// (base/run_controls.h). Each line of the input is one pair, KEY and VALUE cut at the first '='.
// The pairs parse or are InvalidProperty, and keep every assignment as given; a refused assignment
// is one of them; every line is also checked as a slice name, which passes or is InvalidArgument.
//
// These are what the option table's `properties` and `slice` options call; the table's whole parse
// of the sdbus::Variant dictionary (bus/run_options.h) is the target run_options.
#include "base/errors.h"
#include "base/run_controls.h"
#include "fuzz_check.h"

using namespace nerve;
using nerve::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = fuzz::text_of(data, size);
  auto lines = fuzz::lines_of(text);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& line : lines) {
    auto eq = line.find('=');
    pairs.emplace_back(line.substr(0, eq), eq == std::string::npos ? "" : line.substr(eq + 1));
    auto slice = check_slice_name(line);
    if (!slice) require(slice.error().name == std::string(error::InvalidArgument), "a bad slice is InvalidArgument", line);
  }
  auto controls = parse_property_pairs(pairs);
  if (!controls) {
    require(controls.error().name == kInvalidProperty, "bad pairs are InvalidProperty", text);
    return 0;
  }
  require(controls->properties.size() == pairs.size(), "every pair is kept as given", text);
  std::string refused = refused_assignment(*controls, lines.empty() ? "" : lines.back());
  (void)refused;
  return 0;
}
