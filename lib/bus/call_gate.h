// SPDX-License-Identifier: LGPL-2.1-or-later
// One client cannot starve the others. Every method call of org.nerve.Lifecycle1
// holds a ticket of its client (its bus sender) from its arrival until its reply: a client may have
// at most `limit` calls in flight, and a call beyond that is answered at once with
// Error.LimitExceeded. Work that is only queued (the read-only queries) is served in turns, one call
// of each client with queued work per round and a small budget per turn of the event loop, so a
// client with thousands of queued calls delays another client's call by one round only.
#pragma once

#include "system/event_loop.h"

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace nerve {

class CallGate {
 public:
  // Per turn of the loop: at most this many queued calls, for at most this long (at least one call).
  // The rest of the turn reads new messages (event_loop.h), so that a call queued behind a flood on
  // the bus is reached soon.
  static constexpr std::size_t kServedPerTurn = 32;
  static constexpr std::chrono::milliseconds kServeBudget{5};

  CallGate(Timers& timers, std::size_t limit) : timers_(timers), limit_(limit) {}
  CallGate(const CallGate&) = delete;
  CallGate& operator=(const CallGate&) = delete;

  // A ticket of 'sender' (released when its last copy goes), or nullptr when 'sender' already has
  // 'limit' calls in flight.
  std::shared_ptr<void> admit(const std::string& sender);
  // Runs 'work' on a later turn of the loop, in turn with the queued work of other senders.
  void queue(const std::string& sender, std::function<void()> work);
  std::size_t limit() const { return limit_; }
  std::size_t in_flight(const std::string& sender) const;

 private:
  void schedule();
  void serve();

  Timers& timers_;
  std::size_t limit_;
  std::map<std::string, std::size_t> in_flight_;
  std::map<std::string, std::deque<std::function<void()>>> queued_;
  std::deque<std::string> turns_;  // senders with queued work, in the order they are served
  bool scheduled_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace nerve
