// Owners: the process that started a run. A run never outlives its owner (unless launched --keep).
//
// For `nervectl launch` the owner is nervectl's parent, the engine, recorded as pid plus start time
// (field 22 of /proc/PID/stat), so a reused pid is never taken for the owner. While nerved runs it
// holds a pidfd of each owner in its event loop; the pidfd becomes readable when the owner exits,
// even by SIGKILL, and the run is reaped then. At startup, owner_alive() decides between adopting a
// run and reaping it.
#pragma once

#include "event_loop.h"
#include "fd.h"
#include "record.h"

#include <functional>
#include <map>
#include <string>

namespace nerve {

// The owner of a process: its parent, as pid and start time; kind "none" if it cannot be read.
Owner owner_of(pid_t pid);

class OwnerWatch {
 public:
  virtual ~OwnerWatch() = default;
  // True while the recorded owner process exists (same pid, same start time).
  virtual bool alive(const Owner& owner) = 0;
  // Calls 'gone' once, on the event loop, when the owner exits (at once if it already has).
  virtual void watch(const std::string& run, const Owner& owner, std::function<void()> gone) = 0;
  virtual void unwatch(const std::string& run) = 0;
};

class PidfdOwnerWatch : public OwnerWatch {
 public:
  explicit PidfdOwnerWatch(EventLoop& loop) : loop_(loop) {}
  ~PidfdOwnerWatch() override;
  bool alive(const Owner& owner) override;
  void watch(const std::string& run, const Owner& owner, std::function<void()> gone) override;
  void unwatch(const std::string& run) override;

 private:
  EventLoop& loop_;
  std::map<std::string, Fd> pidfds_;
};

}  // namespace nerve
