// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/bus_label.h"

#include <gtest/gtest.h>
#include <systemd/sd-bus.h>

#include <cstdlib>
#include <string>

using namespace nerve;

namespace {

// The last element of the path sd_bus_path_encode makes of 'name' under /p.
std::string sd_bus_label(const std::string& name) {
  char* path = nullptr;
  EXPECT_GE(::sd_bus_path_encode("/p", name.c_str(), &path), 0);
  std::string label = path ? std::string(path).substr(3) : "";
  std::free(path);
  return label;
}

TEST(ABusPathLabel, EscapesALeadingDigitAsSdBusPathEncodeDoes) {
  for (std::string name : {"1r", "r1", "nerve-r1-0123.scope", "9", "a_b", "Ab.Cd", "é"}) {
    EXPECT_EQ(bus_path_label(name, LeadingDigit::Escaped), sd_bus_label(name)) << name;
  }
  EXPECT_EQ(bus_path_label("1r", LeadingDigit::Escaped), "_31r");
}

TEST(ABusPathLabel, KeepsALeadingDigitPlainWhenAsked) {
  EXPECT_EQ(bus_path_label("1r-2", LeadingDigit::Plain), "1r_2d2");
  EXPECT_EQ(bus_path_label("r-2", LeadingDigit::Plain), "r_2d2");
}

}  // namespace
