// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/exposition.h"

#include <gtest/gtest.h>

using namespace nerve;

namespace {
MetricFamily counter() {
  MetricFamily f{"nerve_reaps", MetricType::Counter, "Reaps \"done\"\\now", {}};
  f.add({{"outcome", "complete"}}, 3);
  return f;
}
}  // namespace

TEST(AnExposition, NamesACountersFamilyWithoutTotalInOpenMetricsAndEndsWithEof) {
  EXPECT_EQ(render_metrics({counter()}, ExpositionFormat::OpenMetrics),
            "# HELP nerve_reaps Reaps \\\"done\\\"\\\\now\n"
            "# TYPE nerve_reaps counter\n"
            "nerve_reaps_total{outcome=\"complete\"} 3\n"
            "# EOF\n");
}

TEST(AnExposition, NamesACountersSamplesInTheTextFormatAndHasNoEof) {
  EXPECT_EQ(render_metrics({counter()}, ExpositionFormat::Prometheus),
            "# HELP nerve_reaps_total Reaps \"done\"\\\\now\n"
            "# TYPE nerve_reaps_total counter\n"
            "nerve_reaps_total{outcome=\"complete\"} 3\n");
}

TEST(AnExposition, PutsTheCommonLabelsFirstOnEverySample) {
  MetricFamily g{"nerve_runs", MetricType::Gauge, "Runs", {}};
  g.add({{"state", "running"}}, 2);
  g.add({}, 1);
  EXPECT_EQ(render_metrics({g}, ExpositionFormat::Prometheus, {{"user", "al\"ice"}}),
            "# HELP nerve_runs Runs\n# TYPE nerve_runs gauge\n"
            "nerve_runs{user=\"al\\\"ice\",state=\"running\"} 2\n"
            "nerve_runs{user=\"al\\\"ice\"} 1\n");
}

TEST(AnExposition, EscapesBackslashQuoteAndNewlineInLabelValues) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(AnExposition, WritesIntegersWithoutAFractionAndOthersInTheirShortestForm) {
  EXPECT_EQ(metric_value(0), "0");
  EXPECT_EQ(metric_value(1234567), "1234567");
  EXPECT_EQ(metric_value(0.005), "0.005");
  EXPECT_EQ(metric_value(2.5), "2.5");
  EXPECT_EQ(metric_value(1.0 / 0.0), "+Inf");
  EXPECT_EQ(metric_value(-1.0 / 0.0), "-Inf");
}

TEST(AHistogram, CountsEachValueInTheFirstBucketThatHoldsItAndCumulates) {
  Histogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) h.observe(v);
  MetricFamily f{"nerve_reap_duration_seconds", MetricType::Histogram, "Reaps", {}};
  h.add_to(f, {{"method", "launch"}});
  EXPECT_EQ(render_metrics({f}, ExpositionFormat::OpenMetrics),
            "# HELP nerve_reap_duration_seconds Reaps\n"
            "# TYPE nerve_reap_duration_seconds histogram\n"
            "nerve_reap_duration_seconds_bucket{method=\"launch\",le=\"0.1\"} 2\n"
            "nerve_reap_duration_seconds_bucket{method=\"launch\",le=\"1\"} 3\n"
            "nerve_reap_duration_seconds_bucket{method=\"launch\",le=\"10\"} 4\n"
            "nerve_reap_duration_seconds_bucket{method=\"launch\",le=\"+Inf\"} 5\n"
            "nerve_reap_duration_seconds_sum{method=\"launch\"} 55.65\n"
            "nerve_reap_duration_seconds_count{method=\"launch\"} 5\n"
            "# EOF\n");
}

TEST(AHistogram, HasOnlyTheInfBucketAndZerosBeforeAnyValue) {
  Histogram h({1});
  MetricFamily f{"x_seconds", MetricType::Histogram, "x", {}};
  h.add_to(f, {});
  ASSERT_EQ(f.samples.size(), 4u);
  EXPECT_EQ(f.samples[1].labels.back().second, "+Inf");
  for (const auto& s : f.samples) EXPECT_EQ(s.value, 0);
}
