// SPDX-License-Identifier: LGPL-2.1-or-later
// What kind of host this is, as far as the one fix for "no user manager and no cgroup tree nerve may
// write" depends on it (docs/operations.md "Backends"): nerved's refusal to start and `nervectl
// doctor` name that fix first, then the others.
#pragma once

#include <string>

namespace nerve {

enum class HostKind { Kubernetes, Podman, Docker, Wsl, SystemdHost, OpenRc, Other };

// What the guess is made from, read by read_host_clues (a unit test gives its own).
struct HostClues {
  bool kubernetes = false;    // KUBERNETES_SERVICE_HOST is set, or a service account is mounted
  bool podman = false;        // /run/.containerenv (podman and buildah write it)
  bool docker = false;        // /.dockerenv
  bool wsl = false;           // /proc/sys/kernel/osrelease names Microsoft or WSL, or WSL_DISTRO_NAME is set
  bool systemd_booted = false;  // /run/systemd/system (sd_booted())
  bool openrc = false;        // /run/openrc
};
HostClues read_host_clues();

// The first clue that holds, in the order above: a pod runs in a container, a container on a host.
HostKind host_kind(const HostClues& clues);

// "Docker container", "WSL", ...: for "on this host (...)".
std::string host_name(HostKind kind);

// The one change that gives nerve a backend on such a host, as a sentence with the commands.
std::string host_fix(HostKind kind);

}  // namespace nerve
