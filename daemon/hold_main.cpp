// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve-hold: the holder of a run's scope (lib/process/holder.h). nerved puts one into each scope it
// starts, in the scope's hold/ leaf, so that the scope's cgroup stays until nerved has read the run's
// figures from its run/ leaf, however the run's own processes end. It ignores every signal that can
// be ignored and waits forever: only SIGKILL (nerved's cgroup.kill of the scope) ends it.
// libc only (no libstdc++ at all) and linked statically, so its private memory is a few tens of KB.
#include <signal.h>
#include <unistd.h>

int main() {
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  for (int signo = 1; signo < NSIG; ++signo)
    if (signo != SIGKILL && signo != SIGSTOP) sigaction(signo, &ignore, nullptr);  // glibc's own refuse: fine
  for (;;) pause();
}
