// SPDX-License-Identifier: LGPL-2.1-or-later
// Records of finished runs do not grow without bound: a reaped run whose receipt is older than
// keep_finished (nerved.conf; default 7 days; 0 or infinity: forever) is forgotten through Lifecycle::forget, the
// same path as `nervectl forget`. A run with a call in progress, or not reaped, is left alone (forget
// refuses it) and looked at again at the next pass. Passes: once after the startup reconciliation,
// then every keep_finished (at least every second, at most every hour). A run's age is compared as
// reaped_at + keep_finished, saturated (duration.h), so a keep_finished longer than the clock holds
// (20000w) keeps every run, never none.
#pragma once

#include "base/duration.h"
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
  Pruner(Timers& timers, const RunStore& store, Lifecycle& lifecycle, Duration keep);
  ~Pruner();
  Pruner(const Pruner&) = delete;
  Pruner& operator=(const Pruner&) = delete;

  // Prunes now and then periodically; does nothing when keep is 0 or infinity.
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
  Duration keep_;
  std::optional<TimerId> timer_;
};

}  // namespace nerve
