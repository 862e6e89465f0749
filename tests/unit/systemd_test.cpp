// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/systemd.h"

#include <gtest/gtest.h>

using namespace nerve;

TEST(AUnitObjectPath, EscapesEverythingButLettersAndDigitsAsSystemdDoes) {
  EXPECT_EQ(unit_object_path("nerve-r1-0123456789abcdef.scope"),
            "/org/freedesktop/systemd1/unit/nerve_2dr1_2d0123456789abcdef_2escope");
}

TEST(AUnitObjectPath, EscapesALeadingDigit) {
  EXPECT_EQ(unit_object_path("1.scope"), "/org/freedesktop/systemd1/unit/_31_2escope");
}

TEST(ANoSuchUnitError, IsToldApartFromAFailedQuery) {
  EXPECT_TRUE(is_no_such_unit(Error{systemd_error::NoSuchUnit, "unit not found"}));
  EXPECT_FALSE(is_no_such_unit(Error{"org.freedesktop.DBus.Error.NoReply", "timeout"}));
}
