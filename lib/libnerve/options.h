// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's options (nerve.h: nerve_options) and how Contain and Launch carry them: the a{sv} of
// docs/dbus-api.md ("Options"), each option only when set, so that nerved's default holds otherwise.
#pragma once

#include "libnerve/include/nerve.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sd_bus_message;

struct nerve_options {
  std::uint64_t grace_usec = 0;
  std::uint64_t timeout_usec = 0;
  std::string slice;
  std::vector<std::pair<std::string, std::string>> properties;
  bool keep = false;
  bool sealed = false;
  std::optional<bool> reap_on_exit;
};

namespace nerve::lib {

// The grace of OPTIONS (NULL: 0, nerved's default).
inline std::uint64_t grace_of(const nerve_options* options) { return options ? options->grace_usec : 0; }
inline bool sealed(const nerve_options* options) { return options && options->sealed; }

// Appends the a{sv} of Contain (keep, sealed and the run controls) to M; the return of sd-bus.
int append_contain_options(sd_bus_message* m, const nerve_options* options);
// Appends the a{sv} of Launch (those of Contain, grace_usec and reap_on_exit) to M.
int append_launch_options(sd_bus_message* m, const nerve_options* options);

}  // namespace nerve::lib
