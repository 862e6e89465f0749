// SPDX-License-Identifier: LGPL-2.1-or-later
#include "results.h"
#include "rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace bench {

namespace {

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& s, double p) {
  std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size())));
  return s[std::clamp<std::size_t>(rank, 1, s.size()) - 1];
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return b;
}

}  // namespace

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.n = v.size();
  double mid = v[(v.size() - 1) / 2], mid2 = v[v.size() / 2];
  s.median = (mid + mid2) / 2;
  s.p90 = percentile(v, 0.9);
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return s;
}

void Results::add(const std::string& row, const std::string& side, const std::string& column, double value) {
  std::lock_guard lock(mu_);
  series_[{row, side, column}].push_back(value);
}

void Results::note(const std::string& key, nlohmann::json value) {
  std::lock_guard lock(mu_);
  notes_[key] = std::move(value);
}

const std::vector<double>* Results::find(const std::string& row, const std::string& side,
                                         const std::string& column) const {
  auto it = series_.find({row, side, column});
  return it == series_.end() || it->second.empty() ? nullptr : &it->second;
}

nlohmann::json Results::to_json() const {
  std::lock_guard lock(mu_);
  nlohmann::json series = nlohmann::json::array();
  for (const auto& [key, samples] : series_) {
    const auto& [row, side, column] = key;
    const RowDef* def = row_def(row);
    Summary s = summarize(samples);
    series.push_back({{"row", row}, {"side", side}, {"column", column}, {"unit", def ? def->unit : ""},
                      {"n", s.n}, {"median", s.median}, {"p90", s.p90}, {"min", s.min}, {"max", s.max},
                      {"mean", s.mean}, {"samples", samples}});
  }
  return {{"notes", notes_}, {"series", series}};
}

namespace {

// "median (p90)" of a series, or an em dash.
std::string cell(const std::vector<double>* v) {
  if (!v) return "—";
  Summary s = summarize(*v);
  if (s.n == 1) return fmt(s.median);
  return fmt(s.median) + " (" + fmt(s.p90) + ")";
}

std::string ratio(const std::vector<double>* a, const std::vector<double>* b) {
  if (!a || !b) return "—";
  double bm = summarize(*b).median;
  if (bm == 0) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", summarize(*a).median / bm);
  return buf;
}

void compare_table(const Results& r, std::string& out) {
  out += "| what | unit | regime | median (p90) | reference | reference, median (p90) | ratio | target |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const RowDef& d : row_defs()) {
    if (d.growth) continue;
    for (const char* col : d.columns) {
      auto* n = r.find(d.id, "nerve", col);
      if (!n) n = r.find(d.id, "measured", col);  // rows that compare two references
      auto* ref = r.find(d.id, "reference", col);
      if (!n && !ref) continue;
      out += std::string("| ") + d.what + " | " + d.unit + " | " + col + " | " + cell(n) + " | " +
             (d.reference[0] ? d.reference : "—") + " | " + cell(ref) + " | " + ratio(n, ref) + " | " + d.target +
             " |\n";
    }
  }
}

void growth_table(const Results& r, std::string& out) {
  out += "| what | unit | sizes (0 / 1x / 10x) | 0 | 1x | 10x | 10x / 1x | target |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const RowDef& d : row_defs()) {
    if (!d.growth) continue;
    auto* z = r.find(d.id, "nerve", "0");
    auto* one = r.find(d.id, "nerve", "1x");
    auto* ten = r.find(d.id, "nerve", "10x");
    if (!z && !one && !ten) continue;
    out += std::string("| ") + d.what + " | " + d.unit + " | " + d.reference + " | " + cell(z) + " | " + cell(one) +
           " | " + cell(ten) + " | " + ratio(ten, one) + " | " + d.target + " |\n";
  }
}

}  // namespace

std::string Results::to_markdown() const {
  std::lock_guard lock(mu_);
  std::string out;
  if (notes_.contains("machine")) {
    const auto& m = notes_["machine"];
    out += "Measured " + m.value("date", std::string()) + " on " + std::to_string(m.value("nproc", 0)) + " CPUs (" +
           m.value("cpu", std::string()) + "), kernel " + m.value("kernel", std::string()) + ", systemd " +
           m.value("systemd", std::string()) + "; load average " + m.value("loadavg_at_start", std::string()) +
           " at the start, " + notes_.value("loadavg_at_end", std::string()) + " at the end; " +
           std::to_string(notes_["config"].value("iterations", 0)) +
           " samples per row, regime and contender. Times: median (p90).\n\n";
  }
  compare_table(*this, out);
  out += "\n";
  growth_table(*this, out);
  if (notes_.contains("errors")) out += "\n**Scenarios that failed** (their rows are missing or partial): " +
                                        notes_["errors"].dump() + "\n";
  if (notes_.contains("leaks")) out += "\nLeaks after the throughput phases (scopes, cgroups, processes left): " +
                                       notes_["leaks"].dump() + "\n";
  return out;
}

}  // namespace bench
