// SPDX-License-Identifier: LGPL-2.1-or-later
// The direct connection of system/sdbus_compat.h against the real libsystemd, where it needs no bus: a
// socket that is not there. sdbus-c++ 1.2 drops the sd_bus of a start that failed without an unref
// (about 1.8 KB each time), so every failed attempt to use the user manager's private socket would
// leak one; sdbus_compat.cpp's sd_bus_start frees it.
#include "system/sdbus_compat.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sdbus-c++/Error.h>
#include <sdbus-c++/IConnection.h>

#include <cstddef>

using namespace nerve;

namespace {
const char* const kMissing = "unix:path=/nonexistent/nerve-unit-test/systemd/private";

void attempt() {
  try {
    create_direct_connection(kMissing);
  } catch (const sdbus::Error&) {
  }
}
}  // namespace

TEST(ADirectConnection, ThrowsWhenTheSocketIsNotThere) {
  EXPECT_THROW(create_direct_connection(kMissing), sdbus::Error);
}

// The heap in use after 200 failed attempts grows by far less than one sd_bus per attempt. Under
// AddressSanitizer, whose heap mallinfo2 does not see, LeakSanitizer checks the same at exit (the
// sanitizer pass, docs/testing.md).
TEST(ADirectConnection, FreesItsConnectionWhenTheStartFails) {
  constexpr int kAttempts = 200;
  constexpr std::size_t kLeakedBytesPerAttempt = 1024;  // an sd_bus of systemd 252 is about 1.8 KB
  attempt();  // allocations made once (dlsym, sd-bus's tables) stay out of the count
  std::size_t before = ::mallinfo2().uordblks;
  for (int i = 0; i < kAttempts; ++i) attempt();
  std::size_t after = ::mallinfo2().uordblks;
  EXPECT_LT(after, before + kAttempts * kLeakedBytesPerAttempt / 4)
      << "the heap grew by " << (after - before) / kAttempts << " bytes per failed connection";
}
