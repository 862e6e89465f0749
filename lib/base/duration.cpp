// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/duration.h"

#include "base/errors.h"
#include "base/unit_number.h"

#include <algorithm>
#include <array>

namespace nerve {

namespace {

constexpr std::uint64_t kUsecPerMinute = 60 * kUsecPerSec;
constexpr std::uint64_t kUsecPerHour = 60 * kUsecPerMinute;
constexpr std::uint64_t kUsecPerDay = 24 * kUsecPerHour;
constexpr std::uint64_t kUsecPerWeek = 7 * kUsecPerDay;
constexpr std::uint64_t kUsecPerMonth = 2'629'800 * kUsecPerSec;  // 30.44 days, as systemd
constexpr std::uint64_t kUsecPerYear = 31'557'600 * kUsecPerSec;  // 365.25 days, as systemd

// systemd's time units (time-util.c); the bare number's unit is set per call.
constexpr std::array<UnitFactor, 29> kUnits = {{
    {"us", 1},
    {"usec", 1},
    {"\xce\xbcs", 1},  // μs
    {"ms", kUsecPerMsec},
    {"msec", kUsecPerMsec},
    {"s", kUsecPerSec},
    {"sec", kUsecPerSec},
    {"second", kUsecPerSec},
    {"seconds", kUsecPerSec},
    {"m", kUsecPerMinute},
    {"min", kUsecPerMinute},
    {"minute", kUsecPerMinute},
    {"minutes", kUsecPerMinute},
    {"h", kUsecPerHour},
    {"hr", kUsecPerHour},
    {"hour", kUsecPerHour},
    {"hours", kUsecPerHour},
    {"d", kUsecPerDay},
    {"day", kUsecPerDay},
    {"days", kUsecPerDay},
    {"w", kUsecPerWeek},
    {"week", kUsecPerWeek},
    {"weeks", kUsecPerWeek},
    {"M", kUsecPerMonth},
    {"month", kUsecPerMonth},
    {"months", kUsecPerMonth},
    {"y", kUsecPerYear},
    {"year", kUsecPerYear},
    {"years", kUsecPerYear},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<Duration> parse_duration(std::string_view text, std::uint64_t default_unit_usec) {
  if (trim(text) == "infinity") return Duration::infinity();
  std::array<UnitFactor, kUnits.size() + 1> units{};
  std::copy(kUnits.begin(), kUnits.end(), units.begin());
  units.back() = {"", default_unit_usec};
  std::uint64_t usec = 0;
  switch (scan_unit_number(text, units, usec)) {
    case UnitNumberScan::Ok:
      if (usec == Duration::kInfinityUsec) break;
      return Duration::from_usec(usec);
    case UnitNumberScan::Negative:
      return Error{error::InvalidArgument, "a duration cannot be negative"};
    case UnitNumberScan::TooLarge:
      break;
    case UnitNumberScan::Malformed:
      return Error{error::InvalidArgument,
                   "expected a duration such as 90, 500ms, 1min 30s, 2h or 3d, or 'infinity'"};
  }
  return Error{error::InvalidArgument,
               "the duration is out of range (at most " + std::to_string(Duration::kInfinityUsec - 1) +
                   "us, about 584542 years; or 'infinity')"};
}

std::string format_duration(Duration d) {
  if (d.is_infinity()) return "infinity";
  if (d.is_zero()) return "0";
  static constexpr std::array<UnitFactor, 9> kParts = {{
      {"y", kUsecPerYear}, {"month", kUsecPerMonth}, {"w", kUsecPerWeek}, {"d", kUsecPerDay}, {"h", kUsecPerHour},
      {"min", kUsecPerMinute}, {"s", kUsecPerSec}, {"ms", kUsecPerMsec}, {"us", 1},
  }};
  std::string out;
  std::uint64_t left = d.usec();
  for (const auto& [name, factor] : kParts) {
    if (left < factor) continue;
    out += (out.empty() ? "" : " ") + std::to_string(left / factor) + std::string(name);
    left %= factor;
  }
  return out;
}

}  // namespace nerve
