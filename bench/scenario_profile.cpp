// SPDX-License-Identifier: LGPL-2.1-or-later
// Not part of the table: where nerved's time goes. Attaches strace to the running nerved while an
// engine launches and reaps settled trees (warm): a syscall count over many operations
// (<out>/strace-counts.txt) and a timed trace of a few (<out>/strace-timeline.txt). Run with
// `scripts/bench.sh --only profile`; strace slows nerved down, so no figure of this run is a timing.
#include "procs.h"
#include "scenarios.h"
#include "trees.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {

namespace {

pid_t attach_strace(pid_t target, const std::vector<std::string>& opts, const std::string& out) {
  std::vector<std::string> argv{"strace", "-o", out};  // nerved alone, not its children
  argv.insert(argv.end(), opts.begin(), opts.end());
  argv.insert(argv.end(), {"-p", std::to_string(target)});
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    ::execvp("strace", a.data());
    ::_exit(127);
  }
  sleep_ms(500);  // strace has attached to every thread
  return pid;
}

void detach(pid_t strace) {
  sleep_ms(300);
  ::kill(strace, SIGINT);
  ::waitpid(strace, nullptr, 0);
}

void launch_reap(Context& c, int n) {
  for (int i = 0; i < n; ++i) {
    std::string run = Engine::next_run("prof");
    launch_tree(c.engine, run, Regime::Warm, nullptr);
    pause_for(Regime::Warm);
    expect(c.engine.reap(run) == "complete", "profile reap of " + run);
  }
}

}  // namespace

void run_profile(Context& c, const std::string& out) {
  launch_reap(c, 5);
  pid_t s = attach_strace(c.nerved.pid(), {"-c", "-w"}, out + "/strace-counts.txt");
  int n = c.cfg.smoke ? 3 : 40;
  launch_reap(c, n);
  detach(s);
  c.results.note("profile", {{"launch_reap_operations", n}, {"counts", out + "/strace-counts.txt"},
                             {"timeline", out + "/strace-timeline.txt"}});
  s = attach_strace(c.nerved.pid(), {"-tt", "-T", "-s", "120"}, out + "/strace-timeline.txt");
  launch_reap(c, 3);
  detach(s);
}

}  // namespace bench
