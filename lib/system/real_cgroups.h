// SPDX-License-Identifier: LGPL-2.1-or-later
// Cgroups (cgroups.h) on the kernel's cgroup2 tree: folders opened as fds, cgroup.events watched
// with one inotify fd on nerved's event loop.
#pragma once

#include "system/cgroups.h"
#include "system/event_loop.h"
#include "base/fd.h"
#include "system/migration_primer.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace nerve {

class RealCgroups : public Cgroups {
 public:
  // 'root': where the cgroup2 hierarchy is mounted (cgroup_root(), host.h). Throws std::system_error when
  // inotify cannot be set up.
  RealCgroups(std::string root, EventLoop& loop);
  ~RealCgroups() override;

  std::optional<std::uint64_t> id(const std::string& cgroup) override;
  Result<bool> populated(const std::string& cgroup) override;
  std::vector<pid_t> pids(const std::string& cgroup) override;
  Result<std::vector<pid_t>> live_pids(const std::string& cgroup) override;
  bool kill_if(const std::string& cgroup, std::uint64_t expected_id) override;
  std::optional<Usage> usage(const std::string& cgroup, std::uint64_t expected_id) override;
  bool thaw_if(const std::string& cgroup, std::uint64_t expected_id) override;
  bool frozen(const std::string& cgroup) override;
  Result<Leaves> make_leaves(const std::string& cgroup, std::uint64_t expected_id, pid_t pid, pid_t holder) override;
  int watch(const std::string& cgroup, std::function<void()> changed) override;
  void unwatch(int handle) override;
  std::optional<std::string> member_of(pid_t pid) override;
  std::optional<std::uint64_t> start_time(pid_t pid) override;
  std::optional<ProcStat> process(pid_t pid) override { return proc_stat(pid); }  // one read
  void prime_migration() override { primer_.prime(); }

 private:
  void on_inotify();

  std::string root_;
  EventLoop& loop_;
  Fd inotify_;
  struct Watch {
    int wd = -1;
    std::function<void()> fn;
  };
  std::unordered_map<int, Watch> watches_;             // handle -> its watch
  std::unordered_map<int, std::vector<int>> by_wd_;    // inotify watch descriptor -> its handles
  int next_handle_ = 1;
  MigrationPrimer primer_;
};

}  // namespace nerve
