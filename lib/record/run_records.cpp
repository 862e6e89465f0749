// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "record/run_records.h"

#include "base/errors.h"

#include <spdlog/spdlog.h>

namespace nerve {

LoadedRecord RunRecords::load_telling_why(const std::string& run) const {
  auto r = store_.load(run);
  if (r) return {std::move(r), std::nullopt};
  if (r.error().name == store_error::Corrupt)
    return {Error{error::RecordFailed, "the record of run " + quote_value(run) + " is unreadable: " + r.error().message},
            LoadFailure::Corrupt};
  return {Error{error::RecordFailed, "the record of run " + quote_value(run) + " under " + store_.run_path(run) +
                                         " cannot be read: " + r.error().message},
          LoadFailure::Io};
}

Result<Record> RunRecords::load_existing(const std::string& run) const {
  auto r = load(run);
  if (!r) return r.error();
  if (!*r) return no_such_run(run);
  return std::move(**r);
}

std::optional<Receipt> RunRecords::final_receipt(const std::string& run) const {
  auto r = store_.load_receipt(run);
  if (!r) {
    spdlog::warn("run {}: receipt unreadable ({}); reaping again", run, r.error().message);
    return std::nullopt;
  }
  if (*r && is_final((*r)->outcome)) return **r;
  return std::nullopt;
}

Sync RunRecords::sync_for(RunState to) {
  // Durable: the intent (before StartTransientUnit) and the fence (before the first signal). The
  // others only record what already happened and can be lost to a crash of the machine alone, which
  // also ends every scope: the next boot closes such a record as another boot's (docs/records.md).
  return to == RunState::Launching || to == RunState::Reaping ? Sync::Durable : Sync::Lazy;
}

Result<void> RunRecords::transition(Record& record, RunState to) const {
  RunState from = record.state;
  record.state = to;
  record.updated_at = now_rfc3339();
  if (auto saved = store_.save(record, sync_for(to)); !saved)
    return Error{error::RecordFailed, "cannot write the " + to_string(to) + " record of run " + quote_value(record.run) +
                                          ": " + saved.error().message};
  spdlog::debug("run {}: attempt {} {} -> {}", record.run, record.attempt, to_string(from), to_string(to));
  return {};
}

Error RunRecords::no_such_run(const std::string& run) const {
  return {error::NoSuchRun, "no run " + quote_value(run) + " (no record under " + store_.run_path(run) + ")"};
}

}  // namespace nerve
