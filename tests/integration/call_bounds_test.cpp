// SPDX-License-Identifier: LGPL-2.1-or-later
// How long nervectl waits for nerved: every call is bounded by what it asked. A reap without --grace
// waits the run's own grace (its GraceUSec), however long, and a relaunch without --grace nerved's
// default grace (DefaultGraceUSec); a nerved that does not answer (stopped)
// makes reap, cancel, freeze, thaw and forget exit 69 within their bound, not hang.
#include "nerved_fixture.h"

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

using CallBounds = NervedTest;

// A grace longer than the 70 s a reap without --grace used to wait (the default 10 s grace plus the
// 60 s margin), for a run whose command ignores TERM: the reap must wait all of it and then answer
// with the receipt, not exit 69 while the reap goes on. (A long test, on purpose: a shorter grace
// would pass under the old bound too.)
TEST_F(CallBounds, AReapWithoutGraceWaitsTheRunsOwnGrace) {
  constexpr auto kGrace = 75s;
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "--grace", "75", "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_TRUE(eventually([&] { return ignores_signal(pids.at("ignoreterm"), SIGTERM); }, kEventTimeout));

  Output reap = ctl({"reap", "r1"}, {}, milliseconds{kGrace + 60s});
  EXPECT_EQ(reap.exit_code, 0) << reap.err;
  EXPECT_GE(reap.took, milliseconds{kGrace}) << "the reap did not wait the run's grace";
  EXPECT_THAT(reap.out, HasSubstr("complete"));
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  EXPECT_TRUE(r.killed) << "the TERM ignorer was not SIGKILLed after the grace";
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
}

// The same for a relaunch: `launch` without --grace reaps the earlier attempt with nerved's default
// grace (nerved.conf), not the built-in 10 s, and must wait for it (asking DefaultGraceUSec once the
// built-in bound runs out) rather than exit 69 while nerved reaps.
TEST_F(CallBounds, ARelaunchWithoutGraceWaitsNervedsDefaultGrace) {
  constexpr auto kGrace = 75s;
  std::ofstream(path("nerved.conf")) << "default_grace = 75s\n";
  stop_nerved();
  nerved_args_ = {"--config", path("nerved.conf")};
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_TRUE(eventually([&] { return ignores_signal(pids.at("ignoreterm"), SIGTERM); }, kEventTimeout));
  ASSERT_EQ(record("r1").grace_usec, 75'000'000u);

  Output relaunch = ctl({"launch", "r1", "--", "true"}, {}, milliseconds{kGrace + 60s});
  EXPECT_EQ(relaunch.exit_code, 0) << relaunch.err;
  EXPECT_GE(relaunch.took, milliseconds{kGrace}) << "the relaunch did not wait the earlier attempt's grace";
  EXPECT_EQ(record("r1").attempt, 2u);
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.err;
}

// nerved stopped (SIGSTOP): the calls reach its socket and nobody answers. Each verb gives up within
// its bound (25 s for a call that waits for no reap, and for a reap or cancel without --grace until
// the run's grace is known) and exits 69 saying nerved did not answer; none waits forever.
TEST_F(CallBounds, EveryVerbGivesUpOnAStoppedNervedWithinItsBound) {
  constexpr auto kBound = 25s;
  auto pids = launch_escaper(path("markers"));
  ASSERT_EQ(pids.size(), 4u);

  ASSERT_EQ(::kill(nerved_pid_, SIGSTOP), 0);
  auto t0 = Clock::now();
  std::map<std::string, pid_t> calls;
  for (const char* verb : {"reap", "cancel", "freeze", "thaw", "forget"})
    calls[verb] = ctl_background(verb, {verb, "r1"});
  std::map<std::string, std::optional<int>> codes;
  for (const auto& [verb, pid] : calls) codes[verb] = wait_child(pid, milliseconds{kBound + 20s} - since(t0));
  auto took = since(t0);
  ASSERT_EQ(::kill(nerved_pid_, SIGCONT), 0);

  for (const auto& [verb, code] : codes) {
    ASSERT_TRUE(code) << "nervectl " << verb << " still waits for a stopped nerved after " << took.count() << " ms";
    EXPECT_EQ(*code, 69) << verb << ": " << read_file(path(std::string(verb) + ".err")).value_or("");
    EXPECT_THAT(read_file(path(std::string(verb) + ".err")).value_or(""), HasSubstr("nerved did not answer"))
        << verb;
  }
  EXPECT_GE(took, milliseconds{kBound}) << "a verb gave up before its bound";
  EXPECT_LT(took, milliseconds{kBound + 15s});

  // nerved, going on, answers again (what it does with the calls of clients that are gone is not
  // this test's subject): the run is reaped here.
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.err;
  for (const auto& [role, pid] : pids) EXPECT_TRUE(wait_gone(pid, kEventTimeout)) << role;
}

}  // namespace
}  // namespace nerve::itest
