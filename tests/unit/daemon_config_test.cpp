// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved.conf: a good file, comments and spaces, each key, and bad input (file, line and key named);
// how the file and the flags combine (flags win).
#include "nerved/daemon_config.h"
#include "nerved/daemon_options.h"
#include "temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace nerve {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(DaemonConfig, AGoodFileSetsEveryKey) {
  auto c = parse_daemon_config(
      "# nerved.conf\n"
      "\n"
      "runs_dir = /var/tmp/runs\n"
      "  default_grace=2min  \n"
      "default_slice = batch.slice\n"
      "default_properties = MemoryMax=1G TasksMax=100\n"
      "keep_finished = 7d\n",
      "/etc/x.conf");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->runs_dir, "/var/tmp/runs");
  EXPECT_EQ(c->default_grace, Duration(2min));
  EXPECT_EQ(c->default_slice, "batch.slice");
  EXPECT_EQ(c->default_properties, "MemoryMax=1G TasksMax=100");
  EXPECT_EQ(c->keep_finished, Duration(7 * 24h));
}

TEST(DaemonConfig, AnEmptyFileSetsNothing) {
  auto c = parse_daemon_config("# nothing\n\n", "f");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->runs_dir || c->default_grace || c->default_slice || c->default_properties || c->keep_finished);
}

TEST(DaemonConfig, AnUnknownKeyNamesTheFileTheLineAndTheKey) {
  auto c = parse_daemon_config("runs_dir = /r\n\n# c\nkeep_forever = 1\n", "/home/u/.config/nerve/nerved.conf");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().name, kConfigError);
  EXPECT_THAT(c.error().message, HasSubstr("/home/u/.config/nerve/nerved.conf:4: unknown key 'keep_forever'"));
}

TEST(DaemonConfig, ABadValueNamesTheLineTheKeyAndTheValue) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {"default_grace = 10x\n", "f:1: key default_grace: bad value '10x'"},
      {"default_grace = 0\n", "f:1: key default_grace: bad value '0'"},
      {"default_grace = 2h\n", "f:1: key default_grace: bad value '2h'"},
      {"\nruns_dir = relative/runs\n", "f:2: key runs_dir: bad value 'relative/runs'"},
      {"default_slice = batch\n", "f:1: key default_slice: bad value 'batch'"},
      {"default_properties = MemoryMax=lots\n", "f:1: key default_properties: bad value 'MemoryMax=lots'"},
      {"keep_finished = soon\n", "f:1: key keep_finished: bad value 'soon'"},
      {"keep_finished = -1d\n", "f:1: key keep_finished: bad value '-1d': a duration cannot be negative"},
      {"keep_finished = 40000000w\n", "f:1: key keep_finished: bad value '40000000w': the duration is out of range"},
      {"default_grace = infinity\n", "f:1: key default_grace: bad value 'infinity'"},
      {"default_grace = -1s\n", "f:1: key default_grace: bad value '-1s'"},
      {"default_grace = 3601s\n", "f:1: key default_grace: bad value '3601s'"},
      {"keep_finished\n", "f:1: expected 'key = value'"},
  };
  for (const auto& k : cases) {
    auto c = parse_daemon_config(k.text, "f");
    ASSERT_FALSE(c) << k.text;
    EXPECT_THAT(c.error().message, HasSubstr(k.expected)) << k.text;
  }
}

// Durations at their boundaries: default_grace from 1us to 1h; keep_finished anything from 0 to
// infinity (a keep_finished past the clock's end keeps every run, pruner_test).
TEST(DaemonConfig, DurationsAtTheirBoundaries) {
  auto value = [](const std::string& key, const std::string& v) {
    return parse_daemon_config(key + " = " + v + "\n", "f");
  };
  EXPECT_EQ(value("default_grace", "1us")->default_grace, Duration::from_usec(1));
  EXPECT_EQ(value("default_grace", "3599999999us")->default_grace, Duration::from_usec(3'599'999'999));
  EXPECT_EQ(value("default_grace", "1h")->default_grace, Duration(1h));
  EXPECT_FALSE(value("default_grace", "3600000001us"));
  EXPECT_FALSE(value("default_grace", "9223372036854775808us")) << "2^63";
  EXPECT_FALSE(value("default_grace", "18446744073709551615us")) << "2^64-1";
  EXPECT_EQ(value("keep_finished", "0")->keep_finished, Duration{});
  EXPECT_EQ(value("keep_finished", "1us")->keep_finished, Duration::from_usec(1));
  EXPECT_EQ(value("keep_finished", "20000w")->keep_finished, Duration(20000 * std::chrono::weeks(1)));
  EXPECT_EQ(value("keep_finished", "9223372036854775808us")->keep_finished, Duration::from_usec(std::uint64_t{1} << 63));
  EXPECT_EQ(value("keep_finished", "18446744073709551614us")->keep_finished, Duration::from_usec(UINT64_MAX - 1));
  EXPECT_FALSE(value("keep_finished", "18446744073709551615us")) << "2^64-1 us is spelt infinity";
  EXPECT_TRUE(value("keep_finished", "infinity")->keep_finished->is_infinity());
}

TEST(DaemonConfig, TheDefaultPathFollowsXdgConfigHome) {
  ::setenv("XDG_CONFIG_HOME", "/cfg", 1);
  EXPECT_EQ(default_config_path(), "/cfg/nerve/nerved.conf");
  ::unsetenv("XDG_CONFIG_HOME");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_config_path(), "/home/u/.config/nerve/nerved.conf");
}

class NervedConfigFile : public ::testing::Test {
 protected:
  test::TempDir tmp;
  std::string file = tmp / "nerved.conf";
  void write(const std::string& text) { std::ofstream(file) << text; }
};

TEST_F(NervedConfigFile, ItsValuesReachTheOptionsAndFlagsWin) {
  write("runs_dir = /from/file\ndefault_grace = 3s\nkeep_finished = 1h\ndefault_slice = b.slice\n");
  DaemonCommandLine c = parse_daemon_options({"--config", file});
  ASSERT_TRUE(c.options) << c.err;
  EXPECT_EQ(c.options->runs_dir, "/from/file");
  EXPECT_EQ(c.options->default_grace_usec, 3'000'000u);
  EXPECT_EQ(c.options->keep_finished, Duration(1h));
  EXPECT_EQ(c.options->default_slice, "b.slice");
  EXPECT_EQ(c.options->config_file, file);
  c = parse_daemon_options({"--config", file, "--runs-dir", "/from/flag"});
  ASSERT_TRUE(c.options) << c.err;
  EXPECT_EQ(c.options->runs_dir, "/from/flag");
}

TEST_F(NervedConfigFile, TheDefaultFileIsReadWhenThere) {
  ::setenv("XDG_CONFIG_HOME", tmp.path().c_str(), 1);
  DaemonCommandLine none = parse_daemon_options({});
  ASSERT_TRUE(none.options) << none.err;
  EXPECT_EQ(none.options->config_file, "");
  EXPECT_EQ(none.options->keep_finished, Duration(7 * 24h));
  std::filesystem::create_directories(tmp / "nerve");
  std::ofstream(tmp / "nerve/nerved.conf") << "keep_finished = 0\n";
  DaemonCommandLine some = parse_daemon_options({});
  ::unsetenv("XDG_CONFIG_HOME");
  ASSERT_TRUE(some.options) << some.err;
  EXPECT_EQ(some.options->keep_finished, Duration(0s));
  EXPECT_EQ(some.options->config_file, tmp / "nerve/nerved.conf");
}

TEST_F(NervedConfigFile, ABadFileOrAMissingNamedOneStopsWithExitTwo) {
  write("default_grace = 5s\nmystery = 1\n");
  DaemonCommandLine c = parse_daemon_options({"--config", file});
  EXPECT_FALSE(c.options);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_THAT(c.err, HasSubstr(file + ":2: unknown key 'mystery'"));
  c = parse_daemon_options({"--config", tmp / "absent.conf"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_THAT(c.err, HasSubstr("absent.conf: cannot read the configuration file"));
}

TEST(NervedLogLevel, TakesTheFiveLevelsAndVerboseIsDebug) {
  ::setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
  for (const char* level : {"trace", "debug", "info", "warning", "error"}) {
    DaemonCommandLine c = parse_daemon_options({"--log-level", level});
    ASSERT_TRUE(c.options) << c.err;
    EXPECT_EQ(c.options->log_level, level);
  }
  EXPECT_EQ(parse_daemon_options({"--verbose"}).options->log_level, "debug");
  EXPECT_EQ(parse_daemon_options({}).options->log_level, "info");
  EXPECT_EQ(parse_daemon_options({"--log-level", "loud"}).exit_code, 2);
}

}  // namespace
}  // namespace nerve
