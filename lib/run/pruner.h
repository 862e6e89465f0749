// Records of finished runs do not grow without bound: a reaped run whose receipt is older than
// keep_finished (nerved.conf; default 7 days, 0: forever) is forgotten through Lifecycle::forget, the
// same path as `nervectl forget`. A run with a call in progress, or not reaped, is left alone (forget
// refuses it) and looked at again at the next pass. Passes: once after the startup reconciliation,
// then every keep_finished (at least every second, at most every hour).
#pragma once

#include "system/event_loop.h"
#include "run/lifecycle.h"
#include "record/run_store.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nerve {


class Pruner {
 public:
  Pruner(Timers& timers, const RunStore& store, Lifecycle& lifecycle, std::chrono::microseconds keep);
  ~Pruner();
  Pruner(const Pruner&) = delete;
  Pruner& operator=(const Pruner&) = delete;

  // Prunes now and then periodically; does nothing when keep is 0.
  void start();
  // One pass at wall-clock time 'now'; the runs it forgot.
  std::vector<std::string> prune_once(std::chrono::system_clock::time_point now);

 private:
  // When the run finished (its receipt's reaped_at), if it is reaped.
  std::optional<std::chrono::system_clock::time_point> finished_at(const std::string& run) const;
  void schedule();

  Timers& timers_;
  const RunStore& store_;
  Lifecycle& lifecycle_;
  std::chrono::microseconds keep_;
  std::optional<TimerId> timer_;
};

}  // namespace nerve
