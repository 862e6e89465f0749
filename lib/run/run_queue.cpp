// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/run_queue.h"

#include <memory>

namespace nerve {

void RunQueue::submit(const std::string& run, Op op) {
  auto& q = queues_[run];
  q.push_back(std::move(op));
  if (q.size() == 1) run_next(run);
}

void RunQueue::run_next(const std::string& run) {
  auto it = queues_.find(run);
  if (it == queues_.end() || it->second.empty()) return;
  Op op = it->second.front();  // stays queued (marks the run busy) until released
  auto released = std::make_shared<bool>(false);
  // A release that comes after the queue is gone (an operation outliving nerved's objects at exit)
  // does nothing.
  op([this, alive = std::weak_ptr<int>(alive_), run, released] {
    if (*released || alive.expired()) return;
    *released = true;
    auto q = queues_.find(run);
    q->second.pop_front();
    if (q->second.empty())
      queues_.erase(q);
    else
      run_next(run);
  });
}

}  // namespace nerve
