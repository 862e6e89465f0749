// SPDX-License-Identifier: LGPL-2.1-or-later
// The table of verbs (lib/ctl/verb_table.h) as each program builds it: the same rows in both, every
// row with a handler in the program that runs it, names unique, operands that the parser and VerbArgs
// can hold.
#include "ctl/args.h"
#include "ctl/front.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nerve::ctl {
namespace {

using ::testing::HasSubstr;

// What the front runs itself (front.h); everything else it hands on to nervectl-full.
const std::set<std::string> kFrontVerbs = {"reap", "cancel", "freeze", "thaw", "forget"};

TEST(VerbTable, BothProgramsHaveTheSameRows) {
  Verbs front = front_verbs(), full = full_verbs();
  ASSERT_EQ(front.size(), full.size());
  for (std::size_t i = 0; i < front.size(); ++i) {
    SCOPED_TRACE(front[i].name);
    EXPECT_STREQ(front[i].name, full[i].name);
    EXPECT_STREQ(front[i].summary, full[i].summary);
    EXPECT_EQ(front[i].options, full[i].options);
    EXPECT_EQ(synopsis(front[i]), synopsis(full[i]));
    EXPECT_EQ(front[i].handler.runs_in, full[i].handler.runs_in);
  }
  EXPECT_EQ(help_text(front), help_text(full));
}

TEST(VerbTable, NamesAreUniqueAndFoundByName) {
  std::set<std::string> names;
  for (const Verb& v : front_verbs()) {
    EXPECT_TRUE(names.insert(v.name).second) << "two rows named " << v.name;
    EXPECT_EQ(find_verb(front_verbs(), v.name), &v);
    EXPECT_NE(std::string(v.summary), "") << v.name;
  }
  EXPECT_EQ(find_verb(front_verbs(), "help"), nullptr);  // a word of the parser, not a verb
}

// The front runs launch (without --wait) and the verbs of one run, and hands on the others; its
// handlers are its own; nervectl-full runs every row itself and never hands on.
TEST(VerbTable, EveryRowHasAHandlerInTheProgramThatRunsIt) {
  for (const Verb& v : front_verbs()) {
    SCOPED_TRACE(v.name);
    ASSERT_NE(v.handler.run, nullptr);
    RunsIn expected = v.name == std::string("launch") ? RunsIn::FrontUnlessWait
                      : kFrontVerbs.count(v.name)     ? RunsIn::Front
                                                      : RunsIn::Full;
    EXPECT_EQ(v.handler.runs_in, expected);
    EXPECT_EQ(v.handler.run == &hand_on, expected == RunsIn::Full);
  }
  for (const Verb& v : full_verbs()) {
    SCOPED_TRACE(v.name);
    ASSERT_NE(v.handler.run, nullptr);
    EXPECT_NE(v.handler.run, &hand_on);
  }
  // The front's own handlers are the same functions in nervectl-full.
  for (std::size_t i = 0; i < front_verbs().size(); ++i) {
    if (front_verbs()[i].handler.runs_in == RunsIn::Front) {
      EXPECT_EQ(front_verbs()[i].handler.run, full_verbs()[i].handler.run) << front_verbs()[i].name;
    }
  }
}

// min <= max; words other than a sub-verb are run ids, of which VerbArgs holds one; a command follows a
// run id; a sub-verb comes first and is required; the synopsis shows each word, optional ones in brackets.
TEST(VerbTable, OperandsAreConsistent) {
  for (const Verb& v : front_verbs()) {
    SCOPED_TRACE(v.name);
    const Operands& o = v.operands;
    EXPECT_LE(o.min, o.max);
    ASSERT_NE(o.name, nullptr);
    if (o.sub) {
      EXPECT_GE(o.min, 1u);
      EXPECT_LE(o.max, 2u);  // the sub-verb and one NAME (VerbArgs::slice_operand)
      EXPECT_FALSE(o.command);
      EXPECT_THAT(synopsis(v), HasSubstr(" " + std::string(o.sub)));
    } else {
      EXPECT_LE(o.max, 1u);
      EXPECT_STREQ(o.name, "RUN");
      EXPECT_EQ(synopsis(v).find(" RUN") != std::string::npos, o.max == 1);
    }
    if (o.command) {
      EXPECT_EQ(o.min, 1u);
    }
    EXPECT_EQ(synopsis(v).find(" -- CMD [ARG...]") != std::string::npos, o.command);
    EXPECT_EQ(synopsis(v).find("[" + std::string(o.name) + "]") != std::string::npos, o.max > o.min);
  }
}

TEST(VerbTable, TheSynopsisShowsTheOptionsThenTheOperands) {
  const Verb& slice = *find_verb(front_verbs(), "slice");
  EXPECT_EQ(synopsis(slice), "slice [--property KEY=VALUE] set [SLICE]");
  EXPECT_EQ(synopsis(*find_verb(front_verbs(), "thaw")), "thaw RUN");
  EXPECT_EQ(synopsis(*find_verb(front_verbs(), "doctor")), "doctor [--json[=MODE]]");
  EXPECT_EQ(synopsis(*find_verb(front_verbs(), "launch")),
            "launch [--wait] [--grace SECONDS] [--keep] [--sealed] [--property KEY=VALUE] [--timeout DURATION] "
            "[--slice NAME] RUN -- CMD [ARG...]");
}

}  // namespace
}  // namespace nerve::ctl
