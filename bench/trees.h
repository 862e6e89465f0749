// SPDX-License-Identifier: LGPL-2.1-or-later
// The settled 22-process trees that reaps are measured on, one per contender: a nerve run launched
// through the engine API, and a raw scope started by the reference client.
#pragma once

#include "clock.h"
#include "engine.h"
#include "procs.h"
#include "raw_systemd.h"
#include "scenarios.h"

#include <memory>
#include <string>

namespace bench {

// Launches run (after the regime's idle; *ms = Launch call to reply) and waits until its tree has
// settled. Returns its cgroup.
std::string launch_tree(Engine& e, const std::string& run, Regime r, double* ms);

// The same for the reference: the held child is forked after the idle, inside the measured time,
// as nerved forks its child inside Launch. *ms = fork to exec confirmed.
struct RawTree {
  std::unique_ptr<HeldChild> child;
  std::string unit, cgroup;
};
// Client: RawSystemd (through dbus-daemon) or RawPrivate (the manager's private socket).
template <class Client>
RawTree start_tree(Client& raw, Regime r, double* ms) {
  RawTree t;
  t.unit = RawSystemd::next_unit();
  pause_for(r);
  auto t0 = Clock::now();
  t.child = std::make_unique<HeldChild>(tree_command());
  expect(raw.start_scope(t.unit, t.child->pid()), "raw start of " + t.unit);
  expect(t.child->release(), "raw child of " + t.unit + " did not exec");
  if (ms) *ms = ms_since(t0);
  t.cgroup = cgroup_of(t.child->pid());
  expect(wait_procs(t.cgroup, kTreeSize), t.unit + ": the tree did not settle in " + t.cgroup);
  return t;
}

}  // namespace bench
