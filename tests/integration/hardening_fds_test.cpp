// SPDX-License-Identifier: LGPL-2.1-or-later
// File descriptors. Every watched owner holds a pidfd. nerved raises its soft
// RLIMIT_NOFILE to the hard limit at start, and when it really runs out, that is an error for one
// call or one run (retried later), never an exit and never "owner gone" for a live owner.
#include "hardening_support.h"

#include <gmock/gmock.h>
#include <sys/resource.h>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;

class HardeningFds : public Hardening {
 protected:
  // RLIMIT_NOFILE of PID as "soft hard".
  static rlimit nofile_of(pid_t pid) {
    rlimit r{};
    ::prlimit(pid, RLIMIT_NOFILE, nullptr, &r);
    return r;
  }
  static std::size_t open_fds(pid_t pid) { return list_folder("/proc/" + std::to_string(pid) + "/fd").size(); }

  // How many of RUNS have a record in STATE now.
  std::size_t count_state(const std::vector<std::string>& runs, const std::string& state) {
    std::size_t n = 0;
    for (const auto& r : runs) {
      auto text = read_file(runs_ + "/" + r + "/lifecycle.json");
      try {
        if (text && to_string(parse_record(*text).state) == state) ++n;
      } catch (const std::exception&) {
      }
    }
    return n;
  }

  // Starts nerved with a soft RLIMIT_NOFILE of SOFT (hard HARD) inherited from this process.
  void start_nerved_with_nofile(rlim_t soft, rlim_t hard) {
    rlimit saved{};
    ::getrlimit(RLIMIT_NOFILE, &saved);
    rlimit low{soft, hard};
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0) << std::strerror(errno);
    start_nerved();
    ::setrlimit(RLIMIT_NOFILE, &saved);
  }
};

TEST_F(HardeningFds, NervedRaisesItsSoftLimitToTheHardLimitAtStart) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved_with_nofile(256, 8192));
  rlimit r = nofile_of(nerved_pid_);
  EXPECT_EQ(r.rlim_cur, 8192u) << "soft limit " << r.rlim_cur << ", hard " << r.rlim_max;
  EXPECT_EQ(r.rlim_max, 8192u);
}

// Started with the default-like soft limit of 256, nerved holds 300 live runs of one owner, all
// watched (none is taken for "owner gone" while the owner lives), and reaps them all when it goes.
TEST_F(HardeningFds, HoldsMoreRunsThanItsInitialSoftLimitAndReapsThemWhenTheOwnerGoes) {
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved_with_nofile(256, 8192));
  auto runs = run_ids("fd", 300);
  pid_t owner = start_owner("owner", runs);
  ASSERT_TRUE(await_state(runs, "running", 90'000ms))
      << count_state(runs, "running") << " of " << runs.size() << " running, " << count_state(runs, "reaped")
      << " reaped while their owner lives";
  EXPECT_TRUE(alive(nerved_pid_));
  ASSERT_EQ(::kill(owner, SIGKILL), 0);
  EXPECT_TRUE(await_state(runs, "reaped", 60'000ms))
      << count_state(runs, "reaped") << " of " << runs.size() << " reaped after their owner went";
  EXPECT_EQ(await_no_nerve_units(10'000ms), "");
}

// Out of fds for real (the hard limit is low too, so raising cannot help): nerved restarts with 160
// live runs and fds for about 100 of them. Reading a record or /proc, or opening a pidfd, fails for
// some runs: that is an error for those runs, retried, never "owner gone" (main reaped live owners'
// runs here) and never an exit; once the owner goes, every run is reaped.
TEST_F(HardeningFds, OutOfFdsIsAnErrorForOneRunNeverOwnerGoneNorAnExit) {
  std::size_t base = open_fds(nerved_pid_);
  auto runs = run_ids("ex", 160);
  pid_t owner = start_owner("owner", runs);
  ASSERT_TRUE(await_state(runs, "running", 60'000ms));
  stop_nerved();
  // The limit is inherited from this process, which must still be able to start nerved under it
  // (spawn() moves the ready fd to 100 and up first).
  rlim_t limit = std::max<rlim_t>(base + 30, 128);
  ASSERT_LT(limit, base + runs.size()) << "too few runs to run out of fds";
  ASSERT_NO_FATAL_FAILURE(start_nerved_with_nofile(limit, limit));
  eventually([] { return false; }, 3000ms);  // reconciliation and a few retries
  ASSERT_THAT(log(), ::testing::HasSubstr("Too many open files")) << "nerved never ran out of fds: this proves nothing";
  std::size_t reaped_early = count_state(runs, "reaped") + count_state(runs, "reaping");
  EXPECT_TRUE(alive(nerved_pid_)) << "nerved exited when it ran out of fds:\n" << log();
  EXPECT_EQ(reaped_early, 0u) << "runs were reaped although their owner lives (a failed read taken for owner gone)";
  Timed list = timed_call("ListRuns", "", 5000ms);
  // ListRuns may itself fail for lack of fds; it must answer, named, either way.
  EXPECT_TRUE(list.error.empty() || list.error.rfind("org.nerve.Lifecycle1.Error.", 0) == 0)
      << list.error << ": " << list.message;

  ASSERT_EQ(::kill(owner, SIGKILL), 0);
  EXPECT_TRUE(eventually([&] { return count_state(runs, "reaped") == runs.size(); }, 90'000ms))
      << count_state(runs, "reaped") << " of " << runs.size() << " runs reaped after their owner went\n" << log();
  EXPECT_TRUE(alive(nerved_pid_));
  EXPECT_EQ(await_no_nerve_units(30'000ms), "");
}

}  // namespace
}  // namespace nerve::itest
