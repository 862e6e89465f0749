// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/cgroup_delegation.h"

#include "base/errors.h"
#include "base/host.h"
#include "base/host_kind.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string_view>

namespace nerve {

namespace {

Error refused(const std::string& why) { return Error{kNoSubtree, why}; }

bool is_systemd_name(std::string_view part) {
  return part == "init.scope" || part.ends_with(".slice") || part.ends_with(".scope") || part.ends_with(".service");
}

bool marked_delegated(const std::string& folder) {
  for (const char* name : {"user.delegate", "trusted.delegate"}) {
    char value[8] = {};
    ssize_t n = ::getxattr(folder.c_str(), name, value, sizeof value - 1);
    if (n > 0 && value[0] == '1') return true;
  }
  return false;
}

// ROOT as a cgroup path: "/x/y" stays, "<mount>/x/y" loses the mount; "" when it is neither.
std::string as_cgroup(const std::string& mount, std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.starts_with(mount + "/")) return root.substr(mount.size());
  if (root == mount) return "/";
  return root.starts_with("/") ? root : "";
}

std::string full(const SubtreeFacts& f, const std::string& cgroup) { return f.mount + (cgroup == "/" ? "" : cgroup); }

}  // namespace

SubtreeFacts read_subtree_facts() {
  SubtreeFacts f;
  f.mount = cgroup_root().value_or("");
  struct statvfs vfs {};
  f.read_only = !f.mount.empty() && ::statvfs(f.mount.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
  f.own_cgroup = proc_cgroup(::getpid()).value_or("");
  struct stat self {}, init {};
  f.initial_namespace = ::stat("/proc/self/ns/cgroup", &self) == 0 && ::stat("/proc/1/ns/cgroup", &init) == 0 &&
                        self.st_ino == init.st_ino && self.st_dev == init.st_dev;
  return f;
}

std::string subtree_fixes() {
  return "  - a user manager: loginctl enable-linger USER (or log in), then start nerved in that session;\n"
         "  - Docker: docker run --privileged (a private, writable cgroup namespace), or --cgroupns=private "
         "with a writable /sys/fs/cgroup;\n"
         "  - podman: podman run --systemd=always, or --security-opt unmask=/sys/fs/cgroup;\n"
         "  - Kubernetes: containerd's cgroup_writable = true (or CRI-O's cgroup-writable annotation);\n"
         "  - a system service: run nerved in a unit with Delegate=yes;\n"
         "  - as root: mkdir /sys/fs/cgroup/nerve, chown it (and its cgroup.procs, cgroup.subtree_control, "
         "cgroup.threads) to the user, and start nerved --backend cgroup --cgroup-root /nerve.";
}

std::string no_backend(const std::string& no_manager, const std::string& refusal, HostKind host) {
  return "no run can be contained here: " + no_manager + ", and the cgroup backend cannot take a subtree: " + refusal +
         ".\nThe fix on this host (" + host_name(host) + "): " + host_fix(host) +
         ".\nOn other hosts, one of:\n" + subtree_fixes();
}

std::string systemd_unit_of(const std::string& cgroup) {
  std::string unit;
  std::size_t start = 1;
  while (start < cgroup.size()) {
    std::size_t end = cgroup.find('/', start);
    std::string part = cgroup.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (is_systemd_name(part)) unit = cgroup.substr(0, end);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return unit;
}

Result<Subtree> choose_subtree(const SubtreeFacts& f, const std::string& requested, bool delegated) {
  if (f.mount.empty()) return refused("no cgroup2 hierarchy is mounted (see /proc/self/mountinfo)");
  if (f.read_only)
    return refused("the cgroup2 mount " + f.mount + " is read-only, so no cgroup can be made for a run");
  // A nerved started again where the last one settled (<root>/supervisor) takes that root again.
  std::string own = f.own_cgroup;
  if (own.ends_with(std::string("/") + kSupervisorLeaf)) own = own.substr(0, own.rfind('/'));
  if (own.empty()) own = "/";
  Subtree s{as_cgroup(f.mount, requested.empty() ? own : requested),
            requested.empty() ? "nerved's own cgroup" : "--cgroup-root " + requested};
  if (s.root.empty())
    return refused("--cgroup-root " + quote_value(requested) + " is neither a cgroup path (/NAME) nor a folder under " + f.mount);
  if (requested.empty() && s.root == "/" && f.initial_namespace)
    return refused("nerved is in the root cgroup of the machine's own cgroup namespace, and the cgroup backend does not "
                   "take the whole machine unasked: make a folder for it (mkdir " + f.mount +
                   "/nerve) and start nerved --backend cgroup --cgroup-root /nerve");
  std::string folder = full(f, s.root);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return refused("cgroup " + s.root + " (" + folder + ") does not exist: make it first (nerve takes a subtree "
                   "it was given, it does not make one)");
  for (const char* file : {"", "/cgroup.procs", "/cgroup.subtree_control"})
    if (::access((folder + file).c_str(), W_OK) != 0)
      return refused("cgroup " + s.root + " is not delegated to this user: " + folder + file +
                     " cannot be written (chown the folder and its cgroup.procs, cgroup.subtree_control and "
                     "cgroup.threads to the user, as systemd's Delegate=yes does)");
  if (std::string unit = systemd_unit_of(s.root); !unit.empty() && !delegated) {
    bool marked = false;
    for (std::string at = s.root; !marked && at.size() >= unit.size(); at = at.substr(0, at.rfind('/')))
      marked = marked_delegated(full(f, at));
    if (!marked)
      return refused("cgroup " + s.root + " is in the tree systemd manages (" + unit +
                     ") and systemd did not delegate it (no user.delegate mark): run nerved in a unit with "
                     "Delegate=yes, or pass --cgroup-delegated if its admin delegated it");
  }
  return s;
}

}  // namespace nerve
