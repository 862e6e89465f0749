// SPDX-License-Identifier: LGPL-2.1-or-later
// What the lifecycle operations need from the outside world, in one bundle. Each member is an
// interface (or the run store) so unit tests can replace systemd, the cgroup tree and the clock.
#pragma once

#include "system/cgroups.h"
#include "system/event_loop.h"
#include "system/holders.h"
#include "system/owners.h"
#include "record/record.h"
#include "record/run_store.h"
#include "system/systemd.h"

#include <string>

namespace nerve {

struct Deps {
  Systemd& systemd;
  Cgroups& cgroups;
  Timers& timers;
  RunStore& store;
  OwnerWatch& owners;
  std::string boot_id;
  // Why containment cannot work on this machine (e.g. no cgroup2), or "". Contain then refuses.
  std::string unavailable;
  // The holders of scopes (holders.h). nerved always has them, and a contain that cannot have its
  // holder and leaves refuses (contain.h). Null only in unit tests of the logic that predates leaves:
  // their scopes get none and are reaped as records of before leaves are (reaper.h).
  Holders* holders = nullptr;
  // The backend `systemd` is (nerved/backend.h): written into every record, and a record of the other
  // backend is not reaped by this one (reap_decision.h).
  BackendKind backend = BackendKind::Systemd;
};

}  // namespace nerve
