// SPDX-License-Identifier: LGPL-2.1-or-later
// A run ends when its processes do: the run/ leaf of every live run (record.h, has_leaf) is watched
// (its cgroup.events, through Cgroups), and when it is empty the run gets its final reap with cause
// exited, as reap_on_exit does for a Launch'd command: the reap reads run/ (which the holder keeps)
// and then ends the scope (reaper.h). The watch is armed when a run starts running and again by the
// reconciliation after a restart of nerved, which so finds a run that ended while nerved was down.
// A run without a leaf (a record of before leaves: nerved starts none without one) is not watched.
#pragma once

#include "system/cgroups.h"
#include "record/record.h"

#include <functional>
#include <map>
#include <string>

namespace nerve {

class ExitWatch {
 public:
  // 'ended' asks for the final reap of an attempt of a run (through its queue).
  ExitWatch(Cgroups& cgroups, std::function<void(const std::string& run, unsigned attempt)> ended)
      : cgroups_(cgroups), ended_(std::move(ended)) {}
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;
  ~ExitWatch();

  // Watches run/ of 'record' if it is running and has a leaf (any earlier watch of the run goes);
  // an empty run/ calls 'ended' at once.
  void watch(const Record& record);
  void unwatch(const std::string& run);
  std::size_t watched() const { return watches_.size(); }

 private:
  void check(const std::string& run);

  struct Watch {
    int handle = -1;
    unsigned attempt = 0;
    std::string leaf;
  };
  Cgroups& cgroups_;
  std::function<void(const std::string& run, unsigned attempt)> ended_;
  std::map<std::string, Watch> watches_;
};

}  // namespace nerve
