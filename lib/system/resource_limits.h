// SPDX-License-Identifier: LGPL-2.1-or-later
// Resource limits nerved sets for itself at start.
//
// Every watched owner holds a pidfd, so nerved needs an fd per live run. The soft RLIMIT_NOFILE is
// raised to the hard limit (systemd/nerved.service sets LimitNOFILE= for the hard one); running out
// anyway is an error for one call or one run, never an exit of nerved.
#pragma once

#include <string>

namespace nerve {

// Raises the soft RLIMIT_NOFILE to the hard limit. Returns a line for the log: what it is now, or
// why it could not be raised (nerved goes on with what it has).
std::string raise_fd_limit();

}  // namespace nerve
