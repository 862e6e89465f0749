// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ctl/receipt.h"

#include "ctl/output.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

namespace nerve::ctl {

namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;

// A figure of a receipt's usage: nullopt when the kernel did not offer it (null or absent).
std::optional<double> figure(const json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number()) return std::nullopt;
  return usage[key].get<double>();
}

void print_cpu(const json& u) {
  auto user = figure(u, "cpu_user_usec"), sys = figure(u, "cpu_system_usec");
  if (user && sys)
    std::printf("  cpu:           %.1f s user, %.1f s system\n", *user / 1e6, *sys / 1e6);
  else
    std::printf("  cpu:           n/a\n");
}

void print_memory(const json& u) {
  if (auto peak = figure(u, "memory_peak_bytes"))
    std::printf("  memory peak:   %.1f MiB\n", *peak / kMiB);
  else
    std::printf("  memory peak:   n/a (no memory controller)\n");
  if (auto oom = figure(u, "oom_kills")) std::printf("  oom kills:     %.0f\n", *oom);
}

void print_tasks_and_io(const json& u) {
  if (auto tasks = figure(u, "tasks_peak"))
    std::printf("  tasks peak:    %.0f\n", *tasks);
  else
    std::printf("  tasks peak:    n/a (no pids controller)\n");
  auto rd = figure(u, "io_read_bytes"), wr = figure(u, "io_write_bytes");
  if (rd && wr)
    std::printf("  io:            %.1f MiB read, %.1f MiB written\n", *rd / kMiB, *wr / kMiB);
  else
    std::printf("  io:            n/a (no io controller)\n");
}

void print_receipt_text(const std::string& run, const std::string& outcome, const json& r) {
  std::printf("run %s: %s\n", run.c_str(), outcome.c_str());
  std::printf("  unit:          %s\n", r.value("unit", "").c_str());
  std::printf("  invocation id: %s\n", r.value("invocation_id", "").c_str());
  std::printf("  killed:        %s\n", r.value("killed", false) ? "yes (SIGKILL after the grace)" : "no");
  std::printf("  took:          %.1f ms\n", r.value("duration_usec", 0.0) / 1000.0);
  if (!r.value("error", "").empty()) std::printf("  reason:        %s\n", r.value("error", "").c_str());
  // Scopes the run's processes had asked the user manager for, reaped with it (docs/records.md).
  if (r.contains("escaped") && r["escaped"].is_array())
    for (const auto& e : r["escaped"]) {
      std::string pids;
      for (const auto& p : e.value("pids", json::array())) pids += " " + p.dump();
      std::printf("  escaped:       %s (pids%s)\n", e.value("unit", "").c_str(), pids.c_str());
    }
  print_cause_and_usage(r);
}

}  // namespace

void print_cause_and_usage(const json& r) {
  if (r.contains("cause") && r["cause"].is_string())
    std::printf("  cause:         %s\n", r["cause"].get<std::string>().c_str());
  if (!r.contains("usage") || !r["usage"].is_object()) return;
  const json& u = r["usage"];
  print_cpu(u);
  print_memory(u);
  print_tasks_and_io(u);
  if (!r.value("usage_final", false)) std::printf("  (usage read before the cgroup emptied: a lower bound)\n");
}

int print_receipt(const VerbArgs& a, const std::string& outcome, const std::string& receipt_text) {
  json r = json::parse(receipt_text);
  if (a.json)
    print_json(r, a.json);
  else
    print_receipt_text(a.run, outcome, r);
  if (outcome == "complete" || outcome == "no_scope") return 0;
  if (outcome == "pending_retry") return kExitRetry;
  return kExitError;
}

}  // namespace nerve::ctl
