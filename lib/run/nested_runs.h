// SPDX-License-Identifier: LGPL-2.1-or-later
// Nested runs (docs/records.md): a Contain or Launch made from inside another live
// run's scope starts a child of that run. The child gets its own sibling scope; the record's
// "parent" names the run it was started in. Reaping a parent fences it first (from then on no child
// can start in it), then reaps its live children (depth first, each fenced before it is signalled,
// each with its own receipt), then stops the parent (final_reap.h). A run whose parent is final
// (fenced or reaped) is refused, so a process cannot leave its run by asking nerve for a new one.
// A nerved that dies anywhere in a nested reap leaves the parent fenced: the reconciliation of the
// next one finishes its reap, children first (a fenced child's own line reaps it).
//
// NestedRuns finds the parent from the caller's cgroup by ancestry: the deepest cgroup on its path
// that is a scope named nerve-RUN-NONCE.scope whose record names that very cgroup (so a caller in the
// run's run/ leaf, or in any cgroup a process of the run made below, is inside that run) and keeps an index parent -> children in memory, loaded from the
// records on first use (so it holds after a restart) and updated at each Contain.
#pragma once

#include "run/deps.h"
#include "base/result.h"
#include "record/run_records.h"

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nerve {

class NestedRuns {
 public:
  explicit NestedRuns(Deps& deps) : deps_(deps), records_(deps.store) {}

  // The run whose scope 'caller' is in, at any depth below it ("" for none, or for 'run' itself); error RunFinished naming
  // the parent when that run is final. Records 'run' as its child.
  Result<std::string> adopt(pid_t caller, const std::string& run);
  // The children of 'run' recorded so far, taken out of the index (each is reaped once).
  std::vector<std::string> take_children(const std::string& run);

 private:
  // The run id in a cgroup path ending in /nerve-RUN-NONCE.scope, or "".
  static std::string run_of_cgroup(const std::string& cgroup);
  void load_once();

  Deps& deps_;
  RunRecords records_;
  std::map<std::string, std::set<std::string>> children_;
  bool loaded_ = false;
};

}  // namespace nerve
