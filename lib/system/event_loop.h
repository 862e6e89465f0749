// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's single-threaded event loop.
//
// One epoll set holds the bus connections' fds (with the events and timeout sdbus-c++ asks for, read
// anew every turn: the session bus, and the user manager's private socket while nerved uses it), and
// any fd a component watches: inotify for cgroup.events, pidfds, signalfd.
// Timers are kept in a sorted map and turned into the epoll timeout. Every callback runs on this
// thread, so nerved's state needs no locks. Components reach the loop through the Timers interface,
// which unit tests replace with a manual clock.
#pragma once

#include "base/fd.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace sdbus {
class IConnection;
}

namespace nerve {

using Clock = std::chrono::steady_clock;
using TimerId = std::uint64_t;

// Timers, behind an interface so the logic's tests can drive time by hand.
class Timers {
 public:
  virtual ~Timers() = default;
  virtual Clock::time_point now() const = 0;
  virtual TimerId add_timer(Clock::duration after, std::function<void()> fn) = 0;
  virtual void cancel_timer(TimerId id) = 0;
};

class EventLoop : public Timers {
 public:
  EventLoop();
  ~EventLoop() override;

  // A bus connection whose messages this loop processes (nerved's session bus; its connection to the
  // user manager's private socket while it is open). 'failed' runs when processing it throws (the
  // connection is broken); without one, the failure is logged and the loop goes on.
  void attach_bus(sdbus::IConnection& bus, std::function<void()> failed = {});
  // Not called from inside the processing of that bus's messages.
  void detach_bus(sdbus::IConnection& bus);

  // Calls fn(revents) whenever 'fd' is ready for 'events' (EPOLLIN, ...). One callback per fd.
  void watch_fd(int fd, std::uint32_t events, std::function<void(std::uint32_t)> fn);
  void unwatch_fd(int fd);

  Clock::time_point now() const override { return Clock::now(); }
  TimerId add_timer(Clock::duration after, std::function<void()> fn) override;
  void cancel_timer(TimerId id) override;

  // Runs until stop() is called.
  void run();
  void stop() { stopping_ = true; }

 private:
  static constexpr std::chrono::milliseconds kBusBudget{20};
  void process_bus();
  static void guarded(const char* what, const std::function<void()>& fn);

  struct Watch {
    std::uint64_t generation;
    std::shared_ptr<std::function<void(std::uint32_t)>> fn;
  };

  struct Bus {
    sdbus::IConnection* connection;
    int fd;
    std::uint32_t events;
    std::function<void()> failed;
  };
  int bus_timeout();

  Fd epoll_;
  std::vector<Bus> buses_;
  std::unordered_map<int, Watch> fds_;
  std::uint64_t next_generation_ = 0;  // 0 is a bus
  std::multimap<Clock::time_point, std::pair<TimerId, std::function<void()>>> timers_;
  std::unordered_map<TimerId, Clock::time_point> timer_index_;
  TimerId next_timer_ = 1;
  bool stopping_ = false;
};

}  // namespace nerve
