// The cgroup filesystem as the lifecycle logic sees it, behind an interface so its unit tests can run
// without a kernel cgroup tree. RealCgroups is the real thing (cgroup.h, cgroup_watch.h).
#pragma once

#include "cgroup_watch.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

class Cgroups {
 public:
  virtual ~Cgroups() = default;
  // The cgroup id (inode number) of 'cgroup' (a ControlGroup path), or nullopt if it is gone.
  virtual std::optional<std::uint64_t> id(const std::string& cgroup) = 0;
  virtual bool populated(const std::string& cgroup) = 0;
  virtual std::vector<pid_t> pids(const std::string& cgroup) = 0;
  // Opens 'cgroup', checks through that folder fd that its id is 'expected_id', and only then
  // writes cgroup.kill through the same fd. false if gone, replaced or unsupported.
  virtual bool kill_if(const std::string& cgroup, std::uint64_t expected_id) = 0;
  // 'changed' runs on every change of cgroup.events and when the folder goes. -1: already gone.
  virtual int watch(const std::string& cgroup, std::function<void()> changed) = 0;
  virtual void unwatch(int handle) = 0;
  // The cgroup2 membership ("0::" line) of 'pid', or nullopt.
  virtual std::optional<std::string> member_of(pid_t pid) = 0;
};

class RealCgroups : public Cgroups {
 public:
  RealCgroups(std::string root, CgroupWatcher& watcher) : root_(std::move(root)), watcher_(watcher) {}
  const std::string& root() const { return root_; }

  std::optional<std::uint64_t> id(const std::string& cgroup) override;
  bool populated(const std::string& cgroup) override;
  std::vector<pid_t> pids(const std::string& cgroup) override;
  bool kill_if(const std::string& cgroup, std::uint64_t expected_id) override;
  int watch(const std::string& cgroup, std::function<void()> changed) override;
  void unwatch(int handle) override { watcher_.unwatch(handle); }
  std::optional<std::string> member_of(pid_t pid) override;

 private:
  std::string root_;
  CgroupWatcher& watcher_;
};

}  // namespace nerve
