// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/owner_reaps.h"

#include "run/run_log.h"

namespace nerve {

void OwnerReaps::watch(const Record& record) {
  if (record.keep || record.state != RunState::Running) return;
  if (record.owner.kind == OwnerKind::None) {
    log_run(spdlog::level::warn, record, "it has no owner (the launcher's parent was pid 1 or the user manager, which never go away, or had gone); it runs until reaped");
    return;
  }
  owners_.watch(record.run, record.owner, [this, record] {
    log_run(spdlog::level::info, record, describe(record.owner) + " is gone; reaping the run");
    reap_run_(record.run, record.attempt);
  });
}

}  // namespace nerve
