// SPDX-License-Identifier: LGPL-2.1-or-later
// Whole-process latencies of the CLI against systemd's own tools: `nervectl launch R -- true` (and
// with --wait) against `systemd-run --user --scope -q true`, `nervectl reap R` of a settled tree
// against `systemctl --user stop UNIT`. Runs left by a contender are cleaned up untimed.
#include "procs.h"
#include "scenarios.h"
#include "trees.h"

#include <sys/wait.h>

namespace bench {

namespace {

bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

void ctl_launch(Context& c, Regime r, bool wait, bool keep) {
  std::string run = Engine::next_run(wait ? "clw" : "cli");
  std::vector<std::string> argv{c.cfg.nervectl, "launch"};
  if (wait) argv.push_back("--wait");
  argv.insert(argv.end(), {run, "--", "true"});
  pause_for(r);
  int status;
  double ms = time_process(argv, &status);
  expect(exited_ok(status), "nervectl launch of " + run + " failed");
  c.engine.reap(run);  // the command has ended; its scope is gone: no_scope (or the --wait receipt)
  c.engine.forget(run);
  if (keep) c.results.add(wait ? "cli_launch_wait" : "cli_launch", "nerve", regime_name(r), ms);
}

void systemd_run(Context& c, Regime r, bool keep) {
  pause_for(r);
  int status;
  double ms = time_process({"systemd-run", "--user", "--scope", "-q", "true"}, &status);
  expect(exited_ok(status), "systemd-run failed");
  if (!keep) return;
  c.results.add("cli_launch", "reference", regime_name(r), ms);
  c.results.add("cli_launch_wait", "reference", regime_name(r), ms);
}

void ctl_reap(Context& c, Regime r, bool keep) {
  std::string run = Engine::next_run("clr");
  launch_tree(c.engine, run, Regime::B2B, nullptr);
  pause_for(r);
  int status;
  double ms = time_process({c.cfg.nervectl, "reap", run}, &status);
  expect(exited_ok(status), "nervectl reap of " + run + " failed");
  c.engine.forget(run);
  if (keep) c.results.add("cli_reap", "nerve", regime_name(r), ms);
}

void systemctl_stop(Context& c, Regime r, bool keep) {
  RawTree t = start_tree(c.raw, Regime::B2B, nullptr);
  pause_for(r);
  int status;
  double ms = time_process({"systemctl", "--user", "stop", t.unit}, &status);
  expect(exited_ok(status), "systemctl --user stop " + t.unit + " failed");
  expect(count_procs(t.cgroup) <= 0, t.unit + " not empty after systemctl stop");
  t.child->wait();
  if (keep) c.results.add("cli_reap", "reference", regime_name(r), ms);
}

}  // namespace

void run_cli_latency(Context& c) {
  for (Regime r : kRegimes) {
    interleave(c.cfg.iterations, {[&](bool k) { ctl_launch(c, r, false, k); },
                                  [&](bool k) { systemd_run(c, r, k); },
                                  [&](bool k) { ctl_launch(c, r, true, k); }});
    interleave(c.cfg.iterations, {[&](bool k) { ctl_reap(c, r, k); }, [&](bool k) { systemctl_stop(c, r, k); }});
  }
}

}  // namespace bench
