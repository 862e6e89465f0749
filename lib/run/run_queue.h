// SPDX-License-Identifier: LGPL-2.1-or-later
// Calls for one run are serialised: an operation on run R starts only when the previous one on R has
// finished, so a launch and a reap of the same run can never interleave. Runs are independent.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace nerve {

class RunQueue {
 public:
  // The primitive: 'op' receives a 'release' function that frees the run's slot; only its first call
  // counts. Prefer serial(), which releases by construction.
  using Op = std::function<void(std::function<void()> release)>;
  void submit(const std::string& run, Op op);

  // Runs 'op' once every earlier operation on 'run' has finished. 'op' gets 'finish': calling it
  // releases the slot, then passes the answer on to 'done'. Should 'finish' be dropped uncalled, the
  // slot is released when its last copy goes (and 'done' is not called).
  template <typename T>
  void serial(const std::string& run, std::function<void(std::function<void(T)>)> op, std::function<void(T)> done) {
    submit(run, [op = std::move(op), done = std::move(done)](std::function<void()> release) {
      auto slot = std::make_shared<Slot>(std::move(release));
      op([slot, done](T answer) {
        slot->release();
        done(std::move(answer));
      });
    });
  }

  bool busy(const std::string& run) const { return queues_.count(run) != 0; }

 private:
  // Releases the run's slot once: when told, or at the latest when destroyed.
  class Slot {
   public:
    explicit Slot(std::function<void()> release) : release_(std::move(release)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { release(); }
    void release() {
      if (!release_) return;
      auto fn = std::move(release_);
      release_ = nullptr;
      fn();
    }

   private:
    std::function<void()> release_;
  };

  void run_next(const std::string& run);
  std::map<std::string, std::deque<Op>> queues_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace nerve
