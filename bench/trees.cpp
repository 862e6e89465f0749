#include "trees.h"

#include "scenarios.h"

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

RawTree start_tree(RawSystemd& raw, Regime r, double* ms) {
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
