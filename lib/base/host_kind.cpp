// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/host_kind.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

namespace nerve {

namespace {
bool exists(const char* path) { return ::access(path, F_OK) == 0; }

bool osrelease_is_wsl() {
  std::ifstream in("/proc/sys/kernel/osrelease");
  std::string release;
  std::getline(in, release);
  std::transform(release.begin(), release.end(), release.begin(), [](unsigned char c) { return std::tolower(c); });
  return release.find("microsoft") != std::string::npos || release.find("wsl") != std::string::npos;
}

// As root, a folder of its own for the user: what works on any host with a writable cgroup2 mount.
constexpr const char* kFolderFix =
    "as root, give nerve a folder of its own: mkdir /sys/fs/cgroup/nerve; chown USER "
    "/sys/fs/cgroup/nerve /sys/fs/cgroup/nerve/cgroup.procs /sys/fs/cgroup/nerve/cgroup.subtree_control "
    "/sys/fs/cgroup/nerve/cgroup.threads; then start nerved --backend cgroup --cgroup-root /nerve";
}  // namespace

HostClues read_host_clues() {
  HostClues c;
  c.kubernetes = std::getenv("KUBERNETES_SERVICE_HOST") || exists("/var/run/secrets/kubernetes.io/serviceaccount");
  c.podman = exists("/run/.containerenv");
  c.docker = exists("/.dockerenv");
  c.wsl = std::getenv("WSL_DISTRO_NAME") || osrelease_is_wsl();
  c.systemd_booted = exists("/run/systemd/system");
  c.openrc = exists("/run/openrc");
  return c;
}

HostKind host_kind(const HostClues& c) {
  if (c.kubernetes) return HostKind::Kubernetes;
  if (c.podman) return HostKind::Podman;
  if (c.docker) return HostKind::Docker;
  if (c.wsl) return HostKind::Wsl;
  if (c.systemd_booted) return HostKind::SystemdHost;
  if (c.openrc) return HostKind::OpenRc;
  return HostKind::Other;
}

std::string host_name(HostKind kind) {
  switch (kind) {
    case HostKind::Kubernetes: return "a Kubernetes pod";
    case HostKind::Podman: return "a podman container";
    case HostKind::Docker: return "a Docker container";
    case HostKind::Wsl: return "WSL";
    case HostKind::SystemdHost: return "a host booted with systemd";
    case HostKind::OpenRc: return "an OpenRC host";
    case HostKind::Other: break;
  }
  return "a host without systemd";
}

std::string host_fix(HostKind kind) {
  switch (kind) {
    case HostKind::Kubernetes:
      return "give the pod a writable cgroup tree: containerd's runtime option cgroup_writable = true "
             "(containerd 2.1 or later), or CRI-O's cgroup-writable annotation on the pod";
    case HostKind::Podman: return "run the container with podman run --systemd=always (or --security-opt unmask=/sys/fs/cgroup)";
    case HostKind::Docker:
      return "run the container with docker run --privileged (on a cgroup v2 host it gets a private, writable cgroup "
             "namespace)";
    case HostKind::SystemdHost:
      return "let your user manager run without a login: loginctl enable-linger USER (or log in); a system service "
             "runs nerved in its unit with Delegate=yes";
    case HostKind::Wsl:
    case HostKind::OpenRc:
    case HostKind::Other: break;
  }
  return kFolderFix;
}

}  // namespace nerve
