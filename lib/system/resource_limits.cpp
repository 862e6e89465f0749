// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/resource_limits.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace nerve {

std::string raise_fd_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) < 0) return std::string("cannot read RLIMIT_NOFILE: ") + std::strerror(errno);
  if (r.rlim_cur == r.rlim_max) return "fd limit " + std::to_string(r.rlim_cur);
  rlim_t was = r.rlim_cur;
  r.rlim_cur = r.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &r) < 0)
    return "fd limit " + std::to_string(was) + " (cannot raise it to " + std::to_string(r.rlim_max) +
           ": " + std::strerror(errno) + ")";
  return "fd limit raised from " + std::to_string(was) + " to " + std::to_string(r.rlim_max);
}

}  // namespace nerve
