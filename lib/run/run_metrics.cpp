// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/run_metrics.h"

#include "base/self_stats.h"

namespace nerve {

namespace {

// Upper bounds of the histograms' buckets. A reap takes milliseconds when the scope stops on TERM,
// the grace (10 s by default) when something ignores it; a start takes milliseconds, seconds when
// the user manager is slow.
const std::vector<double> kReapBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 300};
const std::vector<double> kStartBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
constexpr double kMiB = 1024.0 * 1024.0;
const std::vector<double> kMemoryBounds = {kMiB,        4 * kMiB,        16 * kMiB,        64 * kMiB,
                                           256 * kMiB,  1024 * kMiB,     4 * 1024 * kMiB,  16 * 1024 * kMiB,
                                           64 * 1024 * kMiB};
const std::vector<double> kTasksBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096};

double seconds(std::uint64_t usec) { return static_cast<double>(usec) / 1e6; }

MetricFamily family(const char* name, MetricType type, const char* help) { return {name, type, help, {}}; }

}  // namespace

RunMetrics::RunMetrics(const RunStore& store, Labels labels, std::string version)
    : store_(store),
      labels_(std::move(labels)),
      version_(std::move(version)),
      reap_seconds_(kReapBounds),
      memory_peak_bytes_(kMemoryBounds),
      tasks_peak_(kTasksBounds) {
  for (auto m : {StartMethod::Contain, StartMethod::Launch}) {
    start_seconds_.emplace(m, Histogram(kStartBounds));
    starts_[{m, true}] = 0;
    starts_[{m, false}] = 0;
  }
}

void RunMetrics::receipt_written(const Receipt& r) {
  ++reaps_[{r.outcome, r.cause.value_or(Cause::Reaped)}];
  reap_seconds_.observe(seconds(r.duration_usec));
  if (!is_final(r.outcome) || !r.usage) return;
  const Usage& u = *r.usage;
  cpu_user_seconds_ += seconds(u.cpu_user_usec.value_or(0));
  cpu_system_seconds_ += seconds(u.cpu_system_usec.value_or(0));
  io_read_bytes_ += u.io_read_bytes.value_or(0);
  io_write_bytes_ += u.io_write_bytes.value_or(0);
  oom_kills_ += u.oom_kills.value_or(0);
  if (u.memory_peak_bytes) memory_peak_bytes_.observe(static_cast<double>(*u.memory_peak_bytes));
  if (u.tasks_peak) tasks_peak_.observe(static_cast<double>(*u.tasks_peak));
}

void RunMetrics::start_answered(StartMethod method, bool started, std::chrono::nanoseconds took) {
  ++starts_[{method, started}];
  if (started) start_seconds_.at(method).observe(std::chrono::duration<double>(took).count());
}

std::vector<MetricFamily> RunMetrics::families() const {
  std::vector<MetricFamily> out;
  add_daemon(out);
  add_run_gauges(out);
  add_reaps(out);
  add_launches(out);
  add_usage(out);
  return out;
}

void RunMetrics::add_daemon(std::vector<MetricFamily>& out) const {
  auto info = family("nerve_build_info", MetricType::Gauge, "nerved's version; always 1");
  info.add({{"version", version_}}, 1);
  out.push_back(std::move(info));
  SelfStats s = read_self_stats();
  auto gauge = [&](const char* name, MetricType type, const char* help, auto value) {
    if (!value) return;
    auto f = family(name, type, help);
    f.add({}, static_cast<double>(*value));
    out.push_back(std::move(f));
  };
  gauge("nerve_daemon_start_time_seconds", MetricType::Gauge,
        "When nerved started, in seconds since the epoch (its counters count from then)", s.start_time_seconds);
  gauge("nerve_daemon_open_fds", MetricType::Gauge, "File descriptors nerved has open", s.open_fds);
  gauge("nerve_daemon_max_fds", MetricType::Gauge, "nerved's limit of open file descriptors (RLIMIT_NOFILE)",
        s.max_fds);
  gauge("nerve_daemon_resident_memory_bytes", MetricType::Gauge, "nerved's resident memory", s.resident_bytes);
  gauge("nerve_daemon_cpu_seconds", MetricType::Counter, "CPU time nerved has used, user and system",
        s.cpu_seconds);
}

void RunMetrics::add_run_gauges(std::vector<MetricFamily>& out) const {
  std::map<std::string, std::uint64_t> states;
  for (const auto& [value, name] : string_table(RunState{})) states[std::string(name)] = 0;
  states["unreadable"] = 0;
  std::uint64_t retries = 0;
  for (const auto& run : store_.in_memory()) {
    auto record = store_.load(run);
    if (!record || !*record) {
      ++states["unreadable"];
      continue;
    }
    ++states[to_string((*record)->state)];
    if ((*record)->state != RunState::Reaping) continue;
    auto receipt = store_.known_receipt_summary(run);
    if (receipt && receipt->file == ReceiptFile::Present && receipt->outcome == Outcome::PendingRetry) ++retries;
  }
  auto runs = family("nerve_runs", MetricType::Gauge,
                     "Runs whose record nerved holds, by the record's state (reaped ones until they are forgotten)");
  for (const auto& [state, n] : states) runs.add({{"state", state}}, static_cast<double>(n));
  out.push_back(std::move(runs));
  auto pending = family("nerve_reap_retries_pending", MetricType::Gauge,
                        "Runs whose last reap ended pending_retry: nerved tries again (doubling delays)");
  pending.add({}, static_cast<double>(retries));
  out.push_back(std::move(pending));
}

void RunMetrics::add_reaps(std::vector<MetricFamily>& out) const {
  auto reaps = family("nerve_reaps", MetricType::Counter,
                      "Reaps that wrote a receipt since nerved started, by the receipt's outcome and cause "
                      "(a pending_retry and its retry are two)");
  for (const auto& [key, n] : reaps_)
    reaps.add({{"outcome", to_string(key.first)}, {"cause", to_string(key.second)}}, static_cast<double>(n));
  out.push_back(std::move(reaps));
  auto latency = family("nerve_reap_duration_seconds", MetricType::Histogram,
                        "How long each reap since nerved started took, from its start to its receipt");
  reap_seconds_.add_to(latency, {});
  out.push_back(std::move(latency));
}

void RunMetrics::add_launches(std::vector<MetricFamily>& out) const {
  auto launches = family("nerve_launches", MetricType::Counter,
                       "Contain and Launch calls answered since nerved started, by method and result "
                       "(started, or error: refused or failed)");
  for (const auto& [key, n] : starts_)
    launches.add({{"method", to_string(key.first)}, {"result", key.second ? "started" : "error"}},
               static_cast<double>(n));
  out.push_back(std::move(launches));
  auto latency = family("nerve_launch_duration_seconds", MetricType::Histogram,
                        "How long each Contain or Launch that started its run took since nerved started, from "
                        "the call's arrival to its answer (the command contained and free to run)");
  for (const auto& [method, h] : start_seconds_) h.add_to(latency, {{"method", to_string(method)}});
  out.push_back(std::move(latency));
}

void RunMetrics::add_usage(std::vector<MetricFamily>& out) const {
  auto cpu = family("nerve_run_cpu_seconds", MetricType::Counter,
                    "CPU time of the runs reaped since nerved started (final receipts' usage), by mode");
  cpu.add({{"mode", "user"}}, cpu_user_seconds_);
  cpu.add({{"mode", "system"}}, cpu_system_seconds_);
  out.push_back(std::move(cpu));
  auto counter = [&](const char* name, const char* help, std::uint64_t value) {
    auto f = family(name, MetricType::Counter, help);
    f.add({}, static_cast<double>(value));
    out.push_back(std::move(f));
  };
  counter("nerve_run_io_read_bytes", "Bytes read by the runs reaped since nerved started (io.stat)", io_read_bytes_);
  counter("nerve_run_io_written_bytes", "Bytes written by the runs reaped since nerved started (io.stat)",
          io_write_bytes_);
  counter("nerve_run_oom_kills", "OOM kills in the runs reaped since nerved started (memory.events)", oom_kills_);
  auto memory = family("nerve_run_memory_peak_bytes", MetricType::Histogram,
                       "Peak memory of each run reaped since nerved started (memory.peak)");
  memory_peak_bytes_.add_to(memory, {});
  out.push_back(std::move(memory));
  auto tasks = family("nerve_run_tasks_peak", MetricType::Histogram,
                      "Peak number of tasks of each run reaped since nerved started (pids.peak)");
  tasks_peak_.add_to(tasks, {});
  out.push_back(std::move(tasks));
}

}  // namespace nerve
