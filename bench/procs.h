// SPDX-License-Identifier: LGPL-2.1-or-later
// Processes and cgroups as the benchmark sees them: whole-process timings, a held child (forked,
// waits, execs when released), /proc counters of a daemon, cgroup membership and emptiness.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

// Runs argv (PATH lookup) with stdin/stdout on /dev/null and waits for it. Returns its
// wall time in ms; *status gets its wait status.
double time_process(const std::vector<std::string>& argv, int* status);

// A forked child that waits until release(), then execs argv (absolute path).
class HeldChild {
 public:
  explicit HeldChild(const std::vector<std::string>& argv);
  ~HeldChild();
  HeldChild(const HeldChild&) = delete;
  HeldChild& operator=(const HeldChild&) = delete;
  pid_t pid() const { return pid_; }
  // Lets the child exec; true once the exec happened (its close-on-exec pipe closed without a word).
  bool release();
  // Waits for the child's end (after its scope was stopped).
  void wait();

 private:
  pid_t pid_ = -1;
  int hold_ = -1, exec_ = -1;
  bool waited_ = false;
};

// The command of a settled tree: a shell with 21 sleeping children, 22 processes.
std::vector<std::string> tree_command();
inline constexpr int kTreeSize = 22;

// /proc facts of a process.
std::uint64_t cpu_ticks(pid_t pid);      // utime + stime of all its threads, clock ticks
double ticks_to_ms(std::uint64_t ticks);
double rss_mb(pid_t pid);                // VmRSS
std::uint64_t context_switches(pid_t pid);  // voluntary + nonvoluntary, all threads

// cgroups, as paths relative to the cgroup2 root ($NERVE_CGROUP_ROOT, else /sys/fs/cgroup).
std::string cgroup_root();
std::string cgroup_of(pid_t pid);  // the 0:: line of /proc/PID/cgroup
int count_procs(const std::string& cgroup);  // -1 when the folder is gone
// Waits until the cgroup holds n processes (bounded); false on timeout.
bool wait_procs(const std::string& cgroup, int n, int timeout_ms = 10'000);
// Folders under <root>/app.slice whose names start with prefix, and the processes in them.
std::vector<std::string> scope_folders(const std::string& prefix, int* processes);

// Watches a cgroup's cgroup.events from construction; wait() returns once it is empty or gone.
class EmptyWatch {
 public:
  explicit EmptyWatch(const std::string& cgroup);
  ~EmptyWatch();
  EmptyWatch(const EmptyWatch&) = delete;
  EmptyWatch& operator=(const EmptyWatch&) = delete;
  bool wait(int timeout_ms = 30'000);

 private:
  bool empty_now() const;
  std::string events_;
  int fd_ = -1;
};

}  // namespace bench
