// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/systemd_link.h"

#include <gtest/gtest.h>

using namespace nerve;

TEST(ParseSystemdBus, ReadsEachWayOfTheCommandLine) {
  EXPECT_EQ(parse_systemd_bus("auto"), SystemdBus::Auto);
  EXPECT_EQ(parse_systemd_bus("private"), SystemdBus::Private);
  EXPECT_EQ(parse_systemd_bus("session"), SystemdBus::Session);
  EXPECT_EQ(to_string(SystemdBus::Private), "private");
}

TEST(ParseSystemdBus, TakesAutoForAnyOtherWord) {
  EXPECT_EQ(parse_systemd_bus(""), SystemdBus::Auto);
  EXPECT_EQ(parse_systemd_bus("Session"), SystemdBus::Auto);
}
