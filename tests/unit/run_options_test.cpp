// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/errors.h"
#include "base/unit_properties.h"
#include "bus/run_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

using namespace nerve;
using ::testing::HasSubstr;

namespace {
using Pairs = std::vector<sdbus::Struct<std::string, std::string>>;

ContainRequest defaults() {
  ContainRequest d;
  d.run = "r1";
  d.grace_usec = 7'000'000;
  d.controls.slice = "nerve.slice";
  d.controls.properties = {"TasksMax=100"};
  d.controls.unit_properties = *parse_unit_properties(d.controls.properties);
  return d;
}

RunOptions parsed(RunMethod method, const BusOptions& options) {
  auto r = parse_run_options(method, options, defaults());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : RunOptions{};
}

Error refused(RunMethod method, const BusOptions& options) {
  auto r = parse_run_options(method, options, defaults());
  EXPECT_FALSE(r.ok()) << "the options were accepted";
  return r.ok() ? Error{} : r.error();
}

// A value of each D-Bus type an option may have, and one of another type for each.
sdbus::Variant value_of(const std::string& type) {
  if (type == "b") return sdbus::Variant(true);
  if (type == "t") return sdbus::Variant(std::uint64_t{5});
  if (type == "s") return sdbus::Variant(std::string("x"));
  if (type == "a(ss)") return sdbus::Variant(Pairs{});
  ADD_FAILURE() << "no test value of type " << type;
  return sdbus::Variant(0);
}
sdbus::Variant other_than(const std::string& type) {
  return type == "s" ? sdbus::Variant(std::uint32_t{1}) : sdbus::Variant(std::string("yes"));
}

const RunMethod kMethods[] = {RunMethod::Contain, RunMethod::Launch};
bool takes(const RunOption& o, RunMethod m) { return o.methods & static_cast<unsigned>(m); }
}  // namespace

TEST(RunOptions, WithoutOptionsAreTheDefaultsAndLaunchReapsOnExit) {
  RunOptions contain = parsed(RunMethod::Contain, {});
  EXPECT_EQ(contain.contain.run, "r1");
  EXPECT_EQ(contain.contain.grace_usec, 7'000'000u);
  EXPECT_EQ(contain.contain.controls.slice, "nerve.slice");
  EXPECT_EQ(contain.contain.controls.properties, (std::vector<std::string>{"TasksMax=100"}));
  EXPECT_FALSE(contain.contain.keep);
  EXPECT_FALSE(contain.contain.reap_on_exit);
  EXPECT_FALSE(contain.sealed);
  EXPECT_FALSE(contain.owner_bus_name);
  EXPECT_TRUE(parsed(RunMethod::Launch, {}).contain.reap_on_exit);
}

TEST(RunOptions, TheTableNamesEachOptionOnceWithAMethodAndATestableType) {
  std::set<std::string> names;
  for (const RunOption& o : run_option_table()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name << " twice";
    EXPECT_TRUE(takes(o, RunMethod::Contain) || takes(o, RunMethod::Launch)) << o.name;
    EXPECT_EQ(value_of(o.type).peekValueType(), o.type) << o.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"grace_usec", "keep", "owner_bus_name", "properties", "reap_on_exit", "sealed",
                                          "slice", "timeout_usec"}));
}

TEST(RunOptions, EachOptionOfTheRightTypeIsTakenByTheMethodsOfItsRow) {
  for (const RunOption& o : run_option_table())
    for (RunMethod m : kMethods) {
      if (!takes(o, m)) continue;
      SCOPED_TRACE(o.name);
      auto value = std::string(o.name) == "slice" ? sdbus::Variant(std::string("a-b.slice")) : value_of(o.type);
      EXPECT_TRUE(parse_run_options(m, {{o.name, value}}, defaults()).ok());
    }
}

TEST(RunOptions, StoreEachValueWhereTheRequestKeepsIt) {
  RunOptions l = parsed(RunMethod::Launch, {{"grace_usec", sdbus::Variant(std::uint64_t{3'000'000})},
                                            {"keep", sdbus::Variant(true)},
                                            {"reap_on_exit", sdbus::Variant(false)},
                                            {"sealed", sdbus::Variant(true)},
                                            {"slice", sdbus::Variant(std::string("work-ci.slice"))},
                                            {"timeout_usec", sdbus::Variant(std::uint64_t{60'000'000})}});
  EXPECT_EQ(l.contain.grace_usec, 3'000'000u);
  EXPECT_TRUE(l.contain.keep);
  EXPECT_FALSE(l.contain.reap_on_exit);
  EXPECT_TRUE(l.sealed);
  EXPECT_EQ(l.contain.controls.slice, "work-ci.slice");
  EXPECT_EQ(l.contain.controls.timeout.usec(), 60'000'000u);
  RunOptions c = parsed(RunMethod::Contain, {{"owner_bus_name", sdbus::Variant(std::string(":1.42"))}});
  EXPECT_EQ(c.owner_bus_name, std::optional<std::string>(":1.42"));
  // Given, even empty: the manager refuses it (not a unique name), it is not "no owner".
  EXPECT_EQ(parsed(RunMethod::Contain, {{"owner_bus_name", sdbus::Variant(std::string())}}).owner_bus_name,
            std::optional<std::string>(""));
}

TEST(RunOptions, PropertiesComeAfterNervedsOwnSoThatTheRunsWin) {
  for (RunMethod m : kMethods) {
    RunOptions o = parsed(m, {{"properties", sdbus::Variant(Pairs{{"TasksMax", "7"}, {"MemoryMax", "1G"}})}});
    EXPECT_EQ(o.contain.controls.properties, (std::vector<std::string>{"TasksMax=100", "TasksMax=7", "MemoryMax=1G"}));
    EXPECT_EQ(o.contain.controls.unit_properties, *parse_unit_properties(o.contain.controls.properties));
  }
}

TEST(RunOptions, LaunchsGraceZeroIsTheDefaultAndOverAnHourIsRefusedQuotingIt) {
  EXPECT_EQ(parsed(RunMethod::Launch, {{"grace_usec", sdbus::Variant(std::uint64_t{0})}}).contain.grace_usec, 7'000'000u);
  Error e = refused(RunMethod::Launch, {{"grace_usec", sdbus::Variant(std::uint64_t{3'600'000'001})}});
  EXPECT_EQ(e.name, error::InvalidArgument);
  EXPECT_THAT(e.message, HasSubstr("3600000001"));
  EXPECT_TRUE(check_grace(3'600'000'000).ok());
  EXPECT_FALSE(check_grace(3'600'000'001).ok());
}

TEST(RunOptions, AValueOfTheWrongTypeIsRefusedQuotingTheOptionAndTheTypeGiven) {
  for (const RunOption& o : run_option_table())
    for (RunMethod m : kMethods) {
      if (!takes(o, m)) continue;
      SCOPED_TRACE(o.name);
      sdbus::Variant wrong = other_than(o.type);
      Error e = refused(m, {{o.name, wrong}});
      EXPECT_EQ(e.name, error::InvalidArgument);
      EXPECT_THAT(e.message, HasSubstr("option '" + std::string(o.name) + "' must be " + o.what));
      EXPECT_THAT(e.message, HasSubstr("(" + std::string(o.type) + ")"));
      EXPECT_THAT(e.message, HasSubstr("'" + wrong.peekValueType() + "'"));
    }
  // What clients read today (tests/integration/sealing_test.cpp).
  EXPECT_THAT(refused(RunMethod::Contain, {{"sealed", sdbus::Variant(1u)}}).message, HasSubstr("'sealed' must be a boolean"));
}

TEST(RunOptions, AnUnknownOptionIsRefusedQuotingIt) {
  for (RunMethod m : kMethods) {
    Error e = refused(m, {{"frobnicate", sdbus::Variant(true)}});
    EXPECT_EQ(e.name, error::InvalidArgument);
    EXPECT_THAT(e.message, HasSubstr("unknown option 'frobnicate'"));
  }
}

TEST(RunOptions, AnOptionOfTheOtherMethodIsUnknownHereAndSaysWhoseItIs) {
  for (const RunOption& o : run_option_table())
    for (RunMethod m : kMethods) {
      if (takes(o, m)) continue;
      SCOPED_TRACE(o.name);
      Error e = refused(m, {{o.name, value_of(o.type)}});
      EXPECT_EQ(e.name, error::InvalidArgument);
      EXPECT_THAT(e.message, HasSubstr("unknown option '" + std::string(o.name) + "'"));
      EXPECT_THAT(e.message, HasSubstr(m == RunMethod::Contain ? "of Launch only" : "of Contain only"));
    }
}

TEST(RunOptions, ABadSliceOrPropertyIsRefusedWithTheErrorOfItsCheck) {
  for (RunMethod m : kMethods) {
    Error slice = refused(m, {{"slice", sdbus::Variant(std::string("not-a-slice"))}});
    EXPECT_EQ(slice.name, error::InvalidArgument);
    EXPECT_THAT(slice.message, HasSubstr("'not-a-slice'"));
    Error property = refused(m, {{"properties", sdbus::Variant(Pairs{{"MemoryMax", "lots"}})}});
    EXPECT_EQ(property.name, kInvalidProperty);
    EXPECT_THAT(property.message, HasSubstr("'MemoryMax'"));
  }
}

TEST(RunOptions, TheFirstBadOptionInKeyOrderIsTheOneRefused) {
  Error e = refused(RunMethod::Launch, {{"timeout_usec", sdbus::Variant(true)}, {"keep", sdbus::Variant(1u)}});
  EXPECT_THAT(e.message, HasSubstr("'keep'"));
}
