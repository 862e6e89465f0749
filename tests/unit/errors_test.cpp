// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/errors.h"

#include "bus/bus_reply.h"

#include <gtest/gtest.h>
#include <sdbus-c++/Error.h>

using namespace nerve;

TEST(QuoteValue, PutsThePlainValueInSingleQuotes) {
  EXPECT_EQ(quote_value("run-1"), "'run-1'");
  EXPECT_EQ(quote_value(""), "''");
}

TEST(QuoteValue, EscapesNewlineTabAndCarriageReturn) {
  EXPECT_EQ(quote_value("a\nb\tc\rd"), "'a\\nb\\tc\\rd'");
}

TEST(QuoteValue, EscapesQuotesAndBackslashes) { EXPECT_EQ(quote_value("it's a\\b"), "'it\\'s a\\\\b'"); }

TEST(QuoteValue, EscapesOtherControlCharactersInHex) {
  EXPECT_EQ(quote_value(std::string("a\x01") + '\0' + "\x1b\x7f"), "'a\\x01\\x00\\x1b\\x7f'");
}

TEST(QuoteValue, KeepsNonAsciiBytesAsTheyAre) { EXPECT_EQ(quote_value("caf\xc3\xa9"), "'caf\xc3\xa9'"); }

TEST(ABusError, IsThrownAsAnSdbusErrorWithTheNameAndTheMessage) {
  try {
    throw_bus_error(Error{error::NoSuchRun, "no run 'x'"});
    FAIL() << "no error";
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.nerve.Lifecycle1.Error.NoSuchRun");
    EXPECT_EQ(e.getMessage(), "no run 'x'");
  }
}

TEST(AnErrorName, LivesUnderTheServicePrefix) {
  for (const char* name : {error::InvalidRunId, error::InvalidArgument, error::NoSuchRun, error::RunFinished,
                           error::ContainmentUnavailable, error::RecordFailed, error::ScopeFailed,
                           error::AccessDenied})
    EXPECT_EQ(std::string(name).rfind(error::kPrefix, 0), 0u) << name;
}
