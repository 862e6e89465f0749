// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved.conf against the real daemon: default_grace and runs_dir from the file; a bad file stops
// nerved (exit 2) naming the file, the line and the key; keep_finished prunes reaped runs, never a
// running one.
#include "nerved_fixture.h"

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <fstream>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;

class NervedConf : public NervedTest {
 protected:
  // Restarts nerved with --config FILE holding TEXT (and no --runs-dir flag unless WITH_FLAG).
  void restart_with(const std::string& text, bool with_flag = true) {
    std::ofstream(path("nerved.conf")) << text;
    stop_nerved();
    nerved_args_ = {"--config", path("nerved.conf")};
    runs_dir_flag_ = with_flag;
    ASSERT_NO_FATAL_FAILURE(start_nerved());
  }
  bool has_record(const std::string& run) const {
    struct stat st {};
    return ::stat((runs_ + "/" + run + "/lifecycle.json").c_str(), &st) == 0;
  }
};

TEST_F(NervedConf, SetsTheRunsFolderAndTheDefaultGrace) {
  ASSERT_NO_FATAL_FAILURE(restart_with("# test\nruns_dir = " + runs_ + "\ndefault_grace = 2500ms\n", false));
  EXPECT_THAT(read_file(nerved_log_).value_or(""), HasSubstr("configuration: " + path("nerved.conf")));
  EXPECT_THAT(read_file(nerved_log_).value_or(""), HasSubstr("runs in " + runs_));
  pid_t launcher = ctl_background("launch", {"launch", "r1", "--", kEscaper, "--pidfile", path("run.pid")});
  ASSERT_EQ(await_pidfile(path("run.pid")), launcher);
  EXPECT_EQ(record("r1").grace_usec, 2'500'000u) << "a launch without --grace takes default_grace";
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
}

TEST_F(NervedConf, AnUnknownKeyStopsNervedNamingTheFileTheLineAndTheKey) {
  std::ofstream(path("bad.conf")) << "default_grace = 5s\n\nkeep_everything = yes\n";
  Output second = run(command({kNerved, "--config", path("bad.conf")}));
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_THAT(second.err, HasSubstr(path("bad.conf") + ":3: unknown key 'keep_everything'"));
  std::ofstream(path("bad2.conf")) << "default_grace = forever-ish\n";
  second = run(command({kNerved, "--config", path("bad2.conf")}));
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_THAT(second.err, HasSubstr(path("bad2.conf") + ":1: key default_grace: bad value 'forever-ish'"));
}

TEST_F(NervedConf, KeepFinishedPrunesReapedRunsButNeverARunningOne) {
  ASSERT_NO_FATAL_FAILURE(restart_with("keep_finished = 1s\n"));
  pid_t live = ctl_background("live", {"launch", "live", "--", kEscaper, "--pidfile", path("live.pid")});
  ASSERT_EQ(await_pidfile(path("live.pid")), live);
  Output done = ctl({"launch", "--grace", kShortGraceArg, "done", "--", "true"});
  ASSERT_EQ(done.exit_code, 0) << done.err;
  Output reaped = ctl({"reap", "--grace", kShortGraceArg, "done"});
  ASSERT_EQ(reaped.exit_code, 0) << reaped.out << reaped.err;
  ASSERT_TRUE(has_record("done")) << "a reaped run is kept for keep_finished first";
  EXPECT_TRUE(eventually([&] { return !has_record("done"); }, milliseconds{10'000}))
      << "a run reaped more than keep_finished ago must be forgotten within a few passes";
  EXPECT_TRUE(eventually(
      [&] { return read_file(nerved_log_).value_or("").find("pruned 1 finished run(s)") != std::string::npos; },
      milliseconds{5'000}));
  EXPECT_TRUE(has_record("live")) << "a running run is never pruned";
  EXPECT_EQ(record("live").state, RunState::Running);
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "live"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
}

}  // namespace
}  // namespace nerve::itest
