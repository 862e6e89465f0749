// Reading and acting on a cgroup2 folder.
//
// ControlGroup paths that systemd reports are relative to the root of the cgroup2 hierarchy as this
// process sees it (its cgroup namespace); cgroup_root() finds where that hierarchy is mounted. A
// CgroupDir is opened once and then used only through its folder fd: its cgroup id (the folder's
// inode number, unique for the cgroup's life) is checked against the record before any signal, and
// cgroup.kill is written through that same fd, so a cgroup that was removed and re-created under the
// same path in between can never be hit.
#pragma once

#include "fd.h"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

// The mount point of the cgroup2 hierarchy (from /proc/self/mountinfo; /sys/fs/cgroup preferred),
// or nullopt when there is none. NERVE_CGROUP_ROOT overrides it.
std::optional<std::string> cgroup_root();

class CgroupDir {
 public:
  // Opens root + path. nullopt if the folder does not exist; throws FsError on other errors.
  static std::optional<CgroupDir> open(const std::string& root, const std::string& path);

  std::uint64_t id() const { return id_; }
  const std::string& full_path() const { return full_path_; }
  int fd() const { return fd_.get(); }

  // "populated" of cgroup.events: some process is in this cgroup or below it. A folder removed
  // meanwhile reads as not populated (a cgroup folder can only be removed when empty).
  bool populated() const;
  // Every pid in this cgroup and in the ones below it.
  std::vector<pid_t> pids() const;
  // Writes "1" to cgroup.kill (SIGKILL to every process below, atomically). false if unsupported
  // (kernels before 5.14) or the cgroup is gone.
  bool kill() const;

 private:
  CgroupDir(Fd fd, std::uint64_t id, std::string full) : fd_(std::move(fd)), id_(id), full_path_(std::move(full)) {}
  Fd fd_;
  std::uint64_t id_ = 0;
  std::string full_path_;
};

// The cgroup id (inode number) of root + path, or nullopt if it does not exist.
std::optional<std::uint64_t> cgroup_id_of(const std::string& root, const std::string& path);

}  // namespace nerve
