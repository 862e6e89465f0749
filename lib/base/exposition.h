// SPDX-License-Identifier: LGPL-2.1-or-later
// Metrics as text for Prometheus: the OpenMetrics 1.0 text format (`nervectl metrics`, GetMetrics)
// and the Prometheus text format 0.0.4, which node_exporter's textfile collector and `promtool check
// metrics` read (nerved's metrics file). The two differ in three places only: a counter's TYPE and
// HELP lines name the family without `_total` in OpenMetrics and with it in 0.0.4 (its samples end in
// `_total` in both); OpenMetrics ends with `# EOF`; nothing else is written that either lacks.
//
// A family is a name, a type, a help text and its samples; a histogram's samples are its cumulative
// `_bucket{le=...}` counts (the `+Inf` one included), `_sum` and `_count` (Histogram::add_to).
#pragma once

#include "base/string_table.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nerve {

enum class ExpositionFormat { OpenMetrics, Prometheus };
constexpr auto string_table(ExpositionFormat) {
  return std::to_array<Named<ExpositionFormat>>({
      {ExpositionFormat::OpenMetrics, "openmetrics"},
      {ExpositionFormat::Prometheus, "prometheus"},
  });
}

enum class MetricType { Counter, Gauge, Histogram };
constexpr auto string_table(MetricType) {
  return std::to_array<Named<MetricType>>({
      {MetricType::Counter, "counter"},
      {MetricType::Gauge, "gauge"},
      {MetricType::Histogram, "histogram"},
  });
}

using Labels = std::vector<std::pair<std::string, std::string>>;

struct MetricSample {
  std::string suffix;  // appended to the family's name: "_total", "_bucket", "_sum", "_count" or ""
  Labels labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;  // without `_total` for a counter
  MetricType type = MetricType::Gauge;
  std::string help;
  std::vector<MetricSample> samples;

  // A counter's sample ("_total") or a gauge's ("").
  void add(Labels labels, double value);
};

// Cumulative buckets with fixed upper bounds (ascending), as Prometheus histograms are.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {}
  void observe(double value);
  // The `_bucket` samples (each bound, then +Inf), `_sum` and `_count`, each with 'labels'.
  void add_to(MetricFamily& family, const Labels& labels) const;
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

// The families in 'format', in their order, each sample with 'common' labels first.
std::string render_metrics(const std::vector<MetricFamily>& families, ExpositionFormat format,
                           const Labels& common = {});

// A sample value as both formats write it: integers without a fraction, others in the fewest digits
// that read back as the same double, +Inf, -Inf and NaN by name.
std::string metric_value(double v);
// A label value with backslash, double quote and newline escaped.
std::string escape_label_value(const std::string& v);

// The OpenMetrics content type that GetMetrics's text and `nervectl metrics` are, and 0.0.4's.
inline constexpr const char* kOpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8";
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace nerve
