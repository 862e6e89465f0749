// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/exposition.h"

#include <charconv>
#include <cmath>

namespace nerve {

void MetricFamily::add(Labels labels, double value) {
  samples.push_back({type == MetricType::Counter ? "_total" : "", std::move(labels), value});
}

void Histogram::observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  if (i < counts_.size()) ++counts_[i];
  ++count_;
  sum_ += value;
}

void Histogram::add_to(MetricFamily& family, const Labels& labels) const {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += i < counts_.size() ? counts_[i] : 0;
    Labels with_le = labels;
    with_le.emplace_back("le", i < bounds_.size() ? metric_value(bounds_[i]) : "+Inf");
    family.samples.push_back({"_bucket", std::move(with_le), static_cast<double>(i < bounds_.size() ? cumulative : count_)});
  }
  family.samples.push_back({"_sum", labels, sum_});
  family.samples.push_back({"_count", labels, static_cast<double>(count_)});
}

std::string metric_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string escape_label_value(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

// HELP text: backslash and newline escaped in both formats; double quote too in OpenMetrics.
std::string escape_help(const std::string& help, ExpositionFormat format) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && format == ExpositionFormat::OpenMetrics) out += "\\\"";
    else out += c;
  }
  return out;
}

void append_labels(std::string& out, const Labels& common, const Labels& own) {
  if (common.empty() && own.empty()) return;
  out += '{';
  bool first = true;
  for (const Labels* set : {&common, &own})
    for (const auto& [name, value] : *set) {
      if (!first) out += ',';
      first = false;
      out += name + "=\"" + escape_label_value(value) + '"';
    }
  out += '}';
}

}  // namespace

std::string render_metrics(const std::vector<MetricFamily>& families, ExpositionFormat format, const Labels& common) {
  std::string out;
  for (const auto& f : families) {
    // A counter's metadata names its samples (`_total`) in 0.0.4, the family in OpenMetrics.
    bool total = f.type == MetricType::Counter && format == ExpositionFormat::Prometheus;
    std::string meta = f.name + (total ? "_total" : "");
    out += "# HELP " + meta + ' ' + escape_help(f.help, format) + '\n';
    out += "# TYPE " + meta + ' ' + std::string(to_string(f.type)) + '\n';
    for (const auto& s : f.samples) {
      out += f.name + s.suffix;
      append_labels(out, common, s.labels);
      out += ' ' + metric_value(s.value) + '\n';
    }
  }
  if (format == ExpositionFormat::OpenMetrics) out += "# EOF\n";
  return out;
}

}  // namespace nerve
