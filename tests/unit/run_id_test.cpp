// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/run_id.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sdbus-c++/Error.h>

using namespace nerve;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {
const std::string kNonce = "0123456789abcdef";
}

TEST(ARunId, IsValidWhenMadeOfLettersDigitsAndDotUnderscoreColonDash) {
  for (const std::string& id : std::vector<std::string>{"a", "run-1", "A.b_c:d-e", "2024-01-01T10:00:00", "x.", std::string(128, 'x')})
    EXPECT_EQ(run_id_problem(id), std::nullopt) << id;
}

TEST(ARunId, IsRefusedWhenEmpty) { EXPECT_NE(run_id_problem(""), std::nullopt); }

TEST(ARunId, IsRefusedWhenItClimbsOutOfTheRunsFolder) { EXPECT_NE(run_id_problem("../x"), std::nullopt); }

TEST(ARunId, IsRefusedWhenItHoldsASlash) { EXPECT_NE(run_id_problem("a/b"), std::nullopt); }

TEST(ARunId, IsRefusedWhenLongerThan128Characters) {
  EXPECT_NE(run_id_problem(std::string(129, 'x')), std::nullopt);
  EXPECT_NE(run_id_problem(std::string(200, 'x')), std::nullopt);
}

TEST(ARunId, IsRefusedWhenItStartsWithADot) {
  EXPECT_NE(run_id_problem(".hidden"), std::nullopt);
  EXPECT_NE(run_id_problem("."), std::nullopt);
  EXPECT_NE(run_id_problem(".."), std::nullopt);
}

TEST(ARunId, IsRefusedWhenItHoldsANewline) { EXPECT_NE(run_id_problem("a\nb"), std::nullopt); }

TEST(ARunId, IsRefusedWhenItHoldsNonAsciiCharacters) {
  EXPECT_NE(run_id_problem("caf\xc3\xa9"), std::nullopt);
  EXPECT_NE(run_id_problem("a b"), std::nullopt);
}

TEST(ARunIdProblem, IsASentenceThatLeavesTheValueOut) {
  EXPECT_EQ(run_id_problem(std::string(129, 'x')), "a run id has at most 128 characters, this one has 129");
}

TEST(CheckRunId, AcceptsAValidRunId) { EXPECT_TRUE(check_run_id("run-1")); }

TEST(CheckRunId, IsInvalidRunIdQuotingTheValueWithItsNewlineEscaped) {
  auto checked = check_run_id("bad\nid");
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().name, "org.nerve.Lifecycle1.Error.InvalidRunId");
  EXPECT_THAT(checked.error().message, HasSubstr("'bad\\nid'"));
  EXPECT_THAT(checked.error().message, Not(HasSubstr("\n")));
}

TEST(AScopeUnitName, NamesTheRunAndTheNonce) {
  EXPECT_EQ(scope_unit_name("r1", kNonce), "nerve-r1-0123456789abcdef.scope");
}

TEST(AScopeUnitName, IsAValidUnitNameForEveryValidRunId) {
  for (const std::string& id : std::vector<std::string>{"a", "A.b_c:d-e", "x.", "0", std::string(128, 'x'), std::string(128, ':')}) {
    ASSERT_EQ(run_id_problem(id), std::nullopt) << id;
    EXPECT_TRUE(is_valid_unit_name(scope_unit_name(id, kNonce))) << id;
  }
}

TEST(AUnitName, IsValidWithAKnownSuffixAndAPrefixOfTheUnitAlphabet) {
  for (const char* name : {"a.scope", "nerve-r:1_x.y.scope", "foo.service", "a\\x2d.slice"})
    EXPECT_TRUE(is_valid_unit_name(name)) << name;
}

TEST(AUnitName, IsRefusedWhenEmptyOrWithoutAKnownSuffix) {
  for (const char* name : {"", "scope", ".scope", "a.", "a.bogus", "a.scope.d"})
    EXPECT_FALSE(is_valid_unit_name(name)) << name;
}

TEST(AUnitName, IsRefusedWhenItHoldsCharactersOutsideTheUnitAlphabet) {
  for (const char* name : {"a b.scope", "a/b.scope", "a\n.scope", "caf\xc3\xa9.scope", "a@b.scope"})
    EXPECT_FALSE(is_valid_unit_name(name)) << name;
}

TEST(AUnitName, IsRefusedWhenLongerThan255Characters) {
  EXPECT_TRUE(is_valid_unit_name(std::string(249, 'a') + ".scope"));
  EXPECT_FALSE(is_valid_unit_name(std::string(250, 'a') + ".scope"));
}
