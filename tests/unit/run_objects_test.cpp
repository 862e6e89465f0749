// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bus/run_objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>

using namespace nerve;

// The run objects' sd-bus vtable is written out in run_objects.cpp (sdbus-c++ 1.2 cannot serve a
// fallback path); it must serve the Run interface exactly as the XML defines it.
TEST(TheRunObjects, ServeThePropertiesOfTheRunInterfaceInTheXml) {
  std::ifstream in(std::string(NERVE_UNIT_FIXTURES) + "/../../../lib/bus/org.nerve.Lifecycle1.xml");
  std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto begin = xml.find("<interface name=\"org.nerve.Lifecycle1.Run\">");
  ASSERT_NE(begin, std::string::npos);
  std::string run = xml.substr(begin, xml.find("</interface>", begin) - begin);
  std::vector<std::pair<std::string, std::string>> in_xml;
  std::regex property("<property name=\"([A-Za-z]+)\" type=\"([a-z]+)\" access=\"read\"/>");
  for (std::sregex_iterator it(run.begin(), run.end(), property), end; it != end; ++it)
    in_xml.emplace_back((*it)[1], (*it)[2]);
  EXPECT_EQ(kRunProperties, in_xml);
  EXPECT_EQ(run.find("<method"), std::string::npos) << "the Run interface gained a method: serve it in run_objects.cpp";
  EXPECT_EQ(run.find("<signal"), std::string::npos) << "the Run interface gained a signal: serve it in run_objects.cpp";
}

TEST(TheRunObjects, HaveThePathsSdBusPathEncodeMakes) {
  EXPECT_EQ(run_object_path("r1"), "/org/nerve/Lifecycle1/run/r1");
  EXPECT_EQ(run_object_path("1a.b"), "/org/nerve/Lifecycle1/run/_31a_2eb");
}
