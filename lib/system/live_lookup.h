// SPDX-License-Identifier: LGPL-2.1-or-later
// GetRun's lookup of a unit's state: systemd's answer if it comes within a short
// budget, else at once the error nerve.Systemd.Late, so no query ever waits on a stalled manager.
//
// The rule, per ask():
// - systemd on time (no lookup has missed its budget since systemd last answered): the lookup is sent
//   and waited on for at most the budget (kLiveStateDeadline). A lookup that misses it makes systemd
//   late; its answer, when it comes, is dropped (the caller had Late).
// - systemd late: nothing is waited on. Late is answered at once. Lookups do not pile up on a stalled
//   manager: while a lookup is in flight none is sent; with none in flight one is sent (a probe whose
//   answer is only used to notice the manager came back).
// - any answer from systemd (a unit's state or NoSuchUnit, even late) makes it on time again. Other
//   errors (a call's own timeout, a broken connection) leave it as it was.
#pragma once

#include "system/event_loop.h"
#include "system/systemd.h"

#include <chrono>
#include <string>

namespace nerve {

namespace systemd_error {
// The unit's state is not known in time: systemd did not answer within the budget, or is late.
inline constexpr const char* Late = "nerve.Systemd.Late";
}  // namespace systemd_error

class LiveLookup {
 public:
  LiveLookup(Systemd& systemd, Timers& timers, std::chrono::milliseconds budget = kLiveStateDeadline)
      : systemd_(systemd), timers_(timers), budget_(budget) {}

  // 'done' runs within the budget (at once while systemd is late) with systemd's answer or Late.
  void ask(const std::string& unit, Done<UnitState> done);

  bool late() const { return late_; }
  int in_flight() const { return in_flight_; }

 private:
  void send(const std::string& unit, Done<UnitState> then);
  Error late_error() const;

  Systemd& systemd_;
  Timers& timers_;
  std::chrono::milliseconds budget_;
  bool late_ = false;
  Clock::time_point late_since_{};  // when the first lookup missed its budget
  int in_flight_ = 0;               // lookups sent and not answered yet
};

}  // namespace nerve
