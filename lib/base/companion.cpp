// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/companion.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

// The libexec folder relative to the bin folder, from the install directories (lib/base/CMakeLists.txt).
#ifndef NERVE_LIBEXEC_RELATIVE
#define NERVE_LIBEXEC_RELATIVE "../libexec/nerve"
#endif

namespace nerve {

namespace {

std::string executable_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<std::size_t>(n));
  auto slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

}  // namespace

std::string find_companion(const char* name, const char* env_override) {
  if (const char* env = std::getenv(env_override); env && *env) return env;
  std::string dir = executable_dir();
  if (dir.empty()) return "";
  for (const std::string& candidate : {dir + "/" + name, dir + "/" + NERVE_LIBEXEC_RELATIVE + "/" + name})
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  return "";
}

}  // namespace nerve
