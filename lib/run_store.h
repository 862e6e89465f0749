// The runs folder: one folder per run, holding lifecycle.json and, once reaped, receipt.json.
//
// Everything below the runs folder is opened relative to the runs folder's fd with O_NOFOLLOW, and
// only under names that are valid run ids, so nothing outside it is ever created, read or replaced.
// Folders are 0700 and files 0600; writes are atomic and durable (durable_file.h).
#pragma once

#include "fd.h"
#include "record.h"
#include "result.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

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

  // nullopt when the run has no record. Errors: store_error::Corrupt (the file is there but is not a
  // record of this run) or store_error::Io (it cannot be read).
  Result<std::optional<Record>> load(const std::string& run) const;
  Result<std::optional<Receipt>> load_receipt(const std::string& run) const;
  // Both create the run's folder when needed. Error: store_error::Io.
  Result<void> save(const Record& record) const;
  Result<void> save_receipt(const Receipt& receipt) const;

  // Moves the run's lifecycle.json (and receipt.json) into <runs-dir>/.quarantine/, named by run and
  // time; returns the new path of the record.
  Result<std::string> quarantine(const std::string& run) const;
  // Removes the run's files and folder.
  Result<void> remove(const std::string& run) const;

  // Called with the run's id after every change of its files (save, receipt, quarantine, remove).
  void set_observer(std::function<void(const std::string&)> fn) { observer_ = std::move(fn); }

  // The names of the run folders, sorted. Entries that are not folders named by a valid run id
  // (symlinks included) are left out and described in 'skipped'.
  Result<std::vector<std::string>> runs(std::vector<std::string>* skipped = nullptr) const;

 private:
  Fd open_run(const std::string& run, bool create) const;
  // The content of 'file' in the run's folder; nullopt if the folder or the file does not exist.
  std::optional<std::string> read(const std::string& run, const char* file) const;

  void notify(const std::string& run) const {
    if (observer_) observer_(run);
  }

  std::string path_;
  Fd dir_;
  std::function<void(const std::string&)> observer_;
};

// $XDG_STATE_HOME/nerve/runs, or ~/.local/state/nerve/runs.
std::string default_runs_dir();

}  // namespace nerve
