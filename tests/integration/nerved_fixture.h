// SPDX-License-Identifier: LGPL-2.1-or-later
// The fixture of every integration test: a fresh runs folder and a nerved of its own, on the session
// bus of the private user manager that tests/harness/with-user-manager.sh made for this one test.
//
// SetUp fails (never skips) when the test is not under a user manager, then starts nerved with
// --ready-fd and waits for its READY line. Every process a test starts is tracked by pid and start
// time; TearDown kills what is left of them by pid, checks that no escaper process survived, stops
// nerved, unmounts the test's small tmpfs, prints the logs when the test failed, and removes the temp
// folder.
#pragma once

#include "record/record.h"
#include "support.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sdbus {
class IProxy;
}

namespace nerve::itest {

// Where the programs under test are (compile definitions made by CMake from the targets).
inline const std::string kNerved = NERVE_TEST_NERVED;
inline const std::string kNervectl = NERVE_TEST_NERVECTL;
inline const std::string kEscaper = NERVE_TEST_ESCAPER;

// The answer of a raw bus call to nerved: empty error_name on success.
struct BusReply {
  std::string error_name;
  std::string error_message;
  std::string failure;  // the helper process itself failed (no answer at all)
};

// Waits until every process of PIDS (role -> pid) has ended, all by DEADLINE; a failure for each one
// that has not, naming its role and how long after T0, when WHAT happened ("its engine was SIGKILLed").
void expect_all_gone_by(const std::map<std::string, pid_t>& pids, Clock::time_point t0, Clock::time_point deadline,
                        const std::string& what);

class NervedTest : public ::testing::Test {
 protected:
  using Env = std::map<std::string, std::optional<std::string>>;

  void SetUp() override;
  void TearDown() override;

  // Starts nerved on runs_ (ENV added to its environment) and waits (bounded) for READY; a fatal
  // failure if it does not come.
  void start_nerved(Env env = {});
  // Bounded wait for nerved to end by itself; its exit code (128+N after signal N), or -1 and a
  // failure if it is still running after kEventTimeout.
  int await_nerved_exit();
  // SIGTERM to nerved and a bounded wait; a failure unless it exits 0.
  void stop_nerved();

  // nervectl ARGS, run to its end.
  Output ctl(std::vector<std::string> args, Env env = {}, milliseconds timeout = milliseconds{30'000});
  // Starts ARGV in the background with stdout and stderr to NAME.out / NAME.err in the temp folder
  // (stdout to STDOUT_FD instead when it is given). The pid is tracked and killed in TearDown.
  pid_t start_background(const std::string& name, std::vector<std::string> argv, int stdout_fd = -1);
  // nervectl ARGS in the background (start_background).
  pid_t ctl_background(const std::string& name, std::vector<std::string> args, int stdout_fd = -1);
  // Tracks a process the test caused (killed by pid in TearDown); escapers are checked to be gone.
  void track(pid_t pid, bool escaper);

  // Waits for DIR/ready of `nerve_test_escaper --markers DIR`, then reads the pids of its four
  // roles (main, setsid, grandchild, ignoreterm) and tracks them. Empty map (and a failure) if the
  // escaper did not get ready in time.
  std::map<std::string, pid_t> await_markers(const std::string& dir);
  // Launches the escaper tree for r1 (`nervectl launch` in the background, short grace) and waits for
  // its four markers in MARKERS (made here); a failure if they do not all come, or one is not alive.
  std::map<std::string, pid_t> launch_escaper(const std::string& markers);
  // Waits for the pid file of `nerve_test_escaper --pidfile FILE`, reads and tracks it; 0 on failure.
  pid_t await_pidfile(const std::string& path);

  // lifecycle.json and receipt.json of RUN, parsed with the library's parsers (throw if absent).
  Record record(const std::string& run) const;
  Receipt receipt(const std::string& run) const;

  // A property of a user unit as systemd reports it (`systemctl --user show -p NAME --value UNIT`).
  std::string unit_property(const std::string& unit, const std::string& name);
  // The folder of a cgroup path as systemd and nerved report it ("/app.slice/x.scope").
  std::string cgroup_folder(const std::string& cgroup) const { return cgroup_root_ + cgroup; }
  // Bounded waits (5 s each) until no nerve-* unit is live and no nerve-* cgroup folder is left; a
  // failure naming what is left, WHEN ("after every race").
  void expect_no_run_left(const std::string& when);
  // The nerve-* cgroup folders under nerve.slice (runs' default slice) and app.slice, by name.
  std::vector<std::string> nerve_cgroup_folders() const {
    std::vector<std::string> out;
    for (const char* slice : {"/nerve.slice", "/app.slice"})
      for (const auto& n : list_folder(cgroup_root_ + slice))
        if (n.rfind("nerve-", 0) == 0) out.push_back(n);
    return out;
  }

  // Makes CALL on a proxy of nerved's object (org.nerve.Lifecycle1.Manager on /org/nerve/Lifecycle1)
  // in a forked helper process, so that a wrongly accepted Contain can only ever contain the helper,
  // never the test. The helper's own connection bypasses nervectl and all its checks.
  BusReply call_nerved(const std::function<void(sdbus::IProxy&)>& call);
  // The same for METHOD with a run id: Contain gets (run, 0, {}), Reap (run, 0), GetRun (run),
  // Forget (run), and any other method no arguments.
  BusReply call_nerved(const std::string& method, const std::string& run);

  std::string path(const std::string& name) const { return tmp_ + "/" + name; }

  // A tmpfs of SIZE ("64k", "1m") at DIR (made if missing), mode 0700, nosuid and nodev: a file system
  // that fills up (ENOSPC) when a test wants it to. It is mounted in this test's own mount namespace
  // (the harness gives each test one) and unmounted in TearDown once nerved is stopped. Unprivileged
  // (scripts/test.sh's second pass, NERVE_HARNESS_USER), the test first enters a user and mount
  // namespace of its own, mapping only its own uid and gid, as any user may: nerved, nervectl and the
  // commands started from then on share them. A fatal failure if it cannot be mounted.
  void mount_small_tmpfs(const std::string& dir, const std::string& size);

  std::string tmp_;          // the test's own temp folder
  std::string state_;        // tmp_/state: holds nothing but the runs folder
  std::string runs_;         // tmp_/state/runs: nerved's --runs-dir
  std::string cgroup_root_;  // NERVE_CGROUP_ROOT
  std::string nerved_log_;
  pid_t nerved_pid_ = -1;
  // More options for every start of nerved (a fixture sets them in its constructor, before SetUp).
  std::vector<std::string> nerved_args_;
  // Whether start_nerved passes --runs-dir runs_ (a test of nerved.conf's runs_dir sets it false).
  bool runs_dir_flag_ = true;

 private:
  struct Tracked {
    pid_t pid;
    std::uint64_t start_time;
    bool escaper;
  };
  std::vector<Tracked> tracked_;
  std::vector<std::string> logs_;  // files printed when the test fails
  std::vector<std::string> mounts_;  // mount_small_tmpfs's, unmounted in TearDown
};

}  // namespace nerve::itest
