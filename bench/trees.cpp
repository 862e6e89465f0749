// SPDX-License-Identifier: LGPL-2.1-or-later
#include "trees.h"

namespace bench {

std::string launch_tree(Engine& e, const std::string& run, Regime r, double* ms) {
  pause_for(r);
  auto t0 = Clock::now();
  pid_t pid = e.launch(run, tree_command());
  if (ms) *ms = ms_since(t0);
  std::string cg = cgroup_of(pid);
  expect(wait_procs(cg, kTreeSize), "run " + run + ": the tree did not settle in " + cg);
  return cg;
}

}  // namespace bench
