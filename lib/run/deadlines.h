// SPDX-License-Identifier: LGPL-2.1-or-later
// Timeouts: a run whose record has a timeout (Record::timeout_usec) is ended at created_at + timeout
// by a final reap with cause timeout (final_reap.h), with the run's grace, whole tree included. The
// timer is armed when an attempt is running, and again from the record when nerved starts (a
// deadline already passed fires at once; one past the end of the clock, never: record.h's deadline
// saturates; a timer is at most a day long and re-armed until the deadline), so a deadline holds
// across restarts of nerved. `--timeout` and the property RuntimeMaxSec= are this one timeout
// (run_controls.h); systemd is not given RuntimeMaxUSec, so the timeout's end is always a reap of
// nerve's (its grace, its receipt's usage). While nerved is down, a deadline that passes waits for its
// next start (systemd's nerved.service restarts it on failure; a bus call starts it).
#pragma once

#include "system/event_loop.h"
#include "record/record.h"

#include <functional>
#include <map>
#include <string>

namespace nerve {

class Deadlines {
 public:
  // 'expire' asks for the timeout reap of a run (through its queue).
  Deadlines(Timers& timers, std::function<void(const std::string& run)> expire)
      : timers_(timers), expire_(std::move(expire)) {}

  // (Re)arms the run's timer from 'record'; without a timeout, only disarms it.
  void arm(const Record& record);
  void disarm(const std::string& run);

 private:
  // A timer of at most a day towards DUE; at DUE, the expiry.
  void arm_until(const std::string& run, std::chrono::system_clock::time_point due);

  Timers& timers_;
  std::function<void(const std::string& run)> expire_;
  std::map<std::string, TimerId> armed_;
};

}  // namespace nerve
