#include "base/unit_properties.h"

#include "base/errors.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <cmath>
#include <functional>
#include <map>

namespace nerve {

namespace {

Error invalid(std::string_view key, std::string_view value, const std::string& why) {
  return Error{kInvalidProperty,
               "property " + quote_value(key) + " value " + quote_value(value) + ": " + why};
}

// A decimal number with an optional fraction at the front of 'text'; advances 'text' past it.
bool take_number(std::string_view& text, double& out) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0 || text.substr(0, i) == ".") return false;
  std::string digits(text.substr(0, i));
  char* end = nullptr;
  out = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return false;
  text.remove_prefix(i);
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Sums "<number><unit>" parts separated by optional spaces, with 'units' giving each unit's factor
// ("" is the unit of a bare number).
std::optional<double> sum_of_parts(std::string_view text, const std::map<std::string_view, double>& units) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  double total = 0;
  while (!text.empty()) {
    double n = 0;
    if (!take_number(text, n)) return std::nullopt;
    std::size_t u = 0;
    while (u < text.size() && std::isalpha(static_cast<unsigned char>(text[u]))) ++u;
    auto it = units.find(text.substr(0, u));
    if (it == units.end()) return std::nullopt;
    total += n * it->second;
    text = trim(text.substr(u));
  }
  return total;
}

// "N%" (up to two decimals) as permyriad (1/10000); nullopt when 'text' is not a percentage.
std::optional<std::uint64_t> permyriad(std::string_view text) {
  if (text.empty() || text.back() != '%') return std::nullopt;
  text.remove_suffix(1);
  double n = 0;
  if (!take_number(text, n) || !text.empty()) return std::nullopt;
  return static_cast<std::uint64_t>(std::llround(n * 100));
}

std::uint32_t scale_from_permyriad(std::uint64_t p) {
  return static_cast<std::uint32_t>(p * UINT32_MAX / 10000);
}

using Parser = std::function<Result<UnitProperty>(std::string_view key, std::string_view value)>;

// MemoryMax and friends, TasksMax: "infinity", a percentage (the ...Scale property), or a number.
Parser limit(bool bytes) {
  return [bytes](std::string_view key, std::string_view value) -> Result<UnitProperty> {
    std::string name(key);
    if (value == "infinity") return UnitProperty{name, kInfinity};
    if (auto p = permyriad(value)) {
      if (*p > 10000) return invalid(key, value, "a percentage must be 0% to 100%");
      return UnitProperty{name + "Scale", scale_from_permyriad(*p)};
    }
    if (bytes) {
      auto size = parse_size_bytes(value);
      if (!size) return invalid(key, value, size.error().message);
      return UnitProperty{name, *size};
    }
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty())
      return invalid(key, value, "expected a number of tasks, a percentage, or 'infinity'");
    return UnitProperty{name, n};
  };
}

Result<UnitProperty> cpu_quota(std::string_view key, std::string_view value) {
  auto p = permyriad(value);
  if (!p) return invalid(key, value, "expected a percentage of one CPU, e.g. '50%' or '200%'");
  if (*p == 0) return invalid(key, value, "a CPU quota must be above 0%");
  return UnitProperty{"CPUQuotaPerSecUSec", *p * 1'000'000 / 10000};
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
  if (trim(rest).empty()) return bad();
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
  auto usec = parse_duration_usec(value);
  if (!usec) return invalid(key, value, usec.error().message);
  if (*usec == 0) return invalid(key, value, "a run time limit must be above 0");
  return UnitProperty{"RuntimeMaxUSec", *usec};
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

Result<std::uint64_t> parse_size_bytes(std::string_view text) {
  static const std::map<std::string_view, double> units = {
      {"", 1.0},          {"B", 1.0},          {"K", 1024.0},         {"M", 1048576.0},
      {"G", 1073741824.0}, {"T", 1099511627776.0}, {"P", 1125899906842624.0}, {"E", 1152921504606846976.0},
  };
  auto total = sum_of_parts(text, units);
  if (!total) return Error{kInvalidProperty, "expected a size such as 512M, 4G or 1.5T, or 'infinity'"};
  if (*total >= 18446744073709551615.0) return Error{kInvalidProperty, "the size is too large"};
  return static_cast<std::uint64_t>(*total);
}

Result<std::uint64_t> parse_duration_usec(std::string_view text) {
  if (trim(text) == "infinity") return kInfinity;
  static const std::map<std::string_view, double> units = {
      {"", 1e6},       {"us", 1},        {"usec", 1},       {"ms", 1e3},       {"msec", 1e3},
      {"s", 1e6},      {"sec", 1e6},     {"second", 1e6},   {"seconds", 1e6},  {"m", 60e6},
      {"min", 60e6},   {"minute", 60e6}, {"minutes", 60e6}, {"h", 3600e6},     {"hr", 3600e6},
      {"hour", 3600e6}, {"hours", 3600e6}, {"d", 86400e6},  {"day", 86400e6},  {"days", 86400e6},
      {"w", 604800e6}, {"week", 604800e6}, {"weeks", 604800e6},
  };
  auto total = sum_of_parts(text, units);
  if (!total) return Error{kInvalidProperty, "expected a duration such as 90, 500ms, 1min 30s or 2h, or 'infinity'"};
  if (*total >= 18446744073709551615.0) return Error{kInvalidProperty, "the duration is too long"};
  return static_cast<std::uint64_t>(std::llround(*total));
}

}  // namespace nerve
