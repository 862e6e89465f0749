// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "run/pruner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace nerve {

Pruner::Pruner(Timers& timers, const RunStore& store, Lifecycle& lifecycle, Duration keep)
    : timers_(timers), store_(store), lifecycle_(lifecycle), keep_(keep) {}

Pruner::~Pruner() {
  if (timer_) timers_.cancel_timer(*timer_);
}

void Pruner::start() {
  if (!keep_.is_limit()) return;
  prune_once(std::chrono::system_clock::now());
  schedule();
}

void Pruner::schedule() {
  Clock::duration every = std::clamp<Clock::duration>(keep_.to<Clock::duration>(), std::chrono::seconds(1), std::chrono::hours(1));
  timer_ = timers_.add_timer(every, [this] {
    timer_.reset();
    prune_once(std::chrono::system_clock::now());
    schedule();
  });
}

std::optional<std::chrono::system_clock::time_point> Pruner::finished_at(const std::string& run) const {
  auto record = store_.load(run);
  if (!record || !*record || (*record)->state != RunState::Reaped) return std::nullopt;
  // The receipt's time when it is in memory; else the reaped record's, written just after the receipt
  // (never earlier), so no receipt is read only to be pruned (run_store.h).
  auto receipt = store_.known_receipt_summary(run);
  if (receipt && receipt->file == ReceiptFile::Present && receipt->reaped_at) return receipt->reaped_at;
  return parse_rfc3339((*record)->updated_at);
}

std::vector<std::string> Pruner::prune_once(std::chrono::system_clock::time_point now) {
  std::vector<std::string> forgotten;
  for (const auto& run : store_.in_memory()) {
    auto finished = finished_at(run);
    if (!finished || now < saturating_add(*finished, keep_)) continue;
    if (auto gone = lifecycle_.forget(run); !gone) {
      spdlog::debug("run {}: not pruned now: {}", run, gone.error().message);
      continue;
    }
    forgotten.push_back(run);
  }
  if (forgotten.size() > 16) RunStore::trim();  // give the memory of many forgotten runs back
  if (!forgotten.empty())
    spdlog::info("pruned {} finished run(s) older than {}", forgotten.size(), format_duration(keep_));
  return forgotten;
}

}  // namespace nerve
