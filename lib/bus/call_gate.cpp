// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bus/call_gate.h"

#include <spdlog/spdlog.h>

#include <exception>

namespace nerve {

std::shared_ptr<void> CallGate::admit(const std::string& sender) {
  std::size_t& n = in_flight_[sender];
  if (n >= limit_) return nullptr;
  ++n;
  // The ticket gives the slot back when its last copy goes (after the reply, or if the call is dropped).
  // (It points at the gate, never deleted through it: a ticket is only tested for being there.)
  return std::shared_ptr<void>(static_cast<void*>(this), [this, alive = std::weak_ptr<int>(alive_), sender](void*) {
    if (alive.expired()) return;
    auto it = in_flight_.find(sender);
    if (it != in_flight_.end() && --it->second == 0) in_flight_.erase(it);
  });
}

std::size_t CallGate::in_flight(const std::string& sender) const {
  auto it = in_flight_.find(sender);
  return it == in_flight_.end() ? 0 : it->second;
}

void CallGate::queue(const std::string& sender, std::function<void()> work) {
  auto& q = queued_[sender];
  if (q.empty()) turns_.push_back(sender);
  q.push_back(std::move(work));
  schedule();
}

void CallGate::schedule() {
  if (scheduled_ || turns_.empty()) return;
  scheduled_ = true;
  timers_.add_timer(Clock::duration::zero(), [this, alive = std::weak_ptr<int>(alive_)] {
    if (!alive.expired()) serve();
  });
}

void CallGate::serve() {
  scheduled_ = false;
  auto until = timers_.now() + kServeBudget;
  for (std::size_t served = 0; served < kServedPerTurn && !turns_.empty() && (served == 0 || timers_.now() < until);
       ++served) {
    std::string sender = std::move(turns_.front());
    turns_.pop_front();
    auto it = queued_.find(sender);
    auto work = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty())
      queued_.erase(it);
    else
      turns_.push_back(sender);  // its next call waits for every other sender's turn
    try {
      work();
    } catch (const std::exception& e) {
      spdlog::error("a queued call of {} failed: {}; going on", sender, e.what());
    }
  }
  schedule();  // the rest on the next turn: timers, fds and new messages come first
}

}  // namespace nerve
