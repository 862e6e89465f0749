// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's files as the lifecycle reads and moves them: loads that answer with named errors, and the
// one record transition (state, updated_at, durable save). The rules for states and write order are
// in record.h and docs/records.md; RunStore (run_store.h) is the file layer below.
#pragma once

#include "record/record.h"
#include "base/result.h"
#include "record/run_store.h"

#include <optional>
#include <string>

namespace nerve {

// Why a record could not be read (the store's error names): Corrupt, the file is there but is not a
// record of this run (quarantine.h moves it aside); Io, it cannot be read now (e.g. out of fds), and
// the next load reads it again.
enum class LoadFailure { Corrupt, Io };

// A load and, when it failed, why.
struct LoadedRecord {
  Result<std::optional<Record>> record;
  std::optional<LoadFailure> failure;  // set exactly when 'record' is an error
};

class RunRecords {
 public:
  explicit RunRecords(RunStore& store) : store_(store) {}
  RunStore& store() const { return store_; }

  // The record of 'run', nullopt when it has none. An unreadable record is RecordFailed, quoting the
  // run and the cause.
  Result<std::optional<Record>> load(const std::string& run) const { return load_telling_why(run).record; }
  // As load, with why it failed.
  LoadedRecord load_telling_why(const std::string& run) const;
  // As load; no record is NoSuchRun.
  Result<Record> load_existing(const std::string& run) const;
  // The run's receipt when it is readable and final, else nullopt (an unreadable one is logged).
  std::optional<Receipt> final_receipt(const std::string& run) const;

  // How the record of state 'to' is written: durably for launching and reaping, lazily otherwise.
  static Sync sync_for(RunState to);

  // Moves 'record' to state 'to': sets the state and updated_at and saves it (sync_for). On failure the
  // record in memory has the new state, the file the old one, and the error (RecordFailed) names the
  // state and the cause; the caller logs it once, where it handles it.
  Result<void> transition(Record& record, RunState to) const;

  // NoSuchRun for 'run': "no run 'r1' (no record under <runs-dir>/r1)".
  Error no_such_run(const std::string& run) const;

 private:
  RunStore& store_;
};

}  // namespace nerve
