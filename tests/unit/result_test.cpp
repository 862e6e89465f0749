// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/result.h"

#include <gtest/gtest.h>

#include <string>

using namespace nerve;

TEST(AResult, HoldsAValue) {
  Result<std::string> r = std::string("unit");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "unit");
  EXPECT_EQ(r->size(), 4u);
}

TEST(AResult, HoldsAnErrorWithItsNameAndMessage) {
  Result<int> r = Error{"org.nerve.Lifecycle1.Error.NoSuchRun", "no run 'x'"};
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().name, "org.nerve.Lifecycle1.Error.NoSuchRun");
  EXPECT_EQ(r.error().message, "no run 'x'");
}

TEST(AVoidResult, IsOkUnlessItHoldsAnError) {
  EXPECT_TRUE(Result<void>());
  Result<void> failed = Error{"n", "m"};
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().name, "n");
}

TEST(AReplyOnce, PassesOnlyTheFirstAnswerOn) {
  int calls = 0;
  int last = 0;
  ReplyOnce<int> reply([&](Result<int> r) {
    ++calls;
    last = *r;
  });
  EXPECT_TRUE(reply.pending());
  reply(1);
  reply(2);
  EXPECT_FALSE(reply.pending());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(last, 1);
}
