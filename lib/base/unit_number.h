// SPDX-License-Identifier: LGPL-2.1-or-later
// The lexer that parse_duration (duration.h) and parse_size (size.h) share: a sum of parts
// "<digits>[.<digits>][ ]<unit>", as systemd's parse_time and parse_size read them ("1h 30min",
// "1.5G", "1G 512M", "90"), in checked arithmetic: a part or a sum that does not fit in 64 bits is
// TooLarge, never a wrapped number.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace nerve {

// A unit's name and how many of the result's units one of it is ("ms" = 1000 for microseconds).
// The empty name is the unit of a bare number.
struct UnitFactor {
  std::string_view name;
  std::uint64_t factor;
};

enum class UnitNumberScan { Ok, Malformed, Negative, TooLarge };

// Sums the parts of TEXT (spaces around and between parts are allowed) into TOTAL. A fraction counts
// exactly, truncated to the result's unit ("1.5K" is 1536). Malformed: empty, no digits, a unit not in
// UNITS, a '.' without digits after it; Negative: a part starts with '-'; TooLarge: above UINT64_MAX.
UnitNumberScan scan_unit_number(std::string_view text, std::span<const UnitFactor> units, std::uint64_t& total);

}  // namespace nerve
