// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/unit_properties.h"

#include "base/duration.h"
#include "base/errors.h"
#include "base/size.h"

#include <charconv>
#include <functional>

namespace nerve {

namespace {

Error invalid(std::string_view key, std::string_view value, const std::string& why) {
  return Error{kInvalidProperty,
               "property " + quote_value(key) + " value " + quote_value(value) + ": " + why};
}

// S without its leading and trailing spaces.
std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// A share of 0% to 100% as systemd's uint32 scale (UINT32_MAX is 100%), rounded to the nearest as
// systemd's UINT32_SCALE_FROM_PERMYRIAD (percent-util.h) rounds it: 50% is 2^31, not UINT32_MAX / 2.
std::uint32_t scale_from_permyriad(std::uint64_t p) {
  return static_cast<std::uint32_t>((p * UINT32_MAX + 5000) / 10000);
}

using Parser = std::function<Result<UnitProperty>(std::string_view key, std::string_view value)>;

// MemoryMax and friends, TasksMax: "infinity", a percentage (the ...Scale property), or a number.
Parser limit(bool bytes) {
  return [bytes](std::string_view key, std::string_view value) -> Result<UnitProperty> {
    std::string name(key);
    if (value == "infinity") return UnitProperty{name, kInfinity};
    if (value.ends_with("%") || value.ends_with("\xe2\x80\xb0") || value.ends_with("\xe2\x80\xb1")) {  // % ‰ ‱
      auto p = parse_permyriad(value);
      if (!p) return invalid(key, value, p.error().message);
      if (*p > 10000) return invalid(key, value, "a percentage must be 0% to 100%");
      return UnitProperty{name + "Scale", scale_from_permyriad(*p)};
    }
    if (bytes) {
      auto size = parse_size(value);
      if (!size) return invalid(key, value, size.error().message);
      return UnitProperty{name, size->bytes()};
    }
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty())
      return invalid(key, value, "expected a number of tasks, a percentage, or 'infinity'");
    return UnitProperty{name, n};
  };
}

// As systemd-run: CPUQuotaPerSecUSec = permyriad * 1 s / 10000, which fits: permyriad <= kMaxPermyriad.
Result<UnitProperty> cpu_quota(std::string_view key, std::string_view value) {
  auto p = parse_permyriad(value);
  if (!p) return invalid(key, value, p.error().message + "; a CPU quota is a percentage of one CPU, e.g. 200%");
  if (*p == 0) return invalid(key, value, "a CPU quota must be above 0%");
  return UnitProperty{"CPUQuotaPerSecUSec", *p * kUsecPerSec / 10000};
}

Result<UnitProperty> weight(std::string_view key, std::string_view value) {
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty() || n < 1 || n > 10000)
    return invalid(key, value, "expected a weight from 1 to 10000");
  return UnitProperty{std::string(key), n};
}

// "0-3,6 8": the bitmask systemd takes for AllowedCPUs (byte i, bit j is CPU 8i+j).
Result<UnitProperty> cpu_set(std::string_view key, std::string_view value) {
  std::vector<std::uint8_t> mask;
  std::string_view rest = value;
  auto bad = [&] { return invalid(key, value, "expected a list of CPU numbers and ranges, e.g. '0-3,6'"); };
  if (trim_spaces(rest).empty()) return bad();
  while (!rest.empty()) {
    std::size_t cut = rest.find_first_of(", ");
    std::string_view item = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
    if (item.empty()) continue;
    unsigned lo = 0, hi = 0;
    auto dash = item.find('-');
    auto a = std::from_chars(item.data(), item.data() + (dash == std::string_view::npos ? item.size() : dash), lo);
    if (a.ec != std::errc() || a.ptr != item.data() + (dash == std::string_view::npos ? item.size() : dash)) return bad();
    hi = lo;
    if (dash != std::string_view::npos) {
      auto b = std::from_chars(item.data() + dash + 1, item.data() + item.size(), hi);
      if (b.ec != std::errc() || b.ptr != item.data() + item.size() || hi < lo) return bad();
    }
    if (hi >= 8192) return invalid(key, value, "CPU numbers must be below 8192");
    if (mask.size() <= hi / 8) mask.resize(hi / 8 + 1);
    for (unsigned c = lo; c <= hi; ++c) mask[c / 8] |= static_cast<std::uint8_t>(1u << (c % 8));
  }
  return UnitProperty{std::string(key), mask};
}

Result<UnitProperty> runtime_max(std::string_view key, std::string_view value) {
  auto d = parse_duration(value);
  if (!d) return invalid(key, value, d.error().message);
  if (d->is_zero()) return invalid(key, value, "a run time limit must be above 0");
  return UnitProperty{"RuntimeMaxUSec", d->usec()};
}

const std::vector<std::pair<std::string, Parser>>& table() {
  static const std::vector<std::pair<std::string, Parser>> t = {
      {"MemoryMax", limit(true)},   {"MemoryHigh", limit(true)}, {"MemorySwapMax", limit(true)},
      {"CPUQuota", cpu_quota},      {"CPUWeight", weight},       {"TasksMax", limit(false)},
      {"IOWeight", weight},         {"AllowedCPUs", cpu_set},    {"RuntimeMaxSec", runtime_max},
  };
  return t;
}

}  // namespace

const std::vector<std::string>& supported_property_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [key, parser] : table()) k.push_back(key);
    return k;
  }();
  return keys;
}

Result<UnitProperty> parse_unit_property(std::string_view assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Error{kInvalidProperty, "property " + quote_value(assignment) + " is not KEY=VALUE"};
  std::string_view key = assignment.substr(0, eq);
  std::string_view value = assignment.substr(eq + 1);
  for (const auto& [name, parser] : table())
    if (name == key) return parser(key, value);
  std::string known;
  for (const auto& k : supported_property_keys()) known += (known.empty() ? "" : ", ") + k;
  return Error{kInvalidProperty, "property " + quote_value(key) + " is not supported (value " +
                                           quote_value(value) + "); supported: " + known};
}

Result<std::vector<UnitProperty>> parse_unit_properties(const std::vector<std::string>& assignments) {
  std::vector<UnitProperty> out;
  for (const auto& a : assignments) {
    auto p = parse_unit_property(a);
    if (!p) return p.error();
    std::erase_if(out, [&](const UnitProperty& q) { return q.name == p->name; });
    out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace nerve
