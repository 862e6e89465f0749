// SPDX-License-Identifier: LGPL-2.1-or-later
// Wake-ups of an idle nerved: its context switches (all threads, /proc/PID/task/*/status) over 5 s
// with nothing to do, and over 5 s while other clients come and go on the bus and other programs
// run systemd jobs (none of which concern nerve).
#include "procs.h"
#include "scenarios.h"

namespace bench {

namespace {

// Every 50 ms a bus connection opens and closes; every 100 ms an unrelated scope starts and stops.
void neighbours(Context& c, double ms) {
  auto t0 = Clock::now();
  for (int i = 0; ms_since(t0) < ms; ++i) {
    { auto bus = sdbus::createSessionBusConnection(); }
    if (i % 2 == 0) {
      std::string unit = RawSystemd::next_unit();
      HeldChild child({"/bin/sleep", "1000"});
      expect(c.raw.start_scope(unit, child.pid()) && child.release(), "idle: unrelated start of " + unit);
      expect(c.raw.stop_until_empty(unit, cgroup_of(child.pid())), "idle: unrelated stop of " + unit);
      child.wait();
    }
    sleep_ms(50);
  }
}

}  // namespace

void run_idle(Context& c) {
  double span = c.cfg.smoke ? 1000 : 5000;
  int rounds = c.cfg.smoke ? 1 : 3;
  sleep_ms(500);  // the previous scenario's tail
  for (int r = 0; r < rounds; ++r) {
    auto before = context_switches(c.nerved.pid());
    sleep_ms(span);
    c.results.add("idle_wakeups", "nerve", "quiet", static_cast<double>(context_switches(c.nerved.pid()) - before));
    before = context_switches(c.nerved.pid());
    neighbours(c, span);
    c.results.add("idle_wakeups", "nerve", "unrelated bus clients + systemd jobs",
                  static_cast<double>(context_switches(c.nerved.pid()) - before));
  }
}

}  // namespace bench
