// SPDX-License-Identifier: LGPL-2.1-or-later
// Which backend holds nerved's runs (docs/operations.md "Backends"): the systemd user manager's
// transient scopes (systemd.h), or folders of a delegated cgroup2 subtree (cgroup_backend.h).
//
// --backend systemd: the user manager, as before. --backend cgroup: the subtree --cgroup-root names
// (or nerved's own cgroup), taken only as cgroup_subtree.h allows; if it cannot be taken, nerved
// does not start. --backend auto (the default): systemd when a user manager answers (its name
// org.freedesktop.systemd1 has an owner on the session bus, or its private socket is there); else
// the cgroup backend on nerved's own cgroup when that may be taken; else nerved does not start, and
// says why neither works and the fix for this kind of host (host_kind.h): never a silent downgrade.
#pragma once

#include "nerved/daemon_options.h"
#include "record/record.h"
#include "system/cgroups.h"
#include "system/event_loop.h"
#include "system/systemd.h"

#include <memory>
#include <string>

namespace sdbus {
class IConnection;
}

namespace nerve {

struct Backend {
  std::unique_ptr<Systemd> systemd;
  BackendKind kind = BackendKind::Systemd;  // the Backend property (to_string), and every record's "backend"
  std::string detail;       // how it was chosen and where: the BackendDetail property, and the log
};

// Throws std::runtime_error (nerved exits 1 with its text) when --backend cgroup cannot take its
// subtree, and when --backend auto finds neither a user manager nor a subtree.
Backend make_backend(const DaemonOptions& options, sdbus::IConnection& bus, EventLoop& loop, Cgroups& cgroups);

}  // namespace nerve
