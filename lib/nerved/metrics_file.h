// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's metrics file, for node_exporter's textfile collector (docs/operations.md, "Metrics"):
// the Prometheus text (format 0.0.4) of RunMetrics, kept current.
//
// The file is replaced atomically, as the collector requires: the text goes into a temporary file in
// the same folder (".NAME.tmp-<random>", which the collector, reading only *.prom, never reads), which
// is then renamed over the file; mode 0644, so that node_exporter's user may read it. A change (a
// record or receipt written, a start answered) asks for a write: at once when the last write is at
// least 'interval' old, else when it will be, so a burst of changes costs one write per interval.
// With no change the file is rewritten every kMetricsRefresh (its gauges of nerved itself and its
// mtime stay fresh: node_textfile_mtime_seconds tells a stale file). A write that fails is logged
// (once until one succeeds again) and tried at the next change or refresh. nerved removes the file
// when it stops, so that the collector does not go on serving a stopped nerved's figures.
#pragma once

#include "system/event_loop.h"

#include <functional>
#include <optional>
#include <string>

namespace nerve {

class MetricsFile {
 public:
  // 'path': absolute, in a folder that exists. 'text': the file's content, made when it is written.
  MetricsFile(Timers& timers, std::string path, Clock::duration interval, std::function<std::string()> text);
  ~MetricsFile();
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;

  // Writes the file now (nerved's start).
  void start() { write(); }
  void changed();
  const std::string& path() const { return path_; }
  // How many times the file was written (tests).
  std::uint64_t writes() const { return writes_; }

 private:
  void write();
  void schedule(Clock::time_point at);

  Timers& timers_;
  std::string path_, folder_, name_;
  Clock::duration interval_;
  std::function<std::string()> text_;
  std::optional<TimerId> timer_;
  Clock::time_point due_{};
  std::optional<Clock::time_point> last_write_;
  std::string last_error_;
  std::uint64_t writes_ = 0;
};

}  // namespace nerve
