// SPDX-License-Identifier: LGPL-2.1-or-later
// Run properties, `systemd-run -p` syntax, from a caller's Contain or Launch (base/unit_properties.h):
// each line of the input is one KEY=VALUE. Every assignment parses or is InvalidProperty; all of them
// together parse exactly when each one does; what parses is a bus property with the value systemd
// takes (a CPU quota of P% is P * 10000 us per second, CPU masks below CPU 8192).
#include "base/unit_properties.h"
#include "fuzz_check.h"

#include <charconv>
#include <variant>

using namespace nerve;
using nerve::fuzz::require;

namespace {
// CPUQuota=P% with a whole number P is P * 10000 us of CPU per second (systemd-run's CPUQuotaPerSecUSec),
// or refused; never another figure.
void check_cpu_quota(const std::string& line, const UnitProperty& p) {
  std::string_view v(line);
  if (v.rfind("CPUQuota=", 0) != 0 || v.back() != '%') return;
  v = v.substr(9, v.size() - 10);
  std::uint64_t percent = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), percent);
  if (ec != std::errc() || end != v.data() + v.size() || percent > UINT64_MAX / 10000) return;
  const auto* usec = std::get_if<std::uint64_t>(&p.value);
  require(usec && *usec == percent * 10000, "CPUQuota=P% is P * 10000 us per second", line);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = fuzz::text_of(data, size);
  auto lines = fuzz::lines_of(text);
  bool all_ok = true;
  for (const auto& line : lines) {
    auto p = parse_unit_property(line);
    if (!p) {
      require(p.error().name == kInvalidProperty, "a bad property is InvalidProperty", line);
      all_ok = false;
      continue;
    }
    require(!p->name.empty(), "a property has a bus name", line);
    check_cpu_quota(line, *p);
    if (const auto* mask = std::get_if<std::vector<std::uint8_t>>(&p->value))
      require(mask->size() <= 8192 / 8, "a CPU mask stays below CPU 8192", line);
  }
  auto all = parse_unit_properties(lines);
  require(static_cast<bool>(all) == all_ok, "a list parses exactly when each of its assignments does", text);
  if (all) require(all->size() <= lines.size(), "a list has at most one property per assignment", text);
  return 0;
}
