// SPDX-License-Identifier: LGPL-2.1-or-later
// One way to log what happens to a run: "run R: <what> [attempt N, unit U, invocation I]". Every run
// event carries the run, its attempt, its unit and its invocation id (or "-" while it has none), so
// a line can be matched to `systemctl --user status` and to receipts. A failure is logged once, by
// the code that handles it (not by every layer it passes through).
#pragma once

#include "system/journal.h"
#include "record/record.h"

#include <spdlog/spdlog.h>

#include <string_view>

namespace nerve {

// In the journal (journal.h) the line carries the run's fields, and MESSAGE_ID when given.
inline void log_run(spdlog::level::level_enum level, const Record& r, std::string_view what,
                    const char* message_id = nullptr) {
  RunFields fields{r.run, r.attempt, r.unit, r.invocation_id, message_id};
  ScopedRunFields scope(fields);
  spdlog::log(level, "run {}: {} [attempt {}, unit {}, invocation {}]", r.run, what, r.attempt,
              r.unit.empty() ? "-" : r.unit, r.invocation_id.empty() ? "-" : r.invocation_id);
}

}  // namespace nerve
