// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/size.h"

#include "base/errors.h"
#include "base/unit_number.h"

#include <algorithm>
#include <array>
#include <string>

namespace nerve {

namespace {

// systemd's parse_size suffixes with base 1024, and a bare number of bytes.
constexpr std::array<UnitFactor, 8> kUnits = {{
    {"", 1},
    {"B", 1},
    {"K", 1ull << 10},
    {"M", 1ull << 20},
    {"G", 1ull << 30},
    {"T", 1ull << 40},
    {"P", 1ull << 50},
    {"E", 1ull << 60},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// One share symbol: its UTF-8 text, its decimals at most, and the permyriad of one of it.
struct ShareSymbol {
  std::string_view text;
  std::size_t decimals;
  std::uint64_t permyriad;
};
constexpr std::array<ShareSymbol, 3> kSymbols = {{
    {"%", 2, 100},
    {"\xe2\x80\xb0", 1, 10},  // ‰
    {"\xe2\x80\xb1", 0, 1},   // ‱
}};

Error not_a_share() {
  return Error{error::InvalidArgument, "expected a percentage such as 50% or 12.5% (at most two decimals)"};
}

}  // namespace

Result<Size> parse_size(std::string_view text) {
  if (trim(text) == "infinity") return Size::infinity();
  std::uint64_t bytes = 0;
  switch (scan_unit_number(text, kUnits, bytes)) {
    case UnitNumberScan::Ok: return Size::from_bytes(bytes);
    case UnitNumberScan::Negative: return Error{error::InvalidArgument, "a size cannot be negative"};
    case UnitNumberScan::TooLarge:
      return Error{error::InvalidArgument, "the size is out of range (at most 16E minus one byte; or 'infinity')"};
    case UnitNumberScan::Malformed: break;
  }
  return Error{error::InvalidArgument, "expected a size such as 512M, 4G or 1.5T, or 'infinity'"};
}

Result<std::uint64_t> parse_permyriad(std::string_view text) {
  auto symbol = std::find_if(kSymbols.begin(), kSymbols.end(),
                             [&](const ShareSymbol& s) { return text.size() > s.text.size() && text.ends_with(s.text); });
  if (symbol == kSymbols.end()) return not_a_share();
  text.remove_suffix(symbol->text.size());
  if (text.front() == '-') return Error{error::InvalidArgument, "a percentage cannot be negative"};
  auto dot = text.find('.');
  std::string_view whole = text.substr(0, dot), fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  auto digits = [](std::string_view d) { return d.find_first_not_of("0123456789") == std::string_view::npos; };
  bool bad_fraction = dot != std::string_view::npos && (fraction.empty() || fraction.size() > symbol->decimals);
  if (whole.empty() || bad_fraction || !digits(whole) || !digits(fraction)) return not_a_share();
  std::uint64_t n = 0, permyriad = 0;
  bool too_large = false;
  for (char c : whole)
    too_large = too_large || __builtin_mul_overflow(n, 10u, &n) || __builtin_add_overflow(n, unsigned(c - '0'), &n);
  too_large = too_large || __builtin_mul_overflow(n, symbol->permyriad, &permyriad);
  std::uint64_t unit = symbol->permyriad;  // a fraction's digits are worth a tenth of the one before
  for (char c : fraction) {
    unit /= 10;
    too_large = too_large || __builtin_add_overflow(permyriad, unsigned(c - '0') * unit, &permyriad);
  }
  if (too_large || permyriad > kMaxPermyriad)
    return Error{error::InvalidArgument, "the percentage is out of range (at most 21474836.47%)"};
  return permyriad;
}

}  // namespace nerve
