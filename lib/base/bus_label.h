// SPDX-License-Identifier: LGPL-2.1-or-later
// A name as one element of a D-Bus object path, the way systemd's bus_label_escape writes it: every
// byte but A-Z a-z 0-9 becomes '_' and two lowercase hex digits, and with LeadingDigit::Escaped a
// leading digit too (as sd_bus_path_encode does: unit paths and nerve's run object paths,
// docs/dbus-api.md, "Run object paths"; bus_label_escape leaves it plain).
#pragma once

#include <string>
#include <string_view>

namespace nerve {

// What becomes of a digit that starts the name: kept as it is, or escaped like any other byte.
enum class LeadingDigit { Plain, Escaped };

inline std::string bus_path_label(std::string_view name, LeadingDigit leading_digit) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    bool digit = c >= '0' && c <= '9';
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (digit && !(i == 0 && leading_digit == LeadingDigit::Escaped));
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '_';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

}  // namespace nerve
