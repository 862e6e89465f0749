// The settled 22-process trees that reaps are measured on, one per contender: a nerve run launched
// through the engine API, and a raw scope started by the reference client.
#pragma once

#include "clock.h"
#include "engine.h"
#include "procs.h"
#include "raw_systemd.h"

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
RawTree start_tree(RawSystemd& raw, Regime r, double* ms);

}  // namespace bench
