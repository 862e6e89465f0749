// SPDX-License-Identifier: LGPL-2.1-or-later
// A no-op cgroup migration of nerved itself, started when a Contain or Launch call arrives, so that the
// kernel's RCU grace period of the run's own migration overlaps nerved's work, so a launch waits less.
//
// A write to cgroup.procs takes the kernel's cgroup threadgroup lock for writing, which first waits
// for an RCU grace period (about 7.5 ms here) unless another migration happened in the last ~16 ms
// (or the cgroup2 mount has favordynmods, not ours to set). A launch's migration is the user
// manager's move of the run's first process into its new scope, at the end of StartTransientUnit:
// on a cold machine the call waits for a full grace period there. Writing nerved's own pid to its own
// cgroup's cgroup.procs (a migration that moves nothing) at the arrival of the call starts that grace
// period at once, on a thread of its own (the write blocks for it), while the main thread writes the
// intent record and calls systemd; the manager's write then finds it over or under way.
//
// It can never fail a launch: without its cgroup.procs (not writable, no cgroup2) it does nothing,
// and a failed write is logged at debug level and ignored. The thread starts with the first prime()
// and sleeps between calls (no wake-ups while idle).
#pragma once

#include "base/fd.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace nerve {

class MigrationPrimer {
 public:
  // PROCS: nerved's own cgroup.procs open for writing (see open_own_procs); empty: prime() does nothing.
  explicit MigrationPrimer(Fd procs);
  ~MigrationPrimer();
  MigrationPrimer(const MigrationPrimer&) = delete;
  MigrationPrimer& operator=(const MigrationPrimer&) = delete;

  // Asks the thread for one no-op migration now; returns at once. One already pending or under way
  // covers this call: its grace period is running, and a migration soon after it does not wait again.
  void prime();
  // How many no-op migrations were written (for tests).
  unsigned done() const;

  // cgroup.procs of the calling process's own cgroup under ROOT (the cgroup2 mount), open for
  // writing; empty when it cannot be (logged at debug level).
  static Fd open_own_procs(const std::string& root);
  // false when NERVE_MIGRATION_PRIMER=0: the benchmark's switch, to measure without it.
  static bool enabled();

 private:
  void run();

  Fd procs_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool pending_ = false;
  bool writing_ = false;  // the thread is in its write (waiting for the grace period)
  bool stop_ = false;
  unsigned done_ = 0;
  int last_error_ = 0;  // errno of the last failed write, not yet logged
  std::thread thread_;
};

}  // namespace nerve
