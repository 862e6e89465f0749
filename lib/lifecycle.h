// The lifecycle of runs: what nerved does for each bus call, without the bus.
//
// Lifecycle checks input, serialises the calls of one run (run_queue.h), decides between a first
// attempt, a relaunch and a refusal, and hands the work to ContainOp (contain.h) and ReapOp
// (reaper.h). It writes receipts and moves records through their states (record.h). Errors reach the
// caller as BusError values with names from errors.h. manager_object.h puts this on the bus.
#pragma once

#include "contain.h"
#include "deps.h"
#include "reaper.h"
#include "run_queue.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

inline constexpr std::uint64_t kDefaultGraceUsec = 10'000'000;

struct RunSummary {
  std::string run;
  std::string state;
  std::string unit;
  std::string outcome;  // "" while there is no receipt
};

class Lifecycle {
 public:
  explicit Lifecycle(Deps deps) : deps_(std::move(deps)) {}

  using ContainDone = ContainOp::Done;
  using ReapDone = std::function<void(std::optional<Receipt>, std::optional<BusError>)>;

  // req.run must be valid (require_valid_run_id) and req.pid set from the caller's credentials.
  void contain(ContainRequest req, ContainDone done);
  // Final reap of 'run'. grace_usec 0: the grace given at launch.
  void reap(const std::string& run, std::uint64_t grace_usec, ReapDone done);

  // status_json and list throw sdbus::Error (named) for bad input.
  std::string status_json(const std::string& run);
  std::vector<RunSummary> list();

  Deps& deps() { return deps_; }

 private:
  // Loads the record, turning corruption into a named error.
  std::optional<Record> load(const std::string& run, std::optional<BusError>* err);
  void contain_locked(ContainRequest req, ContainDone done);
  void reap_locked(const std::string& run, std::uint64_t grace_usec, ReapDone done);

  Deps deps_;
  RunQueue queue_;
};

}  // namespace nerve
