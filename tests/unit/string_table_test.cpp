// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/string_table.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace sample {

// An enum of its own, with a gap in its values (the table need not follow the numbers).
enum class Colour { Red = 1, Green = 4, Blue };

constexpr auto string_table(Colour) {
  return std::to_array<nerve::Named<Colour>>({
      {Colour::Red, "red"},
      {Colour::Green, "green"},
      {Colour::Blue, "light_blue"},
  });
}

// An enum without a table.
enum class Plain { A, B };

}  // namespace sample

namespace {

using nerve::from_string;
using nerve::name_of;
using nerve::Named;
using nerve::to_string;
using sample::Colour;

// Both directions are usable at compile time.
static_assert(name_of(Colour::Blue) == "light_blue");
static_assert(from_string<Colour>("green") == Colour::Green);
static_assert(!from_string<Colour>("Green"));
static_assert(nerve::StringTabled<Colour>);
static_assert(!nerve::StringTabled<sample::Plain>);
static_assert(!nerve::StringTabled<int>);

TEST(StringTable, NamesEveryValueByItsRow) {
  EXPECT_EQ(to_string(Colour::Red), "red");
  EXPECT_EQ(to_string(Colour::Green), "green");
  EXPECT_EQ(to_string(Colour::Blue), "light_blue");
}

TEST(StringTable, ReadsEveryNameBackToItsValue) {
  for (const auto& row : nerve::string_table_rows<Colour>()) {
    EXPECT_EQ(from_string<Colour>(row.name), row.value) << row.name;
    EXPECT_EQ(from_string<Colour>(to_string(row.value)), row.value) << row.name;
  }
  EXPECT_EQ(nerve::string_table_rows<Colour>().size(), 3u);
}

TEST(StringTable, RefusesANameWithoutARow) {
  EXPECT_EQ(from_string<Colour>(""), std::nullopt);
  EXPECT_EQ(from_string<Colour>("RED"), std::nullopt) << "names are exact";
  EXPECT_EQ(from_string<Colour>("red "), std::nullopt);
  EXPECT_EQ(from_string<Colour>("light"), std::nullopt) << "no prefix match";
  EXPECT_EQ(from_string<Colour>(std::string_view("red\0", 4)), std::nullopt);
}

TEST(StringTable, NamesAValueWithoutARowUnknown) {
  EXPECT_EQ(name_of(static_cast<Colour>(2)), "unknown");
  EXPECT_EQ(to_string(static_cast<Colour>(99)), "unknown");
}

TEST(StringTable, ChecksItsRowsForAValueOrANameTwice) {
  using Rows = std::array<Named<Colour>, 2>;
  EXPECT_TRUE(nerve::valid_rows(Rows{{{Colour::Red, "red"}, {Colour::Green, "green"}}}));
  EXPECT_FALSE(nerve::valid_rows(Rows{{{Colour::Red, "red"}, {Colour::Red, "green"}}})) << "a value twice";
  EXPECT_FALSE(nerve::valid_rows(Rows{{{Colour::Red, "red"}, {Colour::Green, "red"}}})) << "a name twice";
  EXPECT_FALSE(nerve::valid_rows(Rows{{{Colour::Red, "red"}, {Colour::Green, ""}}})) << "an empty name";
}

}  // namespace
