// SPDX-License-Identifier: LGPL-2.1-or-later
// Read-only questions about runs: a run's status (record, receipt and live state), the list of runs,
// whether a run exists. They change nothing, move nothing aside (an unreadable record is only
// reported), and take no run's slot, so they are never delayed by a slow operation on a run. Only
// the status asks systemd (asynchronously, within a short budget: live_lookup.h).
#pragma once

#include "run/deps.h"
#include "system/live_lookup.h"
#include "base/result.h"
#include "record/run_records.h"

#include <string>
#include <vector>

namespace nerve {

struct RunSummary {
  std::string run;
  std::string state;
  std::string unit;
  std::string outcome;  // "" while there is no receipt
};

class RunQueries {
 public:
  explicit RunQueries(Deps& deps) : deps_(deps), records_(deps.store), lookup_(deps.systemd, deps.timers) {}

  // {"record": ..., "receipt": ...|null, "live": {...}} as GetRun documents it.
  void status_json(const std::string& run, Done<std::string> done);
  // Every run folder, with "unreadable" or "empty" for a run whose record cannot be shown.
  Result<std::vector<RunSummary>> list();
  // Ok when the run has a record (NoSuchRun, InvalidRunId or RecordFailed otherwise).
  Result<void> exists(const std::string& run);

 private:
  Deps& deps_;
  RunRecords records_;
  LiveLookup lookup_;
};

}  // namespace nerve
