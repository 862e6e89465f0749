// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl list`: every run in two bus calls, whatever their number: ListRuns (run, state, unit,
// outcome; also folders without a readable record) and the ObjectManager's GetManagedObjects (each
// run object's ControlGroup and CreatedAt). The live process count is read from the run's cgroup
// (cgroup.procs), as nerved's GetRun would.
#include "base/timestamps.h"
#include "ctl/full/client.h"
#include "ctl/output.h"
#include "ctl/verb_handlers.h"

#include "base/host.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace nerve::ctl {

namespace {

using nlohmann::json;

struct RunRow {
  std::string run, state, unit, outcome, created_at;
  std::optional<std::size_t> processes;  // nullopt: no run object (no readable record) or no cgroup2
};

// What the run objects say, by run id: (ControlGroup, CreatedAt).
using RunFacts = std::map<std::string, std::pair<std::string, std::string>>;

RunFacts run_facts(Context& ctx) {
  RunFacts facts;
  for (auto& [path, interfaces] : ctx.client().GetManagedObjects()) {
    auto it = interfaces.find("org.nerve.Lifecycle1.Run");
    if (it == interfaces.end() || !it->second.count("Id")) continue;
    auto& p = it->second;
    auto text = [&p](const char* name) { return p.count(name) ? p.at(name).get<std::string>() : std::string(); };
    facts[text("Id")] = {text("ControlGroup"), text("CreatedAt")};
  }
  return facts;
}

std::size_t procs_in(const std::string& folder) {
  std::ifstream procs(folder + "/cgroup.procs");
  std::size_t n = 0;
  for (std::string line; std::getline(procs, line);) n += !line.empty();
  return n;
}

// The number of the run's processes in CGROUP (relative to the cgroup2 root): those in its run/ leaf
// and below when it has one (not the holder, docs/records.md), else in the scope itself; 0 when it is
// gone or not made yet.
std::optional<std::size_t> processes_in(const std::string& cgroup) {
  if (cgroup.empty()) return 0;
  auto root = cgroup_root();
  if (!root) return std::nullopt;
  std::string leaf = *root + cgroup + "/run";
  std::error_code ec;
  if (!std::filesystem::is_directory(leaf, ec)) return procs_in(*root + cgroup);
  std::size_t n = procs_in(leaf);
  for (std::filesystem::recursive_directory_iterator it(leaf, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) n += procs_in(it->path().string());
  return n;
}

std::vector<RunRow> list_rows(Context& ctx) {
  std::vector<RunRow> rows;
  auto runs = ctx.client().ListRuns();
  RunFacts facts = run_facts(ctx);
  for (auto& r : runs) {
    RunRow row{r.get<0>(), r.get<1>(), r.get<2>(), r.get<3>(), "", std::nullopt};
    if (auto f = facts.find(row.run); f != facts.end()) {
      row.processes = processes_in(f->second.first);
      row.created_at = f->second.second;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Colour state_colour(const std::string& state) {
  if (state == "running") return Colour::Green;
  if (state == "failed") return Colour::Red;
  if (state == "launching" || state == "reaping") return Colour::Yellow;
  return Colour::None;
}

Colour outcome_colour(const std::string& outcome) {
  if (outcome == "refused") return Colour::Red;
  if (outcome == "pending_retry") return Colour::Yellow;
  return Colour::None;
}

std::string age_of(const std::string& created_at) {
  auto t = parse_rfc3339(created_at);
  if (!t) return "-";
  return format_age(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() - *t));
}

void print_list_table(const std::vector<RunRow>& rows, bool legend) {
  std::vector<std::vector<Cell>> cells;
  for (const auto& r : rows)
    cells.push_back({{r.run},
                     {r.state, state_colour(r.state)},
                     {r.unit},
                     {r.processes ? std::to_string(*r.processes) : "-"},
                     {age_of(r.created_at)},
                     {r.outcome.empty() ? "-" : r.outcome, outcome_colour(r.outcome)}});
  std::vector<std::string> header;
  if (legend) header = {"RUN", "STATE", "UNIT", "PROCESSES", "AGE", "OUTCOME"};
  std::fputs(format_table(header, cells, colour_wanted(stdout)).c_str(), stdout);
  if (legend) std::printf("\n%zu %s listed.\n", rows.size(), rows.size() == 1 ? "run" : "runs");
}

json rows_json(const std::vector<RunRow>& rows) {
  json out = json::array();
  for (auto& r : rows)
    out.push_back({{"run", r.run},
                   {"state", r.state},
                   {"unit", r.unit},
                   {"processes", r.processes ? json(*r.processes) : json(nullptr)},
                   {"created_at", r.created_at},
                   {"outcome", r.outcome}});
  return out;
}

}  // namespace

int list(Context& ctx, const VerbArgs& a) {
  std::vector<RunRow> rows = list_rows(ctx);
  if (a.json)
    print_json(rows_json(rows), a.json);
  else if (rows.empty()) {
    if (!a.no_legend) std::printf("No runs.\n");
  } else
    print_list_table(rows, !a.no_legend);
  return 0;
}

}  // namespace nerve::ctl
