#include "run_queries.h"

#include "defaults.h"
#include "errors.h"
#include "run_id.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <memory>

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

const char* const error_late = "nerve.Systemd.Late";

// What systemd says of the recorded unit. Without an answer (an error, or none in time) the unit's
// state is unknown: "unknown" is true and "error" says why; known/active_state/ours then say nothing.
void add_unit_state(const Record& record, const Result<UnitState>& l, json& live) {
  if (l) {
    live["known"] = true;
    live["active_state"] = l->active_state;
    live["ours"] = !record.invocation_id.empty() && l->invocation_id == record.invocation_id;
  } else if (!is_no_such_unit(l.error())) {
    live["unknown"] = true;
    live["error"] = l.error().message;
  }
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
  // What needs no systemd is read now; the unit's state comes from a lookup with a short deadline
  // (issue 8 item 6: a stalled user manager never delays GetRun). A late answer is dropped.
  add_cgroup_state(*record, deps_.cgroups, live);
  auto answer = std::make_shared<ReplyOnce<UnitState>>([rec = *record, out, live, done](Result<UnitState> l) mutable {
    add_unit_state(rec, l, live);
    out["live"] = live;
    done(out.dump());
  });
  // A manager that answered its last lookup gets kLiveStateFirstDeadline; once one lookup was late, the
  // next get kLiveStateDeadline, until systemd answers one again (even late).
  auto wait = systemd_late_ ? kLiveStateDeadline : kLiveStateFirstDeadline;
  TimerId timer = deps_.timers.add_timer(wait, [this, answer, wait] {
    systemd_late_ = true;
    (*answer)(Error{error_late, "systemd did not answer within " + std::to_string(wait.count()) + " ms"});
  });
  deps_.systemd.lookup(record->unit, [this, answer, timer](Result<UnitState> l) {
    if (l || is_no_such_unit(l.error())) systemd_late_ = false;
    if (!answer->pending()) return;
    deps_.timers.cancel_timer(timer);
    (*answer)(std::move(l));
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
