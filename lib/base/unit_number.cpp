// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/unit_number.h"

#include <algorithm>

namespace nerve {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }
// Letters of a unit name: ASCII letters and the bytes of UTF-8 sequences ("μs").
bool is_unit_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u >= 0x80;
}

void skip_spaces(std::string_view& text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
}

std::string_view take_while(std::string_view& text, bool (*pred)(char)) {
  std::size_t n = 0;
  while (n < text.size() && pred(text[n])) ++n;
  auto taken = text.substr(0, n);
  text.remove_prefix(n);
  return taken;
}

// WHOLE.FRACTION units of FACTOR each, or TooLarge.
UnitNumberScan scale(std::string_view whole, std::string_view fraction, std::uint64_t factor, std::uint64_t& out) {
  std::uint64_t n = 0;
  for (char c : whole)
    if (__builtin_mul_overflow(n, 10u, &n) || __builtin_add_overflow(n, static_cast<unsigned>(c - '0'), &n))
      return UnitNumberScan::TooLarge;
  if (__builtin_mul_overflow(n, factor, &out)) return UnitNumberScan::TooLarge;
  // FACTOR * 0.FRACTION in 128 bits, truncated; digits past the 19th are dropped (they are worth less
  // than a unit of the result for every factor below 10^19, and keep the product within 128 bits).
  fraction = fraction.substr(0, 19);
  unsigned __int128 digits = 0, scale10 = 1;
  for (char c : fraction) {
    digits = digits * 10 + static_cast<unsigned>(c - '0');
    scale10 *= 10;
  }
  auto part = static_cast<unsigned __int128>(factor) * digits / scale10;  // < factor, so fits in 64 bits
  if (__builtin_add_overflow(out, static_cast<std::uint64_t>(part), &out)) return UnitNumberScan::TooLarge;
  return UnitNumberScan::Ok;
}

}  // namespace

UnitNumberScan scan_unit_number(std::string_view text, std::span<const UnitFactor> units, std::uint64_t& total) {
  total = 0;
  skip_spaces(text);
  if (text.empty()) return UnitNumberScan::Malformed;
  while (!text.empty()) {
    if (text.front() == '-') return UnitNumberScan::Negative;
    std::string_view whole = take_while(text, is_digit), fraction;
    if (!text.empty() && text.front() == '.') {
      text.remove_prefix(1);
      fraction = take_while(text, is_digit);
      if (fraction.empty()) return UnitNumberScan::Malformed;  // "1.", "3.s": as systemd's parse_time
    } else if (whole.empty()) {
      return UnitNumberScan::Malformed;
    }
    if (!text.empty() && text.front() == '.') return UnitNumberScan::Malformed;  // "1.2.3G"
    skip_spaces(text);
    std::string_view name = take_while(text, is_unit_char);
    auto unit = std::find_if(units.begin(), units.end(), [&](const UnitFactor& u) { return u.name == name; });
    if (unit == units.end()) return UnitNumberScan::Malformed;
    std::uint64_t part = 0;
    if (auto s = scale(whole, fraction, unit->factor, part); s != UnitNumberScan::Ok) return s;
    if (__builtin_add_overflow(total, part, &total)) return UnitNumberScan::TooLarge;
    skip_spaces(text);
  }
  return UnitNumberScan::Ok;
}

}  // namespace nerve
