// Calls for one run are serialised: an operation on run R starts only when the previous one on R has
// finished, so a launch and a reap of the same run can never interleave. Runs are independent.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>

namespace nerve {

class RunQueue {
 public:
  // 'op' receives a 'release' function that it must call exactly once, when it is done.
  using Op = std::function<void(std::function<void()> release)>;

  void submit(const std::string& run, Op op);
  bool busy(const std::string& run) const { return queues_.count(run) != 0; }

 private:
  void run_next(const std::string& run);
  std::map<std::string, std::deque<Op>> queues_;
};

}  // namespace nerve
