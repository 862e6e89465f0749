// SPDX-License-Identifier: LGPL-2.1-or-later
// C strings of nerve.h's interface to and from C++: NULL-terminated arrays (argv, envp, the escaped
// scopes of a receipt).
#pragma once

#include <string>
#include <vector>

namespace nerve::lib {

// The strings of the NULL-terminated array V (none when V is NULL).
inline std::vector<std::string> string_vector(char* const v[]) {
  std::vector<std::string> out;
  for (; v && *v; ++v) out.emplace_back(*v);
  return out;
}

}  // namespace nerve::lib
