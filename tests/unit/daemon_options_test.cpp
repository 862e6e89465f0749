// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's command line: defaults, each option, help and version, and bad input (exit 2, the bad
// value named).
#include "nerved/daemon_options.h"
#include "generated/nerve_version.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace nerve {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

void expect_usage_error(const std::vector<std::string>& args, const std::string& message) {
  SCOPED_TRACE(::testing::PrintToString(args));
  DaemonCommandLine c = parse_daemon_options(args);
  EXPECT_FALSE(c.options.has_value());
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(c.out, "");
  EXPECT_THAT(c.err, HasSubstr(message));
}

TEST(NervedOptions, DefaultsWithoutArguments) {
  ::setenv("XDG_STATE_HOME", "/state", 1);
  DaemonCommandLine c = parse_daemon_options({});
  ASSERT_TRUE(c.options.has_value()) << c.err;
  EXPECT_EQ(c.options->runs_dir, "/state/nerve/runs");
  EXPECT_EQ(c.options->ready_fd, -1);
  EXPECT_FALSE(c.options->verbose);
  EXPECT_EQ(c.options->systemd_timeout, 5000ms);
  EXPECT_EQ(c.options->retry_first, 1000ms);
}

TEST(NervedOptions, EveryOptionIsTaken) {
  DaemonCommandLine c = parse_daemon_options({"--runs-dir", "/r", "--ready-fd", "7", "--verbose",
                                              "--systemd-timeout", "300", "--retry-first=50"});
  ASSERT_TRUE(c.options.has_value()) << c.err;
  EXPECT_EQ(c.options->runs_dir, "/r");
  EXPECT_EQ(c.options->ready_fd, 7);
  EXPECT_TRUE(c.options->verbose);
  EXPECT_EQ(c.options->systemd_timeout, 300ms);
  EXPECT_EQ(c.options->retry_first, 50ms);
}

TEST(NervedOptions, BadValuesAreUsageErrorsThatNameThem) {
  expect_usage_error({"--runs-dir", "relative/runs"}, "--runs-dir must be an absolute path, not 'relative/runs'");
  expect_usage_error({"--ready-fd", "three"}, "three");
  expect_usage_error({"--ready-fd", "-2"}, "-2");
  expect_usage_error({"--systemd-timeout", "0"}, "0");
  expect_usage_error({"--retry-first", "soon"}, "soon");
  expect_usage_error({"--runs-dir"}, "--runs-dir");
  expect_usage_error({"--frobnicate"}, "--frobnicate");
  expect_usage_error({"extra"}, "extra");
}

// --systemd-timeout and --retry-first: a bare number is milliseconds, a unit may be given, from 1 ms
// to 600 s; anything else (0, negative, 2^63, 2^64-1, infinity) is a usage error naming the option.
TEST(NervedOptions, MillisecondOptionsAtTheirBoundaries) {
  for (const char* option : {"--systemd-timeout", "--retry-first"}) {
    SCOPED_TRACE(option);
    auto taken = [&](const std::string& v) {
      DaemonCommandLine c = parse_daemon_options({option, v});
      EXPECT_TRUE(c.options) << v << ": " << c.err;
      if (!c.options) return std::chrono::milliseconds(-1);
      return std::string(option) == "--retry-first" ? c.options->retry_first : c.options->systemd_timeout;
    };
    EXPECT_EQ(taken("1"), 1ms);
    EXPECT_EQ(taken("2s"), 2000ms);
    EXPECT_EQ(taken("599999"), 599'999ms);
    EXPECT_EQ(taken("600000"), 600'000ms);
    EXPECT_EQ(taken("10min"), 600'000ms);
    for (std::string bad : {"0", "0.5", "600001", "-1", "9223372036854775808", "18446744073709551615us", "infinity", "soon"})
      expect_usage_error({option, bad}, std::string(option) + " takes milliseconds from 1 to 600000 (or a duration such "
                                                             "as 5s), not '" + bad + "'");
  }
}

TEST(NervedOptions, HelpListsEveryOptionOnALineOfItsOwn) {
  DaemonCommandLine c = parse_daemon_options({"--help"});
  EXPECT_FALSE(c.options.has_value());
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_THAT(c.out, StartsWith("Usage: nerved [OPTIONS]\n"));
  for (const char* line : {"\n  --runs-dir DIR ", "\n  --ready-fd FD ", "\n  --verbose ", "\n  --systemd-timeout MS ",
                           "\n  --retry-first MS ", "\n  --version "})
    EXPECT_THAT(c.out, HasSubstr(line));
}

TEST(NervedOptions, VersionIsTheProjectVersion) {
  DaemonCommandLine c = parse_daemon_options({"--version"});
  EXPECT_FALSE(c.options.has_value());
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(c.out, "nerved " NERVE_VERSION "\n");
}

}  // namespace
}  // namespace nerve
