// SPDX-License-Identifier: LGPL-2.1-or-later
// An unreadable lifecycle.json is moved aside, never deleted and never trusted, and a scope of the run
// that still lives is recovered into a fresh record, so that it still ends when the run is reaped.
//
// Recovery: our scopes are named nerve-<run>-<nonce>.scope and carry "nerve run <run> attempt <N>
// nonce=<nonce>" in their Description (reap_decision.h). The newest live such scope whose cgroup is
// visible gets a new record in state running, with no known owner (kept until reaped; a relaunch
// reaps it first).
#pragma once

#include "run/deps.h"
#include "base/result.h"
#include "record/run_records.h"

#include <functional>
#include <string>

namespace nerve {

class Quarantine {
 public:
  explicit Quarantine(Deps& deps) : deps_(deps), records_(deps.store) {}
  // Moves the run's record (and receipt) into <runs-dir>/.quarantine/, then recovers a live scope.
  // 'done' gets where the record went ("(nowhere: why)" if it could not be moved), once recovery
  // is over, so the caller still holds the run's slot while a new record may be written.
  void move_aside(const std::string& run, std::function<void(std::string moved)> done);
  // The run's record (nullopt: none), for an operation that may change it. An unreadable record is
  // moved aside as above and answered RecordFailed, saying where it went; "try again" then works.
  void load(const std::string& run, Done<std::optional<Record>> done);

 private:
  void recover(const std::string& run, std::function<void()> done);
  void recover_from(const std::string& run, const std::vector<std::string>& units, std::function<void()> done);

  Deps& deps_;
  RunRecords records_;
};

}  // namespace nerve
