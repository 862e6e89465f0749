// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/nested_runs.h"

#include "base/errors.h"

#include <spdlog/spdlog.h>

namespace nerve {

std::string NestedRuns::run_of_cgroup(const std::string& cgroup) {
  auto slash = cgroup.rfind('/');
  std::string name = slash == std::string::npos ? cgroup : cgroup.substr(slash + 1);
  const std::string prefix = "nerve-", suffix = ".scope";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  name = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  auto dash = name.rfind('-');  // before the nonce
  return dash == std::string::npos ? "" : name.substr(0, dash);
}

Result<std::string> NestedRuns::adopt(pid_t caller, const std::string& run) {
  auto cgroup = deps_.cgroups.member_of(caller);
  if (!cgroup) return std::string();
  // The caller belongs to the run whose scope is on its cgroup's path at any depth: in the scope, in
  // its run/ leaf, or in any cgroup a process of the run made below them. From the deepest part up.
  for (std::string path = *cgroup; path.size() > 1 && path.front() == '/'; path.resize(path.rfind('/'))) {
    std::string parent = run_of_cgroup(path);
    if (parent == run) return std::string();
    if (parent.empty()) continue;
    auto rec = records_.load(parent);
    // A scope of that name that is not the recorded run's cgroup is not a run of ours.
    if (!rec || !*rec || (*rec)->cgroup != path) continue;
    if (is_final((*rec)->state))
      return Error{error::RunFinished, "the caller is inside run " + quote_value(parent) + ", which is " +
                                           to_string((*rec)->state) + "; run " + quote_value(run) +
                                           " cannot start as its child"};
    load_once();
    children_[parent].insert(run);
    return parent;
  }
  return std::string();
}

std::vector<std::string> NestedRuns::take_children(const std::string& run) {
  load_once();
  auto node = children_.extract(run);
  if (node.empty()) return {};
  return {node.mapped().begin(), node.mapped().end()};
}

void NestedRuns::load_once() {
  if (loaded_) return;
  loaded_ = true;
  auto runs = deps_.store.runs();
  if (!runs) return spdlog::error("nested runs: cannot list the runs folder: {}", runs.error().message);
  for (const auto& run : *runs) {
    auto rec = records_.load(run);
    if (rec && *rec && !(*rec)->parent.empty() && !is_final((*rec)->state)) children_[(*rec)->parent].insert(run);
  }
}

}  // namespace nerve
