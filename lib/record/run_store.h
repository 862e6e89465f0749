// SPDX-License-Identifier: LGPL-2.1-or-later
// The runs folder: one folder per run, holding lifecycle.json and, once reaped, receipt.json (and a
// receipt.attempt-<N>.json for each earlier attempt that a relaunch ended).
//
// Everything below the runs folder is opened relative to the runs folder's fd with O_NOFOLLOW, and
// only under names that are valid run ids, so nothing outside it is ever created, read or replaced.
// Folders are 0700 and files 0600; writes are atomic, and durable unless Sync::Lazy (durable_file.h;
// which writes are lazy and why: docs/records.md, "Write order").
//
// In memory: every record the store read or wrote is kept, packed (record_pack.h), and
// served from memory from then on, so queries, run objects and list never read a file again. The
// memory is the disk as nerved last read or wrote it: a run not in memory (a folder made behind
// nerved's back) is read from the disk when asked for, and drop_memory() forgets everything (the
// next reads go to the disk: `nervectl reconcile`). Of a receipt only a summary is kept (outcome,
// cause, time), read once when first asked for.
#pragma once

#include "base/durable_file.h"
#include "base/fd.h"
#include "record/record.h"
#include "record/record_pack.h"
#include "base/result.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

// A run's receipt.json: not there, there but unreadable, or there and read.
enum class ReceiptFile : std::uint8_t { Absent, Unreadable, Present };

// What list, the run objects and the pruner need of a run's receipt.
struct ReceiptSummary {
  ReceiptFile file = ReceiptFile::Absent;
  // The receipt's, when the file is Present.
  Outcome outcome = Outcome::PendingRetry;
  std::optional<Cause> cause;
  std::optional<std::chrono::system_clock::time_point> reaped_at;
};

// One change of a run's files, as the observer is told of it (after it was made).
struct StoreChange {
  std::optional<Record> before;  // nullopt: the run had no record in memory
  std::optional<Record> after;   // nullopt: the run has none any more (quarantined, removed)
  std::optional<Cause> cause_before, cause_after;  // of the final receipt, if any
  const Receipt* receipt = nullptr;  // the receipt this change wrote (save_receipt), else nullptr
};

namespace store_error {
inline constexpr const char* Corrupt = "nerve.Store.Corrupt";
inline constexpr const char* Io = "nerve.Store.Io";
}  // namespace store_error

class RunStore {
 public:
  // Makes (0700) and opens 'runs_dir'. Throws FsError (nerved cannot start without it).
  explicit RunStore(std::string runs_dir);

  const std::string& path() const { return path_; }
  std::string run_path(const std::string& run) const { return path_ + "/" + run; }

  // nullopt when the run has no record. From memory, or read from the disk (and then kept) when the
  // run is not in memory. Errors: store_error::Corrupt (the file is there but is not a record of this
  // run) or store_error::Io (it cannot be read); neither is kept, the next load reads again.
  Result<std::optional<Record>> load(const std::string& run) const;
  // The whole receipt, always from the disk (GetRun, a reap of a reaped run); refreshes the summary.
  Result<std::optional<Receipt>> load_receipt(const std::string& run) const;
  // From memory; the receipt is read once when the summary is not known yet (then kept only while
  // the run's record is in memory).
  ReceiptSummary receipt_summary(const std::string& run) const;
  // The summary if it is known without reading a file.
  std::optional<ReceiptSummary> known_receipt_summary(const std::string& run) const;
  // Both create the run's folder when needed. Error: store_error::Io.
  Result<void> save(const Record& record, Sync sync = Sync::Durable) const;
  Result<void> save_receipt(const Receipt& receipt, Sync sync = Sync::Durable) const;
  // The receipt of an attempt that a relaunch ended (cause relaunched) goes beside the record, as
  // receipt.attempt-<N>.json, durably: receipt.json stays the run's own final receipt. The run's
  // folder must exist. Both error store_error::Io (Corrupt for a file that is not a receipt).
  Result<void> save_superseded_receipt(const Receipt& receipt) const;
  // Those receipts, by attempt (none when the run has no folder).
  Result<std::vector<Receipt>> superseded_receipts(const std::string& run) const;

  // The runs whose record is in memory, sorted; whether 'run' is one.
  std::vector<std::string> in_memory() const;
  bool holds(const std::string& run) const { return memory_.count(run) != 0; }
  // Forgets every record held in memory; the next loads read the disk.
  void drop_memory() const;
  // drop_memory, then reads every run folder's record into memory (the startup pass, `nervectl
  // reconcile`): runs(), with the records of those names that could be read now in memory.
  Result<std::vector<std::string>> reload(std::vector<std::string>* skipped = nullptr) const;
  // Counts every change of what is in memory (memoised views compare it).
  std::uint64_t generation() const { return generation_; }
  // Gives memory freed by many removals back to the system (malloc_trim).
  static void trim();

  // Moves the run's lifecycle.json (and its receipts) into <runs-dir>/.quarantine/, named by run and
  // time; returns the new path of the record.
  Result<std::string> quarantine(const std::string& run) const;
  // Removes the run's files and folder.
  Result<void> remove(const std::string& run) const;

  // Called with the run's id after every change of its files (save, receipt, quarantine, remove).
  using Observer = std::function<void(const std::string&, const StoreChange&)>;
  void set_observer(Observer fn) { observer_ = std::move(fn); }

  // The names of the run folders, sorted. Entries that are not folders named by a valid run id
  // (symlinks included) are left out and described in 'skipped'.
  Result<std::vector<std::string>> runs(std::vector<std::string>* skipped = nullptr) const;

 private:
  OpenedFolder open_run(const std::string& run, IfMissing if_missing) const;
  // The content of 'file' in the run's folder; nullopt if the folder or the file does not exist.
  std::optional<std::string> read(const std::string& run, const char* file) const;

  // A run in memory: its packed record and what is known of its receipt.
  struct Entry {
    std::string packed;
    std::optional<ReceiptFile> receipt;  // nullopt: not looked at yet
    Outcome outcome = Outcome::PendingRetry;
    std::optional<Cause> cause;
    std::int64_t reaped_at_us = 0;
  };

  Result<std::optional<Record>> load_from_disk(const std::string& run) const;
  void remember_receipt(Entry& e, const Result<std::optional<Receipt>>& r) const;
  ReceiptSummary summary_of(const Entry& e) const;
  std::optional<Cause> final_cause(const std::string& run) const;
  // Puts 'after' (or nothing) in memory and tells the observer what changed. Folder::Created: the
  // run's folder was just made by this write, so it has no receipt.
  void changed(const std::string& run, std::optional<Record> after, Folder folder = Folder::Found) const;
  void notify(const std::string& run, const StoreChange& change) const {
    if (observer_) observer_(run, change);
  }

  std::string path_;
  Fd dir_;
  Observer observer_;
  mutable std::map<std::string, Entry> memory_;
  mutable StringPool pool_;
  mutable std::uint64_t generation_ = 0;
  mutable std::size_t removed_since_trim_ = 0;
};

// $XDG_STATE_HOME/nerve/runs, or ~/.local/state/nerve/runs.
std::string default_runs_dir();

}  // namespace nerve
