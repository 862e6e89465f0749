// SPDX-License-Identifier: LGPL-2.1-or-later
// How GoogleTest prints nerve's enums in failure messages: by name, not as bytes. Every test file
// that compares them includes this (directly or through doubles.h), so all agree on the printer.
#pragma once

#include "run/reap_decision.h"
#include "record/record.h"

#include <ostream>

namespace nerve {

// Every enum with a string table (base/string_table.h): RunState, Outcome, Cause, OwnerKind, ...
template <StringTabled E>
void PrintTo(const E& value, std::ostream* os) {
  *os << name_of(value);
}
inline void PrintTo(ReapAction a, std::ostream* os) {
  constexpr const char* names[] = {"NoScope", "Retry", "Refuse", "Stop", "KillCgroup"};
  *os << names[static_cast<int>(a)];
}

}  // namespace nerve
