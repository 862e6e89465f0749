// SPDX-License-Identifier: LGPL-2.1-or-later
// Engine API latencies: Launch (call to reply) and Reap/Cancel of a settled 22-process tree, against
// a resident raw client doing the same with the user manager directly.
#include "procs.h"
#include "raw_private.h"
#include "scenarios.h"
#include "trees.h"

#include <csignal>
#include <memory>

namespace bench {

namespace {

void nerve_launch_reap(Context& c, Regime r, bool keep) {
  std::string run = Engine::next_run("lat");
  double launch_ms;
  launch_tree(c.engine, run, r, &launch_ms);
  pause_for(r);
  auto t0 = Clock::now();
  std::string outcome = c.engine.reap(run);
  double reap_ms = ms_since(t0);
  expect(outcome == "complete", "reap of " + run + ": " + outcome);
  c.engine.forget(run);
  if (!keep) return;
  c.results.add("engine_launch", "nerve", regime_name(r), launch_ms);
  c.results.add("engine_reap", "nerve", regime_name(r), reap_ms);
}

// The raw client's start and stop, through dbus-daemon (the reference of Launch and Reap) or through
// the private socket (what the hop costs); rows are the rows its samples go to.
template <class Client>
void raw_start_stop(Client& raw, Results& results, Regime r, bool keep, const char* launch_row, const char* stop_row,
                    const char* side) {
  double start_ms;
  RawTree t = start_tree(raw, r, &start_ms);
  pause_for(r);
  auto t0 = Clock::now();
  expect(raw.stop_until_empty(t.unit, t.cgroup), "raw stop of " + t.unit);
  double stop_ms = ms_since(t0);
  t.child->wait();
  if (!keep) return;
  results.add(launch_row, side, regime_name(r), start_ms);
  results.add(stop_row, side, regime_name(r), stop_ms);
}

void bus_start_stop(Context& c, Regime r, bool keep) {
  raw_start_stop(c.raw, c.results, r, keep, "engine_launch", "engine_reap", "reference");
  // The same samples are the reference of the private-socket rows.
  if (!keep) return;
  for (auto [from, to] : {std::pair{"engine_launch", "private_launch"}, std::pair{"engine_reap", "private_stop"}})
    c.results.add(to, "reference", regime_name(r), c.results.find(from, "reference", regime_name(r))->back());
}

void nerve_cancel(Context& c, Regime r, bool keep) {
  std::string run = Engine::next_run("can");
  launch_tree(c.engine, run, r, nullptr);
  pause_for(r);
  auto t0 = Clock::now();
  std::string outcome = c.engine.cancel(run, SIGHUP, 10'000'000);
  double ms = ms_since(t0);
  expect(outcome == "complete", "cancel of " + run + ": " + outcome);
  c.engine.forget(run);
  if (keep) c.results.add("engine_cancel", "nerve", regime_name(r), ms);
}

void raw_kill(Context& c, Regime r, bool keep) {
  RawTree t = start_tree(c.raw, r, nullptr);
  pause_for(r);
  auto t0 = Clock::now();
  expect(c.raw.kill_until_empty(t.unit, t.cgroup, SIGHUP), "raw kill of " + t.unit);
  double ms = ms_since(t0);
  t.child->wait();
  if (keep) c.results.add("engine_cancel", "reference", regime_name(r), ms);
}

}  // namespace

void run_engine_latency(Context& c) {
  std::unique_ptr<RawPrivate> priv;
  if (RawPrivate::available()) priv = std::make_unique<RawPrivate>();
  for (Regime r : kRegimes) {
    std::vector<Contender> contenders{[&](bool k) { nerve_launch_reap(c, r, k); },
                                      [&](bool k) { bus_start_stop(c, r, k); }};
    if (priv)
      contenders.push_back([&](bool k) {
        raw_start_stop(*priv, c.results, r, k, "private_launch", "private_stop", "measured");
      });
    interleave(c.cfg.iterations, contenders);
    interleave(c.cfg.iterations, {[&](bool k) { nerve_cancel(c, r, k); }, [&](bool k) { raw_kill(c, r, k); }});
  }
}

}  // namespace bench
