// SPDX-License-Identifier: LGPL-2.1-or-later
// How libnerve fails (nerve.h, "Return values"): a nerve_error filled with a D-Bus error name and a
// message, and a negative errno returned. Its own steps' errors are named org.nerve.libnerve.Error.*.
#pragma once

#include "libnerve/include/nerve.h"

#include <string>

namespace nerve::lib {

inline constexpr const char* kErrorPrefix = "org.nerve.libnerve.Error.";

// Fills *ERROR (when not NULL and not set yet) with NAME and MESSAGE; returns -ERRNO_VALUE (-EIO when
// ERRNO_VALUE is not positive).
int set_error(nerve_error* error, const std::string& name, const std::string& message, int errno_value);
// set_error with the name org.nerve.libnerve.Error.WHAT.
int own_error(nerve_error* error, const char* what, const std::string& message, int errno_value);

// A copy of S with malloc (free(3) frees it); nullptr only when out of memory.
char* dup(const std::string& s);

}  // namespace nerve::lib
