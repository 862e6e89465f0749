// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/deadlines.h"

#include "base/duration.h"
#include "run/run_log.h"

#include <algorithm>

namespace nerve {

namespace {
// The longest single timer a deadline gets: a later deadline is re-armed when it fires, so no timer
// is longer than the event loop's clock and epoll's int of milliseconds hold.
constexpr std::chrono::system_clock::duration kLongestWait = std::chrono::hours(24);
}  // namespace

void Deadlines::arm(const Record& record) {
  disarm(record.run);
  auto due = deadline(record);
  if (!due) return;
  if (*due == std::chrono::system_clock::time_point::max())
    return log_run(spdlog::level::info, record, "timeout past the end of the clock (the year 2262): none");
  auto left = std::max<std::chrono::system_clock::duration>(*due - std::chrono::system_clock::now(), {});
  log_run(spdlog::level::info, record, "timeout in " + format_duration(Duration::from(left).value_or(Duration{})));
  arm_until(record.run, *due);
}

void Deadlines::arm_until(const std::string& run, std::chrono::system_clock::time_point due) {
  auto left = std::clamp<std::chrono::system_clock::duration>(due - std::chrono::system_clock::now(), {}, kLongestWait);
  armed_[run] = timers_.add_timer(std::chrono::duration_cast<Clock::duration>(left), [this, run, due] {
    armed_.erase(run);
    if (std::chrono::system_clock::now() < due) return arm_until(run, due);
    expire_(run);
  });
}

void Deadlines::disarm(const std::string& run) {
  auto it = armed_.find(run);
  if (it == armed_.end()) return;
  timers_.cancel_timer(it->second);
  armed_.erase(it);
}

}  // namespace nerve
