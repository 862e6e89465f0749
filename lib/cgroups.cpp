#include "cgroups.h"

#include "cgroup.h"
#include "host.h"

namespace nerve {

std::optional<std::uint64_t> RealCgroups::id(const std::string& cgroup) { return cgroup_id_of(root_, cgroup); }

bool RealCgroups::populated(const std::string& cgroup) {
  auto dir = CgroupDir::open(root_, cgroup);
  return dir && dir->populated();
}

std::vector<pid_t> RealCgroups::pids(const std::string& cgroup) {
  auto dir = CgroupDir::open(root_, cgroup);
  return dir ? dir->pids() : std::vector<pid_t>{};
}

bool RealCgroups::kill_if(const std::string& cgroup, std::uint64_t expected_id) {
  auto dir = CgroupDir::open(root_, cgroup);
  if (!dir || expected_id == 0 || dir->id() != expected_id) return false;
  return dir->kill();
}

int RealCgroups::watch(const std::string& cgroup, std::function<void()> changed) {
  std::string full = root_ + (cgroup.empty() || cgroup.front() == '/' ? "" : "/") + cgroup;
  return watcher_.watch(full, std::move(changed));
}

std::optional<std::string> RealCgroups::member_of(pid_t pid) { return proc_cgroup(pid); }

}  // namespace nerve
