// SPDX-License-Identifier: LGPL-2.1-or-later
// Soak: 50 runs launched and reaped by 5 concurrent clients while nerved is SIGKILLed and restarted
// twice. Every run must end with a final receipt, and nothing of any run may be left: no process
// (every pid of every escaper's markers folder is checked), no nerve-* unit, no nerve-* cgroup.
//
// A client does what an engine would do: `nervectl launch --grace 0.2 RUN -- escaper --markers DIR`
// in the background, wait (bounded) until the escaper proves it started, then `nervectl reap RUN`.
// A call that failed because nerved was down or died during it is retried, boundedly: a launch that
// exited 125 (its command never started) is relaunched under the same run id (nerved reaps the earlier
// attempt first); a reap that exited 69 (unreachable) or 75 (pending_retry) is asked again.
//
// Its own executable, nerve_soak_tests (ctest -L soak), one test per private user manager as for the
// integration tests.
#include "nerved_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gmock/gmock.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;

constexpr int kClients = 5;
constexpr int kRunsPerClient = 10;
constexpr int kRuns = kClients * kRunsPerClient;
constexpr int kMaxLaunchTries = 30;
constexpr int kMaxReapTries = 30;
constexpr milliseconds kReadyTimeout{15'000};
constexpr const char* kRoles[] = {"main", "setsid", "grandchild", "ignoreterm"};


enum class Started { Ready, Exited, TimedOut };

// Waits until DIR/ready exists (the escaper started) or PID ended (the launch failed), bounded;
// inotify on DIR and a pidfd of PID, no sleeping.
Started await_ready_or_exit(const std::string& dir, pid_t pid, milliseconds timeout) {
  int in = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (in >= 0) ::inotify_add_watch(in, dir.c_str(), IN_CREATE | IN_MOVED_TO);
  auto deadline = Clock::now() + timeout;
  Started result = Started::TimedOut;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    if (::access((dir + "/ready").c_str(), F_OK) == 0) {
      result = Started::Ready;
      break;
    }
    if (!alive(pid)) {
      // It may have written ready just before it was ended: ready wins, the caller checks the pids.
      result = ::access((dir + "/ready").c_str(), F_OK) == 0 ? Started::Ready : Started::Exited;
      break;
    }
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p[2] = {{in, POLLIN, 0}, {pidfd, POLLIN, 0}};
    int n = ::poll(p, 2, static_cast<int>(left));
    if (n > 0 && (p[0].revents & POLLIN))
      while (::read(in, buf, sizeof buf) > 0) {
      }
  }
  if (in >= 0) ::close(in);
  if (pidfd >= 0) ::close(pidfd);
  return result;
}

class Soak : public NervedTest {
 protected:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    int finished = 0;  // runs whose client is done with them
    std::vector<std::string> errors;
    std::vector<std::string> marker_dirs;
    std::vector<pid_t> launchers;
    std::map<std::string, int> launch_exits, reap_exits;  // "code" -> count, for the report
    int launch_retries = 0, reap_retries = 0;
  };

  void error(const std::string& what) {
    std::lock_guard<std::mutex> l(s_.mu);
    s_.errors.push_back(what);
  }

  // `nervectl ARGS` in the background with stdout and stderr to NAME.out/.err in the temp folder.
  pid_t spawn_ctl(const std::string& name, std::vector<std::string> args) {
    int out = ::open(path(name + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = ::open(path(name + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    SpawnSpec spec;
    spec.argv = {kNervectl};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.stdout_fd = out;
    spec.stderr_fd = err;
    pid_t pid = spawn(spec);
    ::close(out);
    ::close(err);
    std::lock_guard<std::mutex> l(s_.mu);
    track(pid, false);
    s_.launchers.push_back(pid);
    return pid;
  }

  // One client: its runs one after the other, each launched, proven started, and reaped.
  void client(int k) {
    for (int i = 0; i < kRunsPerClient; ++i) {
      std::string run_id = "c" + std::to_string(k) + "-r" + std::to_string(i);
      bool started = false;
      for (int attempt = 1; attempt <= kMaxLaunchTries && !started; ++attempt) {
        std::string name = "m-" + run_id + "-" + std::to_string(attempt);
        std::string dir = path(name);
        ::mkdir(dir.c_str(), 0700);
        {
          std::lock_guard<std::mutex> l(s_.mu);
          s_.marker_dirs.push_back(dir);
        }
        pid_t launcher =
            spawn_ctl("launch-" + name, {"launch", "--grace", kShortGraceArg, run_id, "--", kEscaper, "--markers", dir});
        Started st = await_ready_or_exit(dir, launcher, kReadyTimeout);
        if (st == Started::Ready) {
          std::lock_guard<std::mutex> l(s_.mu);
          for (const char* role : kRoles)
            if (pid_t p = read_pid_file(dir + "/" + role + ".pid")) track(p, true);
          started = true;
          break;
        }
        if (st == Started::TimedOut) {
          error(run_id + ": the escaper of attempt " + std::to_string(attempt) + " neither got ready nor ended in " +
                std::to_string(kReadyTimeout.count()) + " ms: " + describe_process(launcher));
          break;
        }
        int code = wait_child(launcher, kEventTimeout).value_or(-1);
        std::string err = read_file(path("launch-" + name + ".err")).value_or("");
        {
          // Why it was not started, for the report: nerved was down, or died during the call.
          std::string why = err.find("is not running") != std::string::npos ? " (nerved down)"
                            : err.find("did not answer") != std::string::npos ? " (nerved died mid-call)"
                                                                              : " (other)";
          std::lock_guard<std::mutex> l(s_.mu);
          ++s_.launch_exits[std::to_string(code) + why];
          ++s_.launch_retries;
        }
        if (code != 125) {
          error(run_id + ": launch exited " + std::to_string(code) + " (not 125) before its command was ready: " + err);
          break;
        }
        if (!list_folder(dir).empty())
          error(run_id + ": a launch that exited 125 ran its command: " + ::testing::PrintToString(list_folder(dir)));
        // nerved was down or died during the call: back off a little and launch the same id again.
        std::this_thread::sleep_for(std::min(50ms * attempt, milliseconds(500)));
      }
      if (!started) error(run_id + ": never started after " + std::to_string(kMaxLaunchTries) + " launches");

      bool reaped = false;
      for (int attempt = 1; attempt <= kMaxReapTries && !reaped; ++attempt) {
        Output o = ctl({"reap", "--json", run_id}, {}, milliseconds(60'000));
        {
          std::string why = o.err.find("is not running") != std::string::npos ? " (nerved down)"
                            : o.err.find("did not answer") != std::string::npos ? " (nerved died mid-call)"
                                                                                : "";
          std::lock_guard<std::mutex> l(s_.mu);
          ++s_.reap_exits[std::to_string(o.exit_code) + why];
        }
        if (o.exit_code == 0) {
          try {
            Receipt r = parse_receipt(o.out);
            std::string outcome = to_string(r.outcome);
            if (outcome != "complete" && outcome != "no_scope")
              error(run_id + ": reap exited 0 with outcome " + outcome);
          } catch (const std::exception& e) {
            error(run_id + ": reap printed no receipt (" + e.what() + "): " + o.out);
          }
          reaped = true;
          break;
        }
        if (o.exit_code != 69 && o.exit_code != 75) {
          error(run_id + ": reap exited " + std::to_string(o.exit_code) + ": " + o.out + o.err);
          break;
        }
        {
          std::lock_guard<std::mutex> l(s_.mu);
          ++s_.reap_retries;
        }
        std::this_thread::sleep_for(std::min(50ms * attempt, milliseconds(500)));
      }
      if (!reaped) error(run_id + ": not reaped after " + std::to_string(kMaxReapTries) + " tries");
      {
        std::lock_guard<std::mutex> l(s_.mu);
        ++s_.finished;
      }
      s_.cv.notify_all();
    }
  }

  Shared s_;
};

TEST_F(Soak, FiftyRunsOfFiveClientsThroughTwoNervedCrashesAllEndReapedWithNothingLeft) {
  auto started = Clock::now();
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k) clients.emplace_back([this, k] { client(k); });

  // nerved dies by SIGKILL at about a third and two thirds of the runs, with calls in flight, and is
  // started again on the same runs folder.
  int kills = 0;
  for (int at : {kRuns / 3, 2 * kRuns / 3}) {
    {
      std::unique_lock<std::mutex> l(s_.mu);
      if (!s_.cv.wait_for(l, 90s, [&] { return s_.finished >= at; })) break;
    }
    pid_t pid = nerved_pid_;
    ::kill(pid, SIGKILL);
    EXPECT_EQ(await_nerved_exit(), 128 + SIGKILL);
    ++kills;
    start_nerved();
    if (HasFatalFailure()) break;  // the clients' retries run out by themselves
  }
  for (auto& t : clients) t.join();
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - started);

  EXPECT_EQ(kills, 2);
  for (const auto& e : s_.errors) ADD_FAILURE() << e;

  // Every run: a final receipt and a closed record.
  for (int k = 0; k < kClients; ++k) {
    for (int i = 0; i < kRunsPerClient; ++i) {
      std::string run_id = "c" + std::to_string(k) + "-r" + std::to_string(i);
      try {
        Receipt r = receipt(run_id);
        EXPECT_THAT(to_string(r.outcome), ::testing::AnyOf("complete", "no_scope")) << run_id << ": " << r.error;
        EXPECT_EQ(to_string(record(run_id).state), "reaped") << run_id;
      } catch (const std::exception& e) {
        ADD_FAILURE() << run_id << ": " << e.what();
      }
    }
  }
  // No process of any run: every pid any escaper wrote, and every launcher.
  int pids_checked = 0;
  for (const auto& dir : s_.marker_dirs) {
    for (const char* role : kRoles) {
      pid_t p = read_pid_file(dir + "/" + role + ".pid");
      if (!p) continue;
      ++pids_checked;
      EXPECT_FALSE(alive(p)) << dir << " " << role << ": " << describe_process(p);
    }
  }
  for (pid_t p : s_.launchers) EXPECT_FALSE(alive(p)) << "launcher " << describe_process(p);
  expect_no_run_left("after the soak");

  std::cout << "soak: " << kRuns << " runs, " << kClients << " clients, nerved killed " << kills << " times, "
            << pids_checked << " escaper pids checked, " << s_.launch_retries << " launch retries (exits "
            << ::testing::PrintToString(s_.launch_exits) << "), " << s_.reap_retries << " reap retries (exits "
            << ::testing::PrintToString(s_.reap_exits) << "), took " << took.count() << " ms\n";
  RecordProperty("took_ms", static_cast<int>(took.count()));
  RecordProperty("launch_retries", s_.launch_retries);
  RecordProperty("reap_retries", s_.reap_retries);
  EXPECT_LT(took, 120'000ms) << "the soak must finish well under 2 minutes";
}

}  // namespace
}  // namespace nerve::itest
