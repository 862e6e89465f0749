// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rows.h"

namespace bench {

namespace {

const std::vector<const char*> kRegimes{"back to back", "warm", "cold"};
const std::vector<const char*> kConcurrency{kClients4, kClients16};

std::vector<RowDef> make() {
  return {
      {"cli_launch", "`nervectl launch R -- true`, whole process", "ms",
       "`systemd-run --user --scope -q true`", "≤ 0.6 (b2b, warm), ≤ 0.7 (cold)", kRegimes},
      {"cli_launch_wait", "`nervectl launch --wait R -- true`, whole process", "ms",
       "`systemd-run --user --scope -q true`", "", kRegimes},
      {"engine_launch", "engine `Launch`, call to reply", "ms",
       "raw StartTransientUnit of a held child to its exec", "≤ 1.6 (warm), ≤ 1.0 (cold)", kRegimes},
      {"engine_reap", "engine `Reap` of a settled 22-process tree", "ms",
       "raw StopUnit until the cgroup is empty", "≤ 1.3", kRegimes},
      {"private_launch", "raw StartTransientUnit of a held child to its exec, via the private socket", "ms",
       "the same through dbus-daemon (engine `Launch`'s reference)", "", kRegimes},
      {"private_stop", "raw StopUnit until the cgroup is empty, via the private socket", "ms",
       "the same through dbus-daemon (engine `Reap`'s reference)", "", kRegimes},
      {"cli_reap", "`nervectl reap R` of a 22-process tree, whole process", "ms",
       "`systemctl --user stop UNIT`", "≤ 0.6", kRegimes},
      {"engine_cancel", "engine `Cancel` (SIGHUP) of a settled 22-process tree", "ms",
       "raw KillUnit(all, SIGHUP) until the cgroup is empty", "", kRegimes},
      {"throughput", "launch+reap throughput, engine API", "runs/s", "raw start+stop jobs, same concurrency",
       "≥ 0.8", kConcurrency},
      {"cpu_nerved", "nerved CPU per launch+reap (engine API)", "ms",
       "the user manager's CPU per raw start+stop", "< 1.0", kConcurrency},
      {"cpu_manager", "the user manager's CPU per engine launch+reap", "ms",
       "the user manager's CPU per raw start+stop", "", kConcurrency},
      {"cpu_bus", "dbus-daemon CPU per engine launch+reap", "ms", "dbus-daemon CPU per raw start+stop", "",
       kConcurrency},
      {"idle_wakeups", "nerved context switches in 5 s idle", "count", "", "0 (quiet)",
       {"quiet", "unrelated bus clients + systemd jobs"}},
      {"startup_name", "startup: bus name owned, from exec", "ms", "0 / 1,000 / 10,000 records, 100 live",
       "≤ 50 at any size", {}, true},
      {"startup_reconciled", "startup: all records reconciled, from exec", "ms",
       "0 / 1,000 / 10,000 records, 100 live", "≤ 500 at 10,000", {}, true},
      {"startup_rss", "RSS after startup", "MB", "0 / 1,000 / 10,000 records, 100 live", "< 15 at 10,000", {},
       true},
      {"records_launch", "engine `Launch` (warm) with that many records", "ms",
       "0 / 1,000 / 10,000 records, 100 live", "constant", {}, true},
      {"live_rss", "RSS with live runs", "MB", "0 / 100 / 1,000 live runs", "< 20 at 1,000", {}, true},
  };
}

}  // namespace

const std::vector<RowDef>& row_defs() {
  static const std::vector<RowDef> rows = make();
  return rows;
}

const RowDef* row_def(const std::string& id) {
  for (const auto& r : row_defs())
    if (id == r.id) return &r;
  return nullptr;
}

}  // namespace bench
