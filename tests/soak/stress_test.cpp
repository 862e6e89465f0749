// SPDX-License-Identifier: LGPL-2.1-or-later
// Stress tests: hundreds of launches in a row, for races that show once in many runs. A command
// that ends at once races systemd's garbage collection of its empty scope with the reap that
// follows; whichever way the race goes, a run's own scope is never "another unit".
//
// Part of nerve_soak_tests (label soak, with soak.cpp), not of the ordinary integration suite. Each
// test keeps the name it had there (AnEngine.*, ASupervisor.*), under its own private user manager.
#include "engine_fixture.h"

#include <gmock/gmock.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nerve::itest {
namespace {

using ::testing::IsEmpty;

// `nervectl launch --wait`, as in supervise_test.cpp; the stress test needs none of its helpers.
class ASupervisor : public NervedTest {};

// Commands that end at once race systemd's garbage collection of their empty scopes with nerved's
// reap_on_exit. Whichever way that race goes, a run's own scope is never "another unit": every
// receipt must say complete or no_scope, never refused. (Many launches, back to back, so that
// systemd's clean-up of one run's scope overlaps nerved's reap of another.)
TEST_F(AnEngine, LaunchingManyShortCommandsNeverGetsARunsOwnVanishingScopeRefused) {
  ASSERT_NO_FATAL_FAILURE(connect());
  constexpr int kRuns = 600;
  for (int i = 0; i < kRuns; ++i) {
    try {
      launch("short" + std::to_string(i), {"true"}, STDERR_FILENO);
    } catch (const sdbus::Error& e) {
      FAIL() << "Launch " << i << " failed: " << e.getName() << ": " << e.getMessage();
    }
  }
  std::map<std::string, std::string> bad;  // run -> outcome and error
  auto deadline = Clock::now() + kEventTimeout;
  for (int i = 0; i < kRuns; ++i) {
    std::string run = "short" + std::to_string(i);
    std::string file = runs_ + "/" + run + "/receipt.json";
    // reap_on_exit writes the receipt; "reaped" is the state once it is final.
    while ((!std::filesystem::exists(file) || to_string(record(run).state) != "reaped") && Clock::now() < deadline) {
      struct timespec ts {0, 10'000'000};
      ::nanosleep(&ts, nullptr);
    }
    if (!std::filesystem::exists(file)) {
      bad[run] = "no receipt; state " + to_string(record(run).state);
      continue;
    }
    Receipt r = receipt(run);
    std::string outcome = to_string(r.outcome);
    if (outcome != "complete" && outcome != "no_scope") bad[run] = outcome + ": " + r.error;
  }
  EXPECT_THAT(bad, IsEmpty()) << bad.size() << " of " << kRuns << " runs of `true` did not end complete or no_scope";
  EXPECT_EQ(await_no_nerve_units(), "");
}

// A command that ends at once races systemd's garbage collection of its empty scope with the reap
// that follows. Whichever way the race goes, the run's own scope is never "another unit": the
// receipt must say complete or no_scope, never refused. (Seen about once in 30 single launches,
// so the test makes many.)
TEST_F(ASupervisor, OfManyShortCommandsNeverTakesItsOwnVanishingScopeForAnotherUnit) {
  constexpr int kRuns = 150;
  std::map<std::string, std::string> bad;  // run -> outcome and error
  for (int i = 0; i < kRuns; ++i) {
    std::string run = "short" + std::to_string(i);
    // Three kinds of quick ends: exit 0, exit 7 from a shell, and an exec that fails (127).
    std::vector<std::string> cmd = i % 3 == 0   ? std::vector<std::string>{"true"}
                                   : i % 3 == 1 ? std::vector<std::string>{"sh", "-c", "exit 7"}
                                                : std::vector<std::string>{path("no-such-command")};
    int expected = i % 3 == 0 ? 0 : i % 3 == 1 ? 7 : 127;
    std::vector<std::string> args = {"launch", "--wait", "--grace", kShortGraceArg, run, "--"};
    args.insert(args.end(), cmd.begin(), cmd.end());
    Output o = ctl(args);
    if (o.exit_code != expected) {
      bad[run] = "exit " + std::to_string(o.exit_code) + ": " + o.err;
      continue;
    }
    if (!std::filesystem::exists(runs_ + "/" + run + "/receipt.json")) {
      bad[run] = "no receipt";
      continue;
    }
    Receipt r = receipt(run);
    std::string outcome = to_string(r.outcome);
    if (outcome != "complete" && outcome != "no_scope") bad[run] = outcome + ": " + r.error;
  }
  EXPECT_THAT(bad, IsEmpty()) << bad.size() << " of " << kRuns << " short runs did not end complete or no_scope";
}

}  // namespace
}  // namespace nerve::itest
