// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/run_queries.h"

#include "base/errors.h"
#include "base/run_id.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace nerve {

using nlohmann::json;

namespace {
// What the cgroup tree says of the record's cgroup path, for a live state without systemd; populated
// and pids go into 'live' when it is still the recorded cgroup (same path, same id).
struct Tree {
  enum Kind { NotRecorded, Gone, Unreadable, Found } kind = NotRecorded;
  bool ours = false;       // the recorded cgroup id (else a later cgroup of the same unit name)
  bool populated = false;
};

Tree add_cgroup_state(const Record& record, Cgroups& cgroups, json& live) {
  if (record.cgroup.empty()) return {};
  auto id = cgroups.id(record.cgroup);
  if (!id) return {Tree::Gone};
  bool ours = *id == record.cgroup_id;
  auto populated = cgroups.populated(record.cgroup);
  if (ours) {
    live["populated"] = !populated || *populated;  // unreadable is not known to be empty
    live["pids"] = cgroups.pids(has_leaf(record) ? record.leaf : record.cgroup);  // the run's processes, not its holder
  }
  if (!populated) return {Tree::Unreadable};
  return {Tree::Found, ours, *populated};
}

// What systemd says of the recorded unit (an answer, or NoSuchUnit).
void add_unit_state(const Record& record, const Result<UnitState>& l, json& live) {
  live["source"] = "systemd";
  if (!l) return;  // no such unit: known stays false
  live["known"] = true;
  live["active_state"] = l->active_state;
  live["ours"] = !record.invocation_id.empty() && l->invocation_id == record.invocation_id;
}

// Without systemd's answer, what the kernel can tell: systemd makes a scope's cgroup
// when the unit starts and removes it when it stops, so the recorded cgroup with the recorded id
// means the unit of that invocation is loaded and ours (another id: a later unit of the same name),
// and populated means it is active; gone means no unit of that invocation is. The unit's state is
// unknown only when the tree cannot tell either.
void add_tree_state(const Tree& tree, const Error& systemd, json& live) {
  live["error"] = systemd.message;
  if (tree.kind == Tree::NotRecorded || tree.kind == Tree::Unreadable) {
    live["unknown"] = true;
    return;
  }
  live["source"] = "cgroup tree";
  if (tree.kind == Tree::Gone) return;
  live["known"] = true;
  live["ours"] = tree.ours;
  live["active_state"] = tree.populated ? "active" : "inactive";
}
}  // namespace

void RunQueries::status_json(const std::string& run, Done<std::string> done) {
  if (auto valid = check_run_id(run); !valid) return done(valid.error());
  auto record = records_.load_existing(run);
  if (!record) return done(record.error());
  json out;
  out["record"] = json::parse(to_json_text(*record));
  out["receipt"] = nullptr;
  if (auto r = deps_.store.load_receipt(run); !r)
    out["receipt_error"] = r.error().message;
  else if (*r)
    out["receipt"] = json::parse(to_json_text(**r));
  // The receipts of earlier attempts that a relaunch ended; absent when there are none.
  if (auto earlier = deps_.store.superseded_receipts(run); earlier && !earlier->empty()) {
    json list = json::array();
    for (const auto& e : *earlier) list.push_back(json::parse(to_json_text(e)));
    out["superseded_receipts"] = list;
  }
  json live = {{"known", false}, {"active_state", ""}, {"ours", false}, {"populated", false},
               {"pids", json::array()},  {"source", "none"}};
  if (record->boot_id != deps_.boot_id || record->unit.empty()) {
    out["live"] = live;
    return done(out.dump());
  }
  // The cgroup tree is read now; the unit's state comes from systemd within a short budget, or at once
  // from the tree while systemd is late (live_lookup.h): a stalled user manager never delays GetRun.
  Tree tree = add_cgroup_state(*record, deps_.cgroups, live);
  lookup_.ask(record->unit, [rec = *record, tree, out, live, done](Result<UnitState> l) mutable {
    if (l || is_no_such_unit(l.error()))
      add_unit_state(rec, l, live);
    else
      add_tree_state(tree, l.error(), live);
    out["live"] = live;
    done(out.dump());
  });
}

Result<std::vector<RunSummary>> RunQueries::list() {
  // From memory (run_store.h): every run whose record nerved holds, no file read but the receipts
  // not asked for before (once each).
  std::vector<RunSummary> out;
  for (const auto& run : deps_.store.in_memory()) {
    RunSummary s{run, "", "", ""};
    auto record = deps_.store.load(run);
    auto receipt = deps_.store.receipt_summary(run);
    if (!record || !*record || receipt.file == ReceiptFile::Unreadable) {
      s.state = "unreadable";
      spdlog::warn("run {}: {}, ignoring", run, !record ? record.error().message : "its receipt cannot be read");
    } else {
      s.state = to_string((*record)->state);
      s.unit = (*record)->unit;
      if (receipt.file == ReceiptFile::Present) s.outcome = to_string(receipt.outcome);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<void> RunQueries::exists(const std::string& run) {
  if (auto valid = check_run_id(run); !valid) return valid;
  auto record = records_.load_existing(run);
  if (!record) return record.error();
  return {};
}

}  // namespace nerve
