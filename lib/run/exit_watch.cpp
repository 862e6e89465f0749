// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/exit_watch.h"

#include "run/run_log.h"

namespace nerve {

ExitWatch::~ExitWatch() {
  for (auto& [run, w] : watches_) cgroups_.unwatch(w.handle);
}

void ExitWatch::watch(const Record& record) {
  unwatch(record.run);
  if (record.state != RunState::Running || !has_leaf(record)) return;
  std::string run = record.run;
  // Armed before the first read, so that no change falls between the two.
  int handle = cgroups_.watch(record.leaf, [this, run] { check(run); });
  watches_[run] = Watch{handle, record.attempt, record.leaf};
  check(run);
}

void ExitWatch::unwatch(const std::string& run) {
  auto it = watches_.find(run);
  if (it == watches_.end()) return;
  cgroups_.unwatch(it->second.handle);
  watches_.erase(it);
}

void ExitWatch::check(const std::string& run) {
  auto it = watches_.find(run);
  if (it == watches_.end()) return;
  // Unreadable is not known to be empty; a leaf that is gone is (a folder goes only when empty).
  auto populated = cgroups_.populated(it->second.leaf);
  if (!populated || *populated) return;
  unsigned attempt = it->second.attempt;
  unwatch(run);
  ended_(run, attempt);
}

}  // namespace nerve
