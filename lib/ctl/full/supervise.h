// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl launch --wait`: nervectl stays in the foreground as the supervisor of its run.
//
// The supervisor blocks TERM, INT, HUP and QUIT (they arrive on a signalfd) and forks a child that
// does what plain `launch` does, one step at a time on the supervisor's word:
//   1. "contain": the child calls Contain with the supervisor's bus connection as the run's owner, so
//      nerved reaps the run if the supervisor dies, even by SIGKILL; it reports "K" or the error;
//   2. "exec": the child restores default signal handling and execs CMD; a close-on-exec pipe tells
//      the supervisor that the exec happened (EOF) or why it failed.
// Then the supervisor waits on the child's pidfd and the signalfd. When CMD exits, the run is reaped
// (no descendant outlives it) and nervectl exits with CMD's status (code, or 128 + signal). When a
// signal n arrives, at whatever step, the run is cancelled: n is passed to every process of the
// scope, what is left after the grace is killed, and nervectl exits 128 + n once the scope is
// confirmed empty; a signal that is pending when CMD's end is seen comes first (a signal to a process
// group that holds both, such as Ctrl-C, is pending before CMD can have exited of it), so such a run's
// receipt says cancelled, not exited. A child that was not contained yet is simply killed: it never
// ran CMD.
// The run ends with the process that ran `nervectl launch --wait` (the engine), as a plain launch's
// does: the supervisor holds a pidfd of its parent and, when it becomes readable (the engine ended,
// even by a SIGKILL of its pid alone), closes its bus connection, so that nerved reaps the run with
// cause owner_gone; then it exits when CMD does. With --keep the parent is not watched and the run
// lives until CMD ends (and, as any kept run, is not reaped when the supervisor dies).
// The final reap's wait is bounded by the run's grace: the launch's, or without one the run object's
// GraceUSec (nerved's default).
// NERVE_TEST_PAUSE=before-scope|before-exec|before-wait stops the supervisor (SIGSTOP) at that step,
// so tests can deliver a signal at exactly that moment.
#pragma once

#include "ctl/ctl.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sdbus {
class Variant;
}

namespace nerve::ctl {

struct SuperviseRequest {
  std::string run;
  std::uint64_t grace_usec = 0;
  bool keep = false;
  std::vector<std::string> cmd;
  bool sealed = false;  // the child seals itself after Contain, before exec (sealing.h)
  RunControlArgs controls;
};

int supervise(Context& ctx, const SuperviseRequest& req);

}  // namespace nerve::ctl
