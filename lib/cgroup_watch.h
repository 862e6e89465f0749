// Waiting for a cgroup to empty, on inotify events rather than sleeps.
//
// The kernel modifies cgroup.events when "populated" changes; inotify reports IN_MODIFY on it, and
// IN_IGNORED when the folder (and so the file) is removed. CgroupWatcher owns one inotify fd in the
// event loop and calls a run's callback on each such event; the callback reads cgroup.events again
// and decides. Arm the watch before the first read, so no change can fall between the two.
#pragma once

#include "event_loop.h"
#include "fd.h"

#include <functional>
#include <string>
#include <unordered_map>

namespace nerve {

class CgroupWatcher {
 public:
  explicit CgroupWatcher(EventLoop& loop);
  ~CgroupWatcher();

  // Calls 'changed' on every change of 'cgroup_dir'/cgroup.events, and when the folder goes away.
  // Returns a handle for unwatch, or -1 if the folder is already gone.
  int watch(const std::string& cgroup_dir, std::function<void()> changed);
  void unwatch(int handle);

 private:
  void on_ready();
  EventLoop& loop_;
  Fd inotify_;
  std::unordered_map<int, std::function<void()>> watches_;
};

}  // namespace nerve
