#include "run_queries.h"

#include "errors.h"
#include "run_id.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace nerve {

using nlohmann::json;

namespace {
// What the cgroup tree says of the record's cgroup, if it is still the recorded one.
void add_cgroup_state(const Record& record, Cgroups& cgroups, json& live) {
  if (record.cgroup.empty()) return;
  auto id = cgroups.id(record.cgroup);
  if (!id || *id != record.cgroup_id) return;
  auto populated = cgroups.populated(record.cgroup);
  live["populated"] = !populated || *populated;  // unreadable is not known to be empty
  live["pids"] = cgroups.pids(record.cgroup);
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
  json live = {{"known", false}, {"active_state", ""}, {"ours", false}, {"populated", false}, {"pids", json::array()}};
  if (record->boot_id != deps_.boot_id || record->unit.empty()) {
    out["live"] = live;
    return done(out.dump());
  }
  deps_.systemd.lookup(record->unit, [this, rec = *record, out, live, done](Result<UnitState> l) mutable {
    if (l) {
      live["known"] = true;
      live["active_state"] = l->active_state;
      live["ours"] = !rec.invocation_id.empty() && l->invocation_id == rec.invocation_id;
    } else if (!is_no_such_unit(l.error())) {
      live["error"] = l.error().message;
    }
    add_cgroup_state(rec, deps_.cgroups, live);
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
    if (!record || !*record || receipt.unreadable) {
      s.state = "unreadable";
      spdlog::warn("run {}: {}, ignoring", run, !record ? record.error().message : "its receipt cannot be read");
    } else {
      s.state = to_string((*record)->state);
      s.unit = (*record)->unit;
      if (receipt.present) s.outcome = to_string(receipt.outcome);
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
