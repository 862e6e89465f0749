// SPDX-License-Identifier: LGPL-2.1-or-later
// The scenarios of the benchmark. Each measures nerve and its reference in the same run,
// alternating them (the order rotates every iteration, so drift affects both alike).
#pragma once

#include "clock.h"
#include "engine.h"
#include "nerved_process.h"
#include "raw_systemd.h"
#include "results.h"

#include <functional>
#include <string>
#include <vector>

namespace bench {

struct Config {
  std::string nerved, nervectl;  // the binaries under test
  std::string work;              // runs folders and logs (on the disk nerved would use)
  int iterations = 30;           // per regime and contender
  bool smoke = false;            // few iterations, small sizes: checks that everything works
  int scale() const { return smoke ? 100 : 1; }  // sizes are divided by this
};

struct Context {
  Config cfg;
  Results& results;
  Nerved& nerved;  // the main nerved, running on <work>/main-runs during the scenarios that need it
  RawSystemd& raw;
  Engine& engine;
  pid_t manager_pid = -1, bus_pid = -1;
};

// A contender measures one operation; `keep` is false for the warm-up round.
using Contender = std::function<void(bool keep)>;
// One untimed warm-up round, then `iterations` rounds; round i starts with contender i mod n.
void interleave(int iterations, const std::vector<Contender>& contenders);
inline const Regime kRegimes[] = {Regime::B2B, Regime::Warm, Regime::Cold};

// Throws with the text when a measured operation did not do what it should.
void expect(bool ok, const std::string& what);

void run_engine_latency(Context& c);  // engine_launch, engine_reap, engine_cancel
void run_cli_latency(Context& c);     // cli_launch, cli_launch_wait, cli_reap
void run_throughput(Context& c);      // throughput, cpu_*, leaks
void run_idle(Context& c);            // idle_wakeups
void run_startup(Context& c);         // startup_*, records_launch (restarts nerved)
void run_live_memory(Context& c);     // live_rss (restarts nerved)
void run_profile(Context& c, const std::string& out);  // strace of nerved; only with --only profile

}  // namespace bench
