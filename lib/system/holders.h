// SPDX-License-Identifier: LGPL-2.1-or-later
// The holders of nerved's scopes (process/holder.h), behind an interface so the run layer's unit
// tests can replace them. RealHolders starts each nerve-hold, keeps its pidfd on the event loop and
// collects its exit, so a killed holder never stays a zombie of nerved. A holder that outlives nerved
// (a crash, a restart) is collected by the user manager, the subreaper of nerved's processes.
#pragma once

#include "base/fd.h"
#include "base/result.h"
#include "system/event_loop.h"

#include <sys/types.h>

#include <map>

namespace nerve {

class Holders {
 public:
  virtual ~Holders() = default;
  // Starts a holder: its pid, or an Error naming why it cannot be started.
  virtual Result<pid_t> spawn() = 0;
  // SIGKILL (by its pidfd) to a holder this nerved started that has not ended yet: for a scope that
  // will not get its leaves (the launch failed, or its leaves could not be made).
  virtual void kill(pid_t pid) = 0;
  // Whether 'pid' is a holder this nerved started and has not collected yet: until collected (it is
  // nerved's child), its pid names no other process.
  virtual bool spawned(pid_t pid) const {
    (void)pid;
    return false;
  }
};

class RealHolders : public Holders {
 public:
  explicit RealHolders(EventLoop& loop) : loop_(loop) {}
  ~RealHolders() override;
  Result<pid_t> spawn() override;
  void kill(pid_t pid) override;
  bool spawned(pid_t pid) const override { return pidfds_.contains(pid); }
  // The holders started and not yet ended.
  std::size_t live() const { return pidfds_.size(); }

 private:
  void collect(pid_t pid);

  EventLoop& loop_;
  std::map<pid_t, Fd> pidfds_;
};

}  // namespace nerve
