// SPDX-License-Identifier: LGPL-2.1-or-later
// A run ends with its owner (owners.h): once a run is running, its owner is watched, and when the
// owner goes the run gets a final reap. A run launched with --keep, or whose owner is unknown, is
// not watched: only an explicit reap ends it.
#pragma once

#include "system/owners.h"
#include "record/record.h"

#include <functional>
#include <string>

namespace nerve {

class OwnerReaps {
 public:
  // 'reap_run' asks for the final reap of an attempt of a run (through its queue).
  OwnerReaps(OwnerWatch& owners, std::function<void(const std::string& run, unsigned attempt)> reap_run)
      : owners_(owners), reap_run_(std::move(reap_run)) {}

  // Whether the run's end is up to its owner: not kept, and the owner known.
  static bool owned(const Record& record) { return !record.keep && record.owner.kind != OwnerKind::None; }
  // Watches the owner of 'record' if it is running and owned.
  void watch(const Record& record);
  void unwatch(const std::string& run) { owners_.unwatch(run); }

 private:
  OwnerWatch& owners_;
  std::function<void(const std::string& run, unsigned attempt)> reap_run_;
};

}  // namespace nerve
