// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/errors.h"

#include <cstdio>

namespace nerve {

std::string quote_value(std::string_view value) {
  std::string out = "'";
  for (unsigned char c : value) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "'";
  return out;
}

}  // namespace nerve
