// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl status RUN`: GetRun's record, live state and receipt; exit codes as LSB and systemctl status.
#include "ctl/full/client.h"
#include "ctl/output.h"
#include "ctl/receipt.h"
#include "ctl/verb_handlers.h"

#include "base/errors.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

namespace nerve::ctl {

namespace {

using nlohmann::json;

// The unit's state as GetRun tells it, and where from when systemd did not answer in time:
// "active (cgroup tree; systemd did not answer within 20 ms)", "unknown (...)".
std::string live_state(const json& live) {
  std::string error = live.value("error", "");
  if (live.value("unknown", false)) return "unknown (" + error + ")";
  std::string state = live.value("known", false) ? live.value("active_state", "") : "no unit";
  if (live.value("source", "") == "cgroup tree") state += " (cgroup tree; " + error + ")";
  return state;
}

// GetRun's answer, or nullopt (and the message on stderr) when nerved knows no such run.
std::optional<json> get_run(Context& ctx, const std::string& run) {
  try {
    return json::parse(ctx.client().GetRun(run));
  } catch (const sdbus::Error& e) {
    if (e.getName() != error::NoSuchRun) throw;
    std::fprintf(stderr, "nervectl status: %s [%s]\n", e.getMessage().c_str(), e.getName().c_str());
    return std::nullopt;
  }
}

void print_live(const json& live) {
  bool known = live.value("known", false);
  std::printf("  live:          %s%s\n", live_state(live).c_str(),
              known && !live.value("ours", false) ? " (not ours: another invocation)" : "");
  std::string pids;
  for (auto& p : live["pids"]) pids += (pids.empty() ? "" : " ") + std::to_string(p.get<int>());
  std::printf("  processes:     %s\n", pids.empty() ? "none" : pids.c_str());
}

void print_status(const std::string& run, const json& s) {
  const json& rec = s["record"];
  std::printf("run %s (attempt %u): %s\n", run.c_str(), rec.value("attempt", 0u), rec.value("state", "").c_str());
  std::printf("  unit:          %s\n", rec.value("unit", "").c_str());
  std::printf("  invocation id: %s\n", rec.value("invocation_id", "").c_str());
  std::printf("  cgroup:        %s\n", rec.value("cgroup", "").c_str());
  std::printf("  boot id:       %s\n", rec.value("boot_id", "").c_str());
  print_live(s["live"]);
  const json& receipt = s["receipt"];
  if (!receipt.is_object()) return;
  std::string error = receipt.value("error", "");
  std::printf("  receipt:       %s%s\n", receipt.value("outcome", "").c_str(),
              error.empty() ? "" : (" (" + error + ")").c_str());
  print_cause_and_usage(receipt);
}

// Running as systemctl means it: the record says running and the scope is live, ours and active.
bool is_running(const json& s) {
  const json& live = s["live"];
  return s["record"].value("state", "") == "running" && live.value("known", false) && live.value("ours", false) &&
         live.value("active_state", "") == "active";
}

}  // namespace

// Exit codes as LSB and systemctl status: 0 running, 3 not running (any other state, or its scope is
// gone), 4 no such run, or its unit's state is unknown (neither systemd in time nor the cgroup tree
// could tell). A cgroup-tree answer counts as systemd's would: active and ours is running.
int status(Context& ctx, const VerbArgs& a) {
  auto s = get_run(ctx, a.run);
  if (!s) return kExitNoSuchRun;
  if (a.json)
    print_json(*s, a.json);
  else
    print_status(a.run, *s);
  if (is_running(*s)) return 0;
  // A running record whose unit's state neither systemd nor the cgroup tree told: not known either way.
  bool unknown = (*s)["record"].value("state", "") == "running" && (*s)["live"].value("unknown", false);
  return unknown ? kExitStatusUnknown : kExitNotRunning;
}

}  // namespace nerve::ctl
