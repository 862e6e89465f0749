// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl's command line: every verb, its options, help and version, and every kind of bad input
// (exit 2 with a message that quotes the bad value). No bus: parse_args makes no call.
#include "ctl/args.h"
#include "ctl/front.h"
#include "generated/nerve_version.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace nerve::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Parsed parse(std::vector<std::string> args) { return parse_args(front_verbs(), args); }

// A usage error: exit 2, nothing to run, nothing on stdout, MESSAGE and the verb's usage on stderr.
void expect_usage_error(const std::vector<std::string>& args, const std::string& message) {
  SCOPED_TRACE(::testing::PrintToString(args));
  Parsed p = parse_args(front_verbs(), args);
  EXPECT_EQ(p.verb, nullptr);
  EXPECT_EQ(p.exit_code, kExitUsage);
  EXPECT_EQ(p.out, "");
  EXPECT_THAT(p.err, HasSubstr(message));
  if (!args.empty() && args[0] != "frobnicate" && args[0].rfind("-", 0) != 0) {
    EXPECT_THAT(p.err, HasSubstr("Usage: nervectl " + args[0]));
  }
}

TEST(NervectlArgs, LaunchTakesItsOptionsTheRunAndTheCommand) {
  Parsed p = parse({"launch", "--wait", "--grace", "0.2", "--keep", "r1", "--", "sh", "-c", "exit 3"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_STREQ(p.verb->name, "launch");
  EXPECT_EQ(p.args.run, "r1");
  EXPECT_EQ(p.args.grace_usec, 200'000u);
  EXPECT_TRUE(p.args.wait);
  EXPECT_TRUE(p.args.keep);
  EXPECT_EQ(p.args.cmd, (std::vector<std::string>{"sh", "-c", "exit 3"}));
}

TEST(NervectlArgs, LaunchWithoutOptionsHasNoGraceAndDoesNotWait) {
  Parsed p = parse({"launch", "r1", "--", "true"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_EQ(p.args.grace_usec, 0u);
  EXPECT_FALSE(p.args.wait);
  EXPECT_FALSE(p.args.keep);
  EXPECT_EQ(p.args.cmd, (std::vector<std::string>{"true"}));
}

TEST(NervectlArgs, LaunchPassesEverythingAfterTheSeparatorToTheCommand) {
  Parsed p = parse({"launch", "--grace=2", "r1", "--", "cmd", "--help", "--", "--grace", "x"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_EQ(p.args.grace_usec, 2'000'000u);
  EXPECT_EQ(p.args.cmd, (std::vector<std::string>{"cmd", "--help", "--", "--grace", "x"}));
}

TEST(NervectlArgs, LaunchTakesSealedAndSealingTakesJson) {
  Parsed p = parse({"launch", "--sealed", "r1", "--", "cmd"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_TRUE(p.args.sealed);
  EXPECT_FALSE(parse({"launch", "r1", "--", "cmd"}).args.sealed);
  Parsed s = parse({"sealing", "--json"});
  ASSERT_NE(s.verb, nullptr) << s.err;
  EXPECT_STREQ(s.verb->name, "sealing");
  EXPECT_TRUE(s.args.json);
  expect_usage_error({"sealing", "r1"}, "too many arguments");
}

TEST(NervectlArgs, ReapTakesAGraceJsonAndTheRun) {
  Parsed p = parse({"reap", "--grace", "3600", "--json", "build.42"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_STREQ(p.verb->name, "reap");
  EXPECT_EQ(p.args.run, "build.42");
  EXPECT_EQ(p.args.grace_usec, 3600'000'000u);
  EXPECT_TRUE(p.args.json);
}

TEST(NervectlArgs, StatusListReconcileAndForgetParse) {
  struct Case {
    std::vector<std::string> args;
    std::string run;
    JsonMode json;
  };
  for (const Case& c : std::vector<Case>{{{"status", "--json", "r1"}, "r1", kJsonShort},
                                         {{"status", "r1"}, "r1", kJsonOff},
                                         {{"list"}, "", kJsonOff},
                                         {{"list", "--json"}, "", kJsonShort},
                                         {{"reconcile"}, "", kJsonOff},
                                         {{"reconcile", "--json"}, "", kJsonShort},
                                         {{"forget", "ci:job_7"}, "ci:job_7", kJsonOff},
                                         {{"doctor"}, "", kJsonOff},
                                         {{"events", "--json"}, "", kJsonShort}}) {
    SCOPED_TRACE(::testing::PrintToString(c.args));
    Parsed p = parse(c.args);
    ASSERT_NE(p.verb, nullptr) << p.err;
    EXPECT_EQ(p.verb->name, c.args[0]);
    EXPECT_EQ(p.args.run, c.run);
    EXPECT_EQ(p.args.json, c.json);
  }
}

// As systemctl: --json=pretty|short|off; plain --json (nervectl's older form) is short.
TEST(NervectlArgs, JsonTakesAModeAfterAnEqualsSign) {
  for (const auto& [arg, mode] : std::vector<std::pair<std::string, JsonMode>>{
           {"--json", kJsonShort}, {"--json=short", kJsonShort}, {"--json=pretty", kJsonPretty}, {"--json=off", kJsonOff}}) {
    SCOPED_TRACE(arg);
    Parsed p = parse({"status", arg, "r1"});
    ASSERT_NE(p.verb, nullptr) << p.err;
    EXPECT_EQ(p.args.json, mode);
    EXPECT_EQ(p.args.run, "r1");
  }
  expect_usage_error({"list", "--json=yaml"}, "--json takes short, pretty or off, not 'yaml'");
  Parsed q = parse({"status", "--json", "pretty"});  // a mode only after '=': "pretty" is the run id
  ASSERT_NE(q.verb, nullptr) << q.err;
  EXPECT_EQ(q.args.run, "pretty");
  EXPECT_EQ(q.args.json, kJsonShort);
}

TEST(NervectlArgs, NoLegendIsAnOptionOfList) {
  Parsed p = parse({"list", "--no-legend", "--json=off"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_TRUE(p.args.no_legend);
  EXPECT_EQ(p.args.json, kJsonOff);
  EXPECT_FALSE(parse({"list"}).args.no_legend);
  expect_usage_error({"status", "--no-legend", "r1"}, "unknown option '--no-legend'");
}

TEST(NervectlArgs, ARunIdThatStartsWithADashIsStillARunId) {
  Parsed p = parse({"reap", "-x"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_EQ(p.args.run, "-x");
  Parsed q = parse({"status", "--", "-y"});
  ASSERT_NE(q.verb, nullptr) << q.err;
  EXPECT_EQ(q.args.run, "-y");
}

TEST(NervectlArgs, AnInvalidRunIdIsAUsageErrorOfEveryVerbThatTakesOne) {
  for (std::string verb : {"reap", "status", "forget"}) {
    expect_usage_error({verb, "../x"}, "invalid run id '../x'");
    expect_usage_error({verb, ""}, "invalid run id ''");
    expect_usage_error({verb, "a\nb"}, "invalid run id 'a\\nb'");
  }
  expect_usage_error({"launch", "a/b", "--", "true"}, "invalid run id 'a/b'");
  expect_usage_error({"launch", "--grace", "1", ".hidden", "--", "true"}, "invalid run id '.hidden'");
}

// A grace is seconds or a systemd duration, more than 0 and at most an hour: 1us, 3600 and 1h are
// taken; 0, negative, 3600.5, 2^63 us, 2^64-1 us, infinity are refused naming the option and value.
TEST(NervectlArgs, AGraceAtItsBoundaries) {
  auto grace = [](const std::string& g) { return parse({"reap", "--grace", g, "r1"}).args.grace_usec; };
  EXPECT_EQ(grace("1us"), 1u);
  EXPECT_EQ(grace("1s"), 1'000'000u);
  EXPECT_EQ(grace("500ms"), 500'000u);
  EXPECT_EQ(grace("3599.999999"), 3'599'999'999u);
  EXPECT_EQ(grace("3600"), 3'600'000'000u);
  EXPECT_EQ(grace("1h"), 3'600'000'000u);
}

TEST(NervectlArgs, ABadGraceIsAUsageErrorThatQuotesIt) {
  for (std::string bad : {"0", "-1", "-1s", "abc", "3600.5", "3600000001us", "9223372036854775808us",
                          "18446744073709551615us", "infinity", "", "nan", "inf", "1e3"}) {
    expect_usage_error({"reap", "--grace", bad, "r1"},
                       "--grace takes seconds (or a duration such as 500ms), more than 0 and at most 3600, not '" +
                           bad + "'");
    expect_usage_error({"launch", "--grace", bad, "r1", "--", "true"}, "not '" + bad + "'");
  }
}

// --timeout: any systemd duration above 0; infinity is no timeout (nothing is sent); 20000w and 2^63
// us are sent as they are (nerved's deadline saturates); 0, negative and past 2^64-2 us are refused.
TEST(NervectlArgs, ATimeoutAtItsBoundaries) {
  auto timeout = [](const std::string& t) {
    Parsed p = parse({"launch", "--timeout", t, "r1", "--", "true"});
    EXPECT_TRUE(p.verb) << t << ": " << p.err;
    return p.args.controls.timeout_usec;
  };
  EXPECT_EQ(timeout("1us"), 1u);
  EXPECT_EQ(timeout("90"), 90'000'000u);
  EXPECT_EQ(timeout("1min 30s"), 90'000'000u);
  EXPECT_EQ(timeout("20000w"), std::uint64_t{20000} * 604800 * 1'000'000);
  EXPECT_EQ(timeout("9223372036854775808us"), std::uint64_t{1} << 63);
  EXPECT_EQ(timeout("18446744073709551614us"), UINT64_MAX - 1);
  EXPECT_EQ(timeout("infinity"), 0u) << "infinity: no timeout";
  for (std::string bad : {"0", "-1", "-5min", "18446744073709551615us", "40000000w", "soon", ""})
    expect_usage_error({"launch", "--timeout", bad, "r1", "--", "true"},
                       "--timeout takes a duration such as 90, 500ms or 10min, or infinity, not '" + bad + "'");
  expect_usage_error({"launch", "--timeout", "40000000w", "r1", "--", "true"}, "out of range");
  expect_usage_error({"launch", "--timeout", "-1s", "r1", "--", "true"}, "negative");
}

TEST(NervectlArgs, MissingOrExtraOperandsAreUsageErrors) {
  expect_usage_error({"reap"}, "missing RUN");
  expect_usage_error({"status", "--json"}, "missing RUN");
  expect_usage_error({"forget"}, "missing RUN");
  expect_usage_error({"launch"}, "missing RUN");
  expect_usage_error({"reap", "r1", "r2"}, "too many arguments");
  expect_usage_error({"forget", "r1", "-x"}, "too many arguments");
  expect_usage_error({"list", "r1"}, "too many arguments");
  expect_usage_error({"reconcile", "r1"}, "too many arguments");
  expect_usage_error({"doctor", "r1"}, "too many arguments");
  expect_usage_error({"events", "r1"}, "too many arguments");
}

TEST(NervectlArgs, LaunchNeedsTheSeparatorAndACommand) {
  expect_usage_error({"launch", "r1"}, "expected '-- CMD [ARG...]' after the run id");
  expect_usage_error({"launch", "r1", "--"}, "expected '-- CMD [ARG...]' after the run id");
  expect_usage_error({"launch", "r1", "true"}, "too many arguments");
}

TEST(NervectlArgs, SliceTakesSetAnOptionalSliceAndAtLeastOneProperty) {
  Parsed p = parse({"slice", "set", "a.slice", "-p", "MemoryMax=1G", "--property", "CPUWeight=50"});
  ASSERT_NE(p.verb, nullptr) << p.err;
  EXPECT_STREQ(p.verb->name, "slice");
  EXPECT_EQ(p.args.slice_operand, "a.slice");
  EXPECT_EQ(p.args.controls.properties, (std::vector<std::string>{"MemoryMax=1G", "CPUWeight=50"}));
  EXPECT_EQ(p.args.run, "");
  Parsed q = parse({"slice", "-p", "TasksMax=9", "set"});
  ASSERT_NE(q.verb, nullptr) << q.err;
  EXPECT_EQ(q.args.slice_operand, "");
  expect_usage_error({"slice"}, "expected 'set' after 'slice'");
  expect_usage_error({"slice", "get", "-p", "X=1"}, "expected 'set' after 'slice'");
  expect_usage_error({"slice", "set"}, "expected at least one -p KEY=VALUE");
  expect_usage_error({"slice", "set", "a.slice", "b", "-p", "X=1"}, "too many arguments");
  expect_usage_error({"slice", "set", "-x", "-p", "X=1"}, "unknown option '-x'");
  expect_usage_error({"slice", "set", "--grace", "1", "-p", "X=1"}, "unknown option '--grace'");
  expect_usage_error({"slice", "set", "-p", "X"}, "property 'X' is not KEY=VALUE");
  EXPECT_THAT(parse({"slice", "--help"}).out, StartsWith("Usage: nervectl slice [--property KEY=VALUE] set [SLICE]\n"));
}

TEST(NervectlArgs, AnUnknownOptionIsAUsageErrorThatNamesIt) {
  expect_usage_error({"reap", "--frobnicate", "r1"}, "unknown option '--frobnicate'");
  expect_usage_error({"list", "--grace", "1"}, "unknown option '--grace'");
  expect_usage_error({"forget", "--json", "r1"}, "unknown option '--json'");
  expect_usage_error({"launch", "--json", "r1", "--", "true"}, "unknown option '--json'");
}

TEST(NervectlArgs, AnOptionWithoutItsValueIsAUsageError) {
  expect_usage_error({"reap", "--grace"}, "--grace");
}

TEST(NervectlArgs, AnUnknownVerbIsAUsageErrorThatNamesItAndListsTheVerbs) {
  expect_usage_error({"frobnicate"}, "unknown verb 'frobnicate'");
  EXPECT_THAT(parse({"frobnicate"}).err, HasSubstr("\nVerbs:\n"));
  expect_usage_error({}, "Verbs:");
  expect_usage_error({"--frobnicate"}, "--frobnicate");
}

TEST(NervectlArgs, HelpListsEveryVerbOnALineOfItsOwn) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, {"-h"}, {"help"}}) {
    Parsed p = parse(args);
    EXPECT_EQ(p.verb, nullptr);
    EXPECT_EQ(p.exit_code, 0);
    EXPECT_EQ(p.err, "");
    EXPECT_THAT(p.out, StartsWith("Usage: nervectl VERB"));
    auto at = p.out.find("\nVerbs:\n");
    ASSERT_NE(at, std::string::npos) << p.out;
    std::string section = p.out.substr(at + 8, p.out.find("\n\n", at) - at - 8);
    std::size_t i = 0;
    for (std::size_t start = 0; start < section.size(); ++i) {
      auto end = section.find('\n', start);
      std::string line = section.substr(start, end - start);
      ASSERT_LT(i, front_verbs().size()) << line;
      EXPECT_THAT(line, StartsWith("  " + std::string(front_verbs()[i].name) + " ")) << line;
      EXPECT_THAT(line, HasSubstr(front_verbs()[i].summary));
      start = end == std::string::npos ? section.size() : end + 1;
    }
    EXPECT_EQ(i, front_verbs().size()) << section;
  }
}

TEST(NervectlArgs, VerbHelpShowsTheSynopsisAndEveryOption) {
  for (const Verb& v : front_verbs()) {
    SCOPED_TRACE(v.name);
    Parsed p = parse({v.name, "--help"});
    EXPECT_EQ(p.verb, nullptr);
    EXPECT_EQ(p.exit_code, 0);
    EXPECT_EQ(p.out, verb_help_text(v));
    EXPECT_THAT(p.out, StartsWith("Usage: nervectl " + synopsis(v) + "\n"));
    EXPECT_THAT(p.out, HasSubstr("\nOptions:\n"));
  }
  Parsed launch = parse({"launch", "--help"});
  EXPECT_THAT(launch.out,
              StartsWith("Usage: nervectl launch [--wait] [--grace SECONDS] [--keep] [--sealed] [--property KEY=VALUE] [--timeout DURATION] [--slice NAME] RUN -- CMD [ARG...]\n"));
  EXPECT_THAT(launch.out, HasSubstr("\n  --grace SECONDS  "));
  EXPECT_THAT(parse({"reap", "-h"}).out, StartsWith("Usage: nervectl reap [--grace SECONDS] [--json[=MODE]] RUN\n"));
  EXPECT_THAT(parse({"list", "-h"}).out, StartsWith("Usage: nervectl list [--json[=MODE]] [--no-legend]\n"));
  EXPECT_THAT(parse({"list", "-h"}).out, HasSubstr("\n  --json[=MODE]    print the answer as JSON"));
}

TEST(NervectlArgs, VersionIsTheProjectVersion) {
  Parsed p = parse({"--version"});
  EXPECT_EQ(p.verb, nullptr);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_EQ(p.out, "nervectl " NERVE_VERSION "\n");
}

}  // namespace
}  // namespace nerve::ctl
