// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/event_loop.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <sdbus-c++/IConnection.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace nerve {

EventLoop::EventLoop() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_) throw std::system_error(errno, std::generic_category(), "epoll_create1");
}

EventLoop::~EventLoop() = default;

void EventLoop::attach_bus(sdbus::IConnection& bus, std::function<void()> failed) {
  auto pd = bus.getEventLoopPollData();
  Bus b{&bus, pd.fd, static_cast<std::uint32_t>(pd.events), std::move(failed)};
  epoll_event ev{};
  ev.events = b.events;
  ev.data.u64 = static_cast<std::uint32_t>(b.fd);  // generation 0: a bus
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, b.fd, &ev) < 0)
    throw std::system_error(errno, std::generic_category(), "epoll_ctl(bus)");
  buses_.push_back(std::move(b));
}

void EventLoop::detach_bus(sdbus::IConnection& bus) {
  for (auto it = buses_.begin(); it != buses_.end(); ++it)
    if (it->connection == &bus) {
      ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->fd, nullptr);
      buses_.erase(it);
      return;
    }
}

void EventLoop::watch_fd(int fd, std::uint32_t events, std::function<void(std::uint32_t)> fn) {
  // Each watch has its own generation in the event's data: an event reported for an fd that was
  // closed and whose number was reused (in the same epoll_wait batch) never reaches the new watch.
  next_generation_ = next_generation_ % 0xffffffffu + 1;  // 1 .. 2^32-1
  std::uint64_t gen = next_generation_;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = (gen << 32) | static_cast<std::uint32_t>(fd);
  int op = fds_.count(fd) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (::epoll_ctl(epoll_.get(), op, fd, &ev) < 0)
    throw std::system_error(errno, std::generic_category(), "epoll_ctl(watch)");
  fds_[fd] = Watch{gen, std::make_shared<std::function<void(std::uint32_t)>>(std::move(fn))};
}

void EventLoop::unwatch_fd(int fd) {
  if (fds_.erase(fd)) ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

TimerId EventLoop::add_timer(Clock::duration after, std::function<void()> fn) {
  TimerId id = next_timer_++;
  auto at = Clock::now() + after;
  timers_.emplace(at, std::make_pair(id, std::move(fn)));
  timer_index_[id] = at;
  return id;
}

void EventLoop::cancel_timer(TimerId id) {
  auto it = timer_index_.find(id);
  if (it == timer_index_.end()) return;
  auto range = timers_.equal_range(it->second);
  for (auto t = range.first; t != range.second; ++t)
    if (t->second.first == id) {
      timers_.erase(t);
      break;
    }
  timer_index_.erase(it);
}

void EventLoop::process_bus() {
  // By index: a message's handler may attach another bus (appended), never detach one.
  // Messages for at most kBusBudget per turn, so that timers and fds (a reap's steps, the calls queued
  // by call_gate.h) are served between them however many messages wait. Reading is
  // cheap (a call is admitted and queued, or refused); the serving is paced by call_gate.h.
  auto until = Clock::now() + kBusBudget;
  std::vector<std::function<void()>> failures;
  for (std::size_t i = 0; i < buses_.size(); ++i) {
    sdbus::IConnection* connection = buses_[i].connection;
    try {
      while (connection->processPendingRequest() && Clock::now() < until) {
      }
    } catch (const std::exception& e) {
      if (!buses_[i].failed) {
        spdlog::error("unexpected failure in a bus message: {}; going on", e.what());
        continue;
      }
      spdlog::warn("a bus connection failed: {}", e.what());
      failures.push_back(buses_[i].failed);
    }
  }
  for (auto& f : failures) guarded("a bus failure", f);
}

// The bus may hold already-read messages (timeout 0) or want POLLOUT: ask each bus every turn.
int EventLoop::bus_timeout() {
  int timeout_ms = -1;
  for (auto& b : buses_) {
    auto pd = b.connection->getEventLoopPollData();
    if (static_cast<std::uint32_t>(pd.events) != b.events) {
      b.events = static_cast<std::uint32_t>(pd.events);
      epoll_event ev{};
      ev.events = b.events;
      ev.data.u64 = static_cast<std::uint32_t>(b.fd);
      ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, b.fd, &ev);
    }
    int t = pd.getPollTimeout();
    if (t >= 0) timeout_ms = timeout_ms < 0 ? t : std::min(timeout_ms, t);
  }
  return timeout_ms;
}

void EventLoop::run() {
  stopping_ = false;
  epoll_event events[32];
  while (!stopping_) {
    int timeout_ms = bus_timeout();
    if (!timers_.empty()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(timers_.begin()->first - Clock::now());
      // epoll_wait takes an int of milliseconds: a timer further off than 24.8 days waits that long
      // and is looked at again, never a wrapped (negative: forever, or past: at once) wait.
      auto ms = std::clamp<std::int64_t>(left.count(), 0, std::numeric_limits<int>::max());
      int t = static_cast<int>(ms);
      timeout_ms = timeout_ms < 0 ? t : std::min(timeout_ms, t);
    }
    int n = ::epoll_wait(epoll_.get(), events, 32, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "epoll_wait");
    }
    for (int i = 0; i < n; ++i) {
      int fd = static_cast<int>(events[i].data.u64 & 0xffffffffu);
      std::uint64_t gen = events[i].data.u64 >> 32;
      if (gen == 0) continue;  // a bus: processed below
      auto it = fds_.find(fd);
      if (it == fds_.end() || it->second.generation != gen) continue;  // unwatched, or a stale event
      auto fn = it->second.fn;  // keeps the callback alive if it unwatches itself
      guarded("an fd callback", [&] { (*fn)(events[i].events); });
    }
    // Always: the bus may have queued messages while a callback made a call, or a call timed out.
    process_bus();
    // Timers due now, in order; a callback may add or cancel timers.
    auto now = Clock::now();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      auto node = timers_.extract(timers_.begin());
      timer_index_.erase(node.mapped().first);
      guarded("a timer", [&] { node.mapped().second(); });
    }
  }
}

void EventLoop::guarded(const char* what, const std::function<void()>& fn) {
  // No exception ends the daemon: what failed is logged, the loop goes on. Code
  // that must answer someone catches its own exceptions first; this is the last line.
  try {
    fn();
  } catch (const std::exception& e) {
    spdlog::error("unexpected failure in {}: {}; going on", what, e.what());
  }
}

}  // namespace nerve
