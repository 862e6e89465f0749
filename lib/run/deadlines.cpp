#include "run/deadlines.h"

#include "run/run_log.h"

namespace nerve {

void Deadlines::arm(const Record& record) {
  disarm(record.run);
  auto due = deadline(record);
  if (!due) return;
  auto left = std::max<std::chrono::system_clock::duration>(*due - std::chrono::system_clock::now(), {});
  log_run(spdlog::level::info, record,
          "timeout in " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(left).count()) + " ms");
  armed_[record.run] = timers_.add_timer(std::chrono::duration_cast<Clock::duration>(left), [this, run = record.run] {
    armed_.erase(run);
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
