// SPDX-License-Identifier: LGPL-2.1-or-later
// GetRun's document (docs/dbus-api.md, "GetRun") as nerve.h's nerve_status: the record's fields, the
// live state, and the receipt (receipt.h) when there is one.
#pragma once

#include "libnerve/include/nerve.h"

namespace nerve::lib {

// The status whose JSON is TEXT into *RET; org.nerve.libnerve.Error.BadStatus when it does not parse.
int status_from_text(const char* text, nerve_status** ret, nerve_error* error);

}  // namespace nerve::lib
