// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/live_lookup.h"

#include <memory>

namespace nerve {

namespace {
long long ms(Clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }
}  // namespace

void LiveLookup::ask(const std::string& unit, Done<UnitState> done) {
  if (late_) {
    if (in_flight_ == 0) send(unit, nullptr);  // the probe that notices the manager is back
    return done(late_error());
  }
  auto answer = std::make_shared<ReplyOnce<UnitState>>(std::move(done));
  TimerId timer = timers_.add_timer(budget_, [this, answer] {
    if (!late_) late_since_ = timers_.now() - budget_;
    late_ = true;
    (*answer)(Error{systemd_error::Late, "systemd did not answer within " + std::to_string(budget_.count()) + " ms"});
  });
  send(unit, [this, answer, timer](Result<UnitState> r) {
    if (!answer->pending()) return;
    timers_.cancel_timer(timer);
    (*answer)(std::move(r));
  });
}

void LiveLookup::send(const std::string& unit, Done<UnitState> then) {
  ++in_flight_;
  systemd_.lookup(unit, [this, then = std::move(then)](Result<UnitState> r) {
    --in_flight_;
    if (r || is_no_such_unit(r.error())) late_ = false;
    if (then) then(std::move(r));
  });
}

Error LiveLookup::late_error() const {
  return {systemd_error::Late, "systemd is late: no lookup answered for " + std::to_string(ms(timers_.now() - late_since_)) +
                                   " ms (" + std::to_string(in_flight_) + " in flight)"};
}

}  // namespace nerve
