// SPDX-License-Identifier: LGPL-2.1-or-later
// MigrationPrimer: prime() returns at once and its thread writes nerved's pid to the cgroup.procs it
// was given (a no-op migration); without one it does nothing; a failed write never reaches the caller.
#include "system/migration_primer.h"

#include "base/host.h"
#include "temp_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace nerve {
namespace {

// Waits (bounded, 5 s) until the primer has written N times.
bool written(const MigrationPrimer& p, unsigned n) {
  for (int i = 0; i < 5000 && p.done() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return p.done() >= n;
}

TEST(AMigrationPrimer, WritesItsOwnPidToTheGivenCgroupProcsOnAThreadOfItsOwn) {
  test::TempDir tmp;
  std::string procs = tmp / "cgroup.procs";
  std::ofstream(procs).close();
  MigrationPrimer primer(Fd(::open(procs.c_str(), O_WRONLY | O_CLOEXEC)));
  primer.prime();
  ASSERT_TRUE(written(primer, 1));
  std::ifstream in(procs);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::to_string(::getpid()));
}

// A Launch primes at the call's arrival and contain() primes again; a prime while a no-op
// migration is under way (its grace period running) adds no second one. The "cgroup.procs" here is
// a full pipe, so the thread's write blocks until the test drains it.
TEST(AMigrationPrimer, AddsNoMigrationWhileOneIsUnderWay) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  Fd rd(p[0]), wr(p[1]);
  const std::string page(4096, 'x');
  while (::write(wr.get(), page.data(), page.size()) > 0) {
  }
  while (::write(wr.get(), "x", 1) > 0) {
  }
  ASSERT_EQ(::fcntl(wr.get(), F_SETFL, 0), 0);  // the primer's write now blocks: the pipe is full
  MigrationPrimer primer(std::move(wr));
  for (int i = 0; i < 20; ++i) {  // the thread is in its write after the first few
    primer.prime();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(primer.done(), 0u) << "the write did not block on the full pipe";
  char buf[4096];
  while (::read(rd.get(), buf, sizeof buf) == static_cast<ssize_t>(sizeof buf)) {
  }
  ASSERT_TRUE(written(primer, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a second write would come at once
  EXPECT_EQ(primer.done(), 1u) << "primes during the first write asked for another migration";
}

TEST(AMigrationPrimer, DoesNothingWithoutACgroupProcs) {
  MigrationPrimer primer{Fd()};
  primer.prime();
  EXPECT_EQ(primer.done(), 0u);
}

TEST(AMigrationPrimer, IgnoresAFailedWrite) {
  MigrationPrimer primer(Fd(::open("/dev/full", O_WRONLY | O_CLOEXEC)));
  primer.prime();
  primer.prime();  // logs the first failure; never throws, never blocks
  EXPECT_EQ(primer.done(), 0u);
}

TEST(AMigrationPrimer, FindsTheCgroupProcsOfItsOwnCgroup) {
  auto root = cgroup_root();
  if (!root) GTEST_SKIP() << "no cgroup2 here";
  Fd fd = MigrationPrimer::open_own_procs(*root);
  EXPECT_TRUE(fd) << "cannot open the cgroup.procs of this process's cgroup under " << *root;
}

}  // namespace
}  // namespace nerve
