// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nerved/backend.h"

#include "base/bus_names.h"
#include "system/cgroup_backend.h"
#include "base/cgroup_delegation.h"
#include "system/cgroup_tree.h"
#include "system/systemd_link.h"

#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <stdexcept>

namespace nerve {

namespace {

// Whether a user manager answers: its bus name has an owner, or its private socket exists.
bool user_manager_answers(sdbus::IConnection& bus, std::string* why) {
  try {
    auto proxy = sdbus::createProxy(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus");
    bool owned = false;
    proxy->callMethod("NameHasOwner").onInterface("org.freedesktop.DBus").withArguments(std::string(systemd1::kService)).storeResultsTo(owned);
    if (owned) return true;
  } catch (const sdbus::Error& e) {
    *why = "the session bus did not say whether " + std::string(systemd1::kService) + " has an owner (" + e.getMessage() + ")";
  }
  std::string socket = default_private_socket();
  if (!socket.empty() && ::access(socket.c_str(), F_OK) == 0) return true;
  if (why->empty())
    *why = "no user manager answers: " + std::string(systemd1::kService) + " has no owner on the session bus and " +
           (socket.empty() ? std::string("XDG_RUNTIME_DIR is not set") : socket + " does not exist");
  return false;
}

Backend systemd_backend(const DaemonOptions& o, sdbus::IConnection& bus, EventLoop& loop, std::string detail) {
  Backend b;
  b.systemd = std::make_unique<SdbusSystemd>(
      bus, loop, SystemdOptions{.call_timeout = o.systemd_timeout, .bus = parse_systemd_bus(o.systemd_bus)});
  b.kind = BackendKind::Systemd;
  b.detail = std::move(detail);
  return b;
}

// Moves nerved into <root>/supervisor when its cgroup is ROOT (cgroup_delegation.h: no process in an
// inner folder). The cgroup it is in afterwards, or the error.
Result<std::string> settle_supervisor(const SubtreeFacts& f, const std::string& root) {
  if (f.own_cgroup != root) return f.own_cgroup;  // already in its leaf, or elsewhere
  std::string leaf = (root == "/" ? "" : root) + "/" + kSupervisorLeaf;
  std::string folder = f.mount + leaf;
  if (auto made = make_folder(folder); !made) return made.error();
  if (auto moved = write_control(folder + "/cgroup.procs", std::to_string(::getpid())); !moved) return moved.error();
  return leaf;
}

Backend cgroup_backend(const DaemonOptions& o, EventLoop& loop, Cgroups& cgroups, const SubtreeFacts& facts,
                       const Subtree& subtree) {
  auto own = settle_supervisor(facts, subtree.root);
  if (!own)
    throw std::runtime_error("the cgroup backend cannot move nerved into " + subtree.root + "/" + kSupervisorLeaf + ": " +
                             own.error().message);
  Backend b;
  b.systemd = std::make_unique<CgroupBackend>(
      loop, cgroups, CgroupBackendOptions{.mount = facts.mount, .root = subtree.root, .call_timeout = o.systemd_timeout});
  b.kind = BackendKind::Cgroup;
  b.detail = "cgroup subtree " + subtree.root + " (" + subtree.how + "), under " + facts.mount + "; nerved in " + *own;
  return b;
}

}  // namespace

Backend make_backend(const DaemonOptions& o, sdbus::IConnection& bus, EventLoop& loop, Cgroups& cgroups) {
  if (o.backend == "systemd") return systemd_backend(o, bus, loop, "the systemd user manager (--backend systemd)");
  SubtreeFacts facts = read_subtree_facts();
  if (o.backend == "cgroup") {
    auto subtree = choose_subtree(facts, o.cgroup_root, o.cgroup_delegated);
    if (!subtree) throw std::runtime_error("--backend cgroup: " + subtree.error().message);
    return cgroup_backend(o, loop, cgroups, facts, *subtree);
  }
  std::string no_manager;
  if (user_manager_answers(bus, &no_manager))
    return systemd_backend(o, bus, loop, "the systemd user manager (--backend auto: it answers)");
  auto subtree = choose_subtree(facts, o.cgroup_root, o.cgroup_delegated);
  if (subtree) {
    Backend b = cgroup_backend(o, loop, cgroups, facts, *subtree);
    b.detail += " (--backend auto: " + no_manager + ")";
    return b;
  }
  // Neither: nerved does not start (never a silent downgrade to process groups).
  throw std::runtime_error(no_backend(no_manager, subtree.error().message, host_kind(read_host_clues())));
}

}  // namespace nerve
