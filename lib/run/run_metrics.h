// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's metrics (docs/operations.md, "Metrics"): what a fleet's Prometheus collects from each
// nerved, as the families of exposition.h.
//
// Two kinds of figure. Counters and histograms are kept in memory since nerved started, and start
// from zero at each start (Prometheus's rate() expects that of a counter): reaps by outcome and cause,
// reap latency (the receipt's duration_usec) and usage totals, each taken from a receipt when it is
// written (receipt_written, fed by the run store's observer), and Contain/Launch calls by result
// with the latency of those that started (start_answered, fed by the bus layer). Gauges are read
// when the text is made, from the records nerved holds (the source of ListRuns): runs by state,
// reaps waiting for a retry, and nerved's own fds, memory and CPU.
//
// Usage totals count final receipts only: a pending_retry receipt's snapshot is of a cgroup that is
// read again at the retry, and counting both would count its CPU twice.
#pragma once

#include "base/exposition.h"
#include "record/record.h"
#include "record/run_store.h"

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nerve {

// The methods whose latency is measured: the two ways a run starts.
enum class StartMethod { Contain, Launch };
constexpr auto string_table(StartMethod) {
  return std::to_array<Named<StartMethod>>({{StartMethod::Contain, "contain"}, {StartMethod::Launch, "launch"}});
}

class RunMetrics {
 public:
  // 'labels': put on every sample (nerved's: user="NAME", so that the files of several users'
  // nerveds on one host can be collected together); 'version': nerve_build_info's.
  RunMetrics(const RunStore& store, Labels labels, std::string version);

  void receipt_written(const Receipt& receipt);
  // A Contain or Launch was answered: 'started' true when the run's command may run (or runs), else
  // it was refused or failed; 'took' from the call's arrival to its answer.
  void start_answered(StartMethod method, bool started, std::chrono::nanoseconds took);

  // Every family, the gauges read now.
  std::vector<MetricFamily> families() const;
  std::string text(ExpositionFormat format) const { return render_metrics(families(), format, labels_); }

 private:
  void add_daemon(std::vector<MetricFamily>& out) const;
  void add_run_gauges(std::vector<MetricFamily>& out) const;
  void add_reaps(std::vector<MetricFamily>& out) const;
  void add_launches(std::vector<MetricFamily>& out) const;
  void add_usage(std::vector<MetricFamily>& out) const;

  const RunStore& store_;
  Labels labels_;
  std::string version_;
  std::map<std::pair<Outcome, Cause>, std::uint64_t> reaps_;
  Histogram reap_seconds_;
  std::map<std::pair<StartMethod, bool>, std::uint64_t> starts_;
  std::map<StartMethod, Histogram> start_seconds_;
  double cpu_user_seconds_ = 0, cpu_system_seconds_ = 0;
  std::uint64_t io_read_bytes_ = 0, io_write_bytes_ = 0, oom_kills_ = 0;
  Histogram memory_peak_bytes_;
  Histogram tasks_peak_;
};

}  // namespace nerve
