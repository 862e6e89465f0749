// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine API's Launch: nerved starts the command itself, contained before it execs.
//
// Steps, all on the event loop: spawn a held child (spawn_held.h); contain its pid through Lifecycle
// (same checks, records and serialisation as Contain; the owner is the caller's bus connection);
// release it; wait for the exec report (EOF = the command runs); reply. Then watch the child's pidfd:
// when the command ends, collect its status (nerved is its parent), report it (RunExited, the run
// object's ExitStatus) and, with reap_on_exit, reap the run so nothing it started stays behind.
// If containment fails, the child is killed before it ever execs. If the command never starts (chdir
// or exec fails), there is no RunExited and no final reap: the attempt is abandoned (Lifecycle::
// abandon) before ExecFailed is answered, so the run id can be launched again.
#pragma once

#include "base/defaults.h"
#include "system/event_loop.h"
#include "base/fd.h"
#include "run/lifecycle.h"
#include "base/result.h"
#include "process/spawn_held.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

// A Launch: the command, and the Contain of its held child (all of it but the pid, which the spawn
// gives; caller_pid is the bus caller's: a caller inside a run starts a child of that run).
struct LaunchRequest {
  ContainRequest contain;
  SpawnSpec spawn;
};

class ProcessLauncher {
 public:
  using Done = nerve::Done<pid_t>;
  // Called when a launched command ends: (run, exit code or -1, signal or 0).
  using Exited = std::function<void(const std::string&, int, int)>;

  ProcessLauncher(EventLoop& loop, Lifecycle& lifecycle) : loop_(loop), lifecycle_(lifecycle) {
    lifecycle_.on_launched_run([this](const Record& record) { adopt(record); });
  }
  ~ProcessLauncher();
  void on_exit(Exited fn) { exited_ = std::move(fn); }

  void launch(LaunchRequest req, Done done);
  // A running Launch'd run with reap_on_exit found in its record by a reconciliation (after a restart
  // of nerved, the command is no longer nerved's child): its command (leader pid + start time) is
  // watched by a pidfd again, and when it ends, or if it already has, RunExited says the exit status
  // is unknown (exit_code -1, signal 0) and the run is reaped on exit, as without the restart.
  void adopt(const Record& record);
  // -1 while running or unknown; the exit code; or 128 + the signal.
  int exit_status(const std::string& run) const;

 private:
  // Where a launched child is: held while it is being contained; contained (but not yet told to
  // exec, which only lasts while the release fails because it died); released (told to exec: from
  // then on an empty exec report means the command runs); or start_failed (the command never ran).
  enum class Phase { Containing, Contained, Released, StartFailed };
  struct Child;
  void on_contained(const std::shared_ptr<Child>& c, Result<ContainReply> reply);
  void on_report(const std::shared_ptr<Child>& c);
  void on_child_exit(const std::shared_ptr<Child>& c);
  void fail_start(const std::shared_ptr<Child>& c, const std::string& why);
  static std::string exec_error(const Child& c);
  // The adopted command of 'run' (attempt 'attempt') has ended.
  void adopted_ended(const std::string& run, unsigned attempt, pid_t pid);
  // Why RUN cannot be launched again (its record is final), or nullopt.
  std::optional<std::string> finished(const std::string& run);

  EventLoop& loop_;
  Lifecycle& lifecycle_;
  Exited exited_;
  std::map<pid_t, std::shared_ptr<Child>> children_;
  std::map<std::string, int> exit_status_;
  std::map<std::string, Fd> adopted_;  // run -> pidfd of a command adopted from its record
};

}  // namespace nerve
