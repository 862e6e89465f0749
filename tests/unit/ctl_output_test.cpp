// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl's output conventions (lib/ctl/output.cpp): tables sized to their content, ages, colour only
// where wanted, RFC 3339 times as nerved writes them.
#include "ctl/output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace nerve::ctl {
namespace {

using std::chrono::seconds;

TEST(NervectlOutput, ATableIsAsWideAsItsWidestCellsWithNothingAfterTheLastColumn) {
  std::string t = format_table({"RUN", "STATE", "OUTCOME"},
                               {{{"a-long-run-id"}, {"running"}, {"-"}}, {{"r1"}, {"reaped"}, {"complete"}}}, false);
  EXPECT_EQ(t,
            "RUN           STATE   OUTCOME\n"
            "a-long-run-id running -\n"
            "r1            reaped  complete\n");
}

TEST(NervectlOutput, AHeaderWiderThanItsCellsSetsTheWidthAndNoHeaderPrintsOnlyRows) {
  EXPECT_EQ(format_table({"PROCESSES", "AGE"}, {{{"1"}, {"5s"}}}, false), "PROCESSES AGE\n1         5s\n");
  EXPECT_EQ(format_table({}, {{{"1"}, {"5s"}}, {{"12"}, {"3min"}}}, false), "1  5s\n12 3min\n");
}

TEST(NervectlOutput, ColourWrapsTheCellButDoesNotCountForTheWidth) {
  std::string t = format_table({}, {{{"r1", Colour::None}, {"failed", Colour::Red}, {"x"}}, {{"r22"}, {"ok"}, {"y"}}}, true);
  EXPECT_EQ(t, "r1  \x1b[0;1;31mfailed\x1b[0m x\nr22 ok     y\n");
  EXPECT_EQ(paint("ok", Colour::Green, false), "ok");
}

TEST(NervectlOutput, AnAgeIsShownInItsLargestUnit) {
  EXPECT_EQ(format_age(seconds{0}), "0s");
  EXPECT_EQ(format_age(seconds{59}), "59s");
  EXPECT_EQ(format_age(seconds{60}), "1min");
  EXPECT_EQ(format_age(seconds{3599}), "59min");
  EXPECT_EQ(format_age(seconds{7200}), "2h");
  EXPECT_EQ(format_age(seconds{3 * 86400 + 5}), "3d");
  EXPECT_EQ(format_age(seconds{-4}), "0s") << "a clock step back is no negative age";
}


// Sets (or with nullptr unsets) NAME for the scope of one test.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~EnvVar() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(NervectlOutput, ColourIsOnlyForATerminalUnlessTheEnvironmentSaysOtherwise) {
  std::FILE* file = std::tmpfile();  // not a terminal
  ASSERT_NE(file, nullptr);
  {
    EnvVar a("NO_COLOR", nullptr), b("SYSTEMD_COLORS", nullptr);
    EXPECT_FALSE(colour_wanted(file));
  }
  {
    EnvVar a("NO_COLOR", nullptr), b("SYSTEMD_COLORS", "1");
    EXPECT_TRUE(colour_wanted(file)) << "SYSTEMD_COLORS=1 forces colour, as in systemctl";
  }
  for (const char* off : {"0", "false", "no"}) {
    EnvVar a("NO_COLOR", nullptr), b("SYSTEMD_COLORS", off);
    EXPECT_FALSE(colour_wanted(file)) << off;
  }
  {
    EnvVar a("NO_COLOR", "1"), b("SYSTEMD_COLORS", "1");
    EXPECT_FALSE(colour_wanted(file)) << "NO_COLOR wins";
  }
  std::fclose(file);
}

}  // namespace
}  // namespace nerve::ctl
