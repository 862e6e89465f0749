// SPDX-License-Identifier: LGPL-2.1-or-later
#include "doubles.h"
#include "temp_dir.h"
#include "run/run_metrics.h"

#include <gtest/gtest.h>

using namespace nerve;
using namespace nerve::test;

namespace {

class RunMetricsTest : public ::testing::Test {
 protected:
  TempDir tmp;
  RunStore store{tmp / "runs"};
  RunMetrics metrics{store, {{"user", "alice"}}, "1.2.3"};

  // The value of the sample 'name' (family name + suffix) with exactly 'labels' (the common ones aside).
  double value(const std::string& name, const Labels& labels = {}) {
    for (const auto& f : metrics.families())
      for (const auto& s : f.samples)
        if (f.name + s.suffix == name && s.labels == labels) return s.value;
    ADD_FAILURE() << "no sample " << name;
    return -1;
  }
  Receipt receipt(const std::string& run, Outcome outcome, Cause cause, std::uint64_t duration_usec) {
    Receipt r;
    r.run = run;
    r.outcome = outcome;
    r.cause = cause;
    r.duration_usec = duration_usec;
    return r;
  }
};

}  // namespace

TEST_F(RunMetricsTest, CountsRunsByTheStateOfTheirRecordsAndEveryStateEvenAtZero) {
  save(store, running_record("a"));
  save(store, running_record("b"));
  Record c = running_record("c");
  c.state = RunState::Reaped;
  save(store, c);
  EXPECT_EQ(value("nerve_runs", {{"state", "running"}}), 2);
  EXPECT_EQ(value("nerve_runs", {{"state", "reaped"}}), 1);
  EXPECT_EQ(value("nerve_runs", {{"state", "launching"}}), 0);
  EXPECT_EQ(value("nerve_runs", {{"state", "unreadable"}}), 0);
}

TEST_F(RunMetricsTest, CountsReapsByOutcomeAndCauseAndTheirLatency) {
  metrics.receipt_written(receipt("a", Outcome::Complete, Cause::Cancelled, 20'000));
  metrics.receipt_written(receipt("b", Outcome::Complete, Cause::Cancelled, 3'000'000));
  metrics.receipt_written(receipt("c", Outcome::PendingRetry, Cause::OwnerGone, 10'000'000));
  EXPECT_EQ(value("nerve_reaps_total", {{"outcome", "complete"}, {"cause", "cancelled"}}), 2);
  EXPECT_EQ(value("nerve_reaps_total", {{"outcome", "pending_retry"}, {"cause", "owner_gone"}}), 1);
  EXPECT_EQ(value("nerve_reap_duration_seconds_count"), 3);
  EXPECT_DOUBLE_EQ(value("nerve_reap_duration_seconds_sum"), 13.02);
  EXPECT_EQ(value("nerve_reap_duration_seconds_bucket", {{"le", "0.025"}}), 1);
  EXPECT_EQ(value("nerve_reap_duration_seconds_bucket", {{"le", "5"}}), 2);
}

TEST_F(RunMetricsTest, SumsUsageOfFinalReceiptsOnlySoThatARetryIsNotCountedTwice) {
  Receipt pending = receipt("a", Outcome::PendingRetry, Cause::Reaped, 1);
  pending.usage = Usage{};
  pending.usage->cpu_user_usec = 1'000'000;
  pending.usage->memory_peak_bytes = 1 << 20;
  metrics.receipt_written(pending);
  Receipt done = receipt("a", Outcome::Complete, Cause::Reaped, 1);
  Usage u;
  u.cpu_user_usec = 1'500'000;
  u.cpu_system_usec = 500'000;
  u.memory_peak_bytes = 5 << 20;
  u.tasks_peak = 3;
  u.io_read_bytes = 10;
  u.io_write_bytes = 20;
  u.oom_kills = 1;
  done.usage = u;
  metrics.receipt_written(done);
  EXPECT_DOUBLE_EQ(value("nerve_run_cpu_seconds_total", {{"mode", "user"}}), 1.5);
  EXPECT_DOUBLE_EQ(value("nerve_run_cpu_seconds_total", {{"mode", "system"}}), 0.5);
  EXPECT_EQ(value("nerve_run_io_read_bytes_total"), 10);
  EXPECT_EQ(value("nerve_run_io_written_bytes_total"), 20);
  EXPECT_EQ(value("nerve_run_oom_kills_total"), 1);
  EXPECT_EQ(value("nerve_run_memory_peak_bytes_count"), 1);
  EXPECT_EQ(value("nerve_run_memory_peak_bytes_bucket", {{"le", "4194304"}}), 0);
  EXPECT_EQ(value("nerve_run_memory_peak_bytes_bucket", {{"le", "16777216"}}), 1);
  EXPECT_EQ(value("nerve_run_tasks_peak_sum"), 3);
}

TEST_F(RunMetricsTest, CountsPendingRetriesFromTheRecordsThatWaitForOne) {
  Record a = running_record("a");
  a.state = RunState::Reaping;
  save(store, a);
  save(store, receipt("a", Outcome::PendingRetry, Cause::Reaped, 1));
  Record b = running_record("b");
  b.state = RunState::Reaping;  // a first reap under way: no receipt yet
  save(store, b);
  EXPECT_EQ(value("nerve_reap_retries_pending"), 1);
}

TEST_F(RunMetricsTest, CountsStartsByMethodAndResultWithTheLatencyOfThoseThatStarted) {
  using std::chrono::milliseconds;
  metrics.start_answered(StartMethod::Launch, true, milliseconds(30));
  metrics.start_answered(StartMethod::Launch, false, milliseconds(1));
  metrics.start_answered(StartMethod::Contain, true, milliseconds(3));
  EXPECT_EQ(value("nerve_launches_total", {{"method", "launch"}, {"result", "started"}}), 1);
  EXPECT_EQ(value("nerve_launches_total", {{"method", "launch"}, {"result", "error"}}), 1);
  EXPECT_EQ(value("nerve_launches_total", {{"method", "contain"}, {"result", "error"}}), 0);
  EXPECT_EQ(value("nerve_launch_duration_seconds_count", {{"method", "launch"}}), 1);
  EXPECT_EQ(value("nerve_launch_duration_seconds_bucket", {{"method", "launch"}, {"le", "0.025"}}), 0);
  EXPECT_EQ(value("nerve_launch_duration_seconds_bucket", {{"method", "launch"}, {"le", "0.05"}}), 1);
  EXPECT_EQ(value("nerve_launch_duration_seconds_bucket", {{"method", "contain"}, {"le", "0.005"}}), 1);
}

TEST_F(RunMetricsTest, SaysItsVersionAndNervedsOwnFigures) {
  EXPECT_EQ(value("nerve_build_info", {{"version", "1.2.3"}}), 1);
  EXPECT_GT(value("nerve_daemon_open_fds"), 0);
  EXPECT_GT(value("nerve_daemon_resident_memory_bytes"), 0);
}

TEST_F(RunMetricsTest, LabelsEverySampleWithTheUserAndFollowsTheNamingRules) {
  std::string text = metrics.text(ExpositionFormat::Prometheus);
  std::size_t samples = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.rfind("# TYPE ", 0) == 0) {
      bool counter = line.ends_with(" counter");
      std::string name = line.substr(7, line.rfind(' ') - 7);
      EXPECT_EQ(name.ends_with("_total"), counter) << line;
      EXPECT_EQ(name.rfind("nerve_", 0), 0u) << line;
    }
    if (line.empty() || line[0] == '#') continue;
    ++samples;
    EXPECT_NE(line.find("{user=\"alice\""), std::string::npos) << line;
  }
  EXPECT_GT(samples, 50u);
  EXPECT_TRUE(metrics.text(ExpositionFormat::OpenMetrics).ends_with("\n# EOF\n"));
}
