// SPDX-License-Identifier: LGPL-2.1-or-later
// Crash safety beyond the NERVE_FAULT steps: records that lie (another boot, a symlinked or badly named
// folder, corrupt JSON), a launch racing the final reap, a user manager that stops answering, a runs
// folder that is full or read-only, and what `nervectl reconcile` reports. In every case nothing that
// is not provably the run's own is signalled, and no scope of a run outlives its final receipt.
#include "backend_view.h"
#include "nerved_fixture.h"

#include "base/host.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

namespace nerve::itest {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace std::chrono_literals;

constexpr const char* kRoles[] = {"main", "setsid", "grandchild", "ignoreterm"};

// ---- helpers (the shared fixture has none of these) -----------------------------------------------

// Writes TEXT to PATH with mode 0600, as nerved writes its own files.
void write_private_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    ::close(fd);
    throw std::runtime_error("cannot write " + path);
  }
  ::fchmod(fd, 0600);
  ::close(fd);
}


int count_lines_with(const std::string& text, const std::vector<std::string>& parts) {
  int n = 0;
  for (const auto& l : lines_of(text)) {
    bool all = true;
    for (const auto& p : parts) all = all && l.find(p) != std::string::npos;
    n += all;
  }
  return n;
}

// Every pid written into a markers folder (ROLE.pid files, whatever got written).
std::vector<pid_t> marker_pids(const std::string& dir) {
  std::vector<pid_t> pids;
  for (const char* role : kRoles)
    if (pid_t p = read_pid_file(dir + "/" + role + ".pid")) pids.push_back(p);
  return pids;
}

// The `systemd --user` of this test: the harness starts it and this test program as children of the
// same shell, in this cgroup namespace's /init.scope. 0 if not found.
pid_t find_user_manager() {
  pid_t parent = ::getppid();
  for (const auto& name : list_folder("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (proc_parent(pid).value_or(-1) != parent) continue;
    auto comm = read_file("/proc/" + name + "/comm");
    auto cmdline = read_file("/proc/" + name + "/cmdline");
    if (!comm || *comm != "systemd\n" || !cmdline || cmdline->find("--user") == std::string::npos) continue;
    if (proc_cgroup(pid).value_or("") != "/init.scope") continue;
    return pid;
  }
  return 0;
}


// Waits (inotify on the run's folder) until receipt.json of RUN parses with OUTCOME; the last text read.
bool wait_for_outcome(const std::string& folder, const std::string& outcome, milliseconds timeout, std::string* last) {
  int in = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (in < 0) return false;
  ::inotify_add_watch(in, folder.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE);
  auto deadline = Clock::now() + timeout;
  bool ok = false;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    *last = read_file(folder + "/receipt.json").value_or("");
    try {
      if (!last->empty() && to_string(parse_receipt(*last).outcome) == outcome) {
        ok = true;
        break;
      }
    } catch (const std::exception&) {
    }
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{in, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) > 0)
      while (::read(in, buf, sizeof buf) > 0) {
      }
  }
  ::close(in);
  return ok;
}

// The files of a folder with their content and modification times, to prove it was not touched.
std::string snapshot(const std::string& dir) {
  std::ostringstream s;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0)
    s << dir << " mode " << std::oct << (st.st_mode & 07777) << std::dec << " mtime " << st.st_mtim.tv_sec << "."
      << st.st_mtim.tv_nsec << "\n";
  for (const auto& name : list_folder(dir)) {
    std::string p = dir + "/" + name;
    struct stat fs {};
    ::lstat(p.c_str(), &fs);
    s << name << " mode " << std::oct << (fs.st_mode & 07777) << std::dec << " mtime " << fs.st_mtim.tv_sec << "."
      << fs.st_mtim.tv_nsec << " size " << fs.st_size << "\n"
      << read_file(p).value_or("(unreadable)") << "\n";
  }
  return s.str();
}

class CrashSafety : public NervedTest {
 protected:
  void TearDown() override {
    // Whatever happened, the manager runs again before anything else.
    if (stopped_manager_ > 0) {
      ::kill(stopped_manager_, SIGCONT);
      stopped_manager_ = -1;
    }
    NervedTest::TearDown();
  }

  // `nervectl launch --grace 0.2 RUN -- escaper --markers DIR` in the background; the four pids.
  std::map<std::string, pid_t> launch_with_markers(const std::string& run, const std::string& dir_name,
                                                   std::vector<std::string> options = {}) {
    std::string dir = path(dir_name);
    if (::mkdir(dir.c_str(), 0700) != 0) ADD_FAILURE() << "mkdir " << dir << ": " << std::strerror(errno);
    std::vector<std::string> args = {"launch", "--grace", kShortGraceArg};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {run, "--", kEscaper, "--markers", dir});
    ctl_background("launch-" + run, args);
    return await_markers(dir);
  }

  void expect_all_alive(const std::map<std::string, pid_t>& pids, const std::string& what) {
    for (const auto& [role, pid] : pids) {
      EXPECT_TRUE(alive(pid)) << what << ": " << role << " was killed: " << describe_process(pid);
      EXPECT_NE(proc_state(pid), 'T') << what << ": " << role << " was stopped";
    }
  }
  void expect_all_dead(const std::map<std::string, pid_t>& pids, const std::string& what) {
    for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << what << ": " << role << ": " << describe_process(pid);
  }
  // `nervectl reap --grace 0.2 RUN` succeeds, and no process of PIDS is alive once it has returned.
  void reap_expecting_all_dead(const std::string& run, const std::map<std::string, pid_t>& pids, const std::string& what) {
    Output o = ctl({"reap", "--grace", kShortGraceArg, run});
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    expect_all_dead(pids, what);
  }

  std::string nerved_log() { return read_file(nerved_log_).value_or(""); }

  // The owner of runs: a shell that runs `nervectl launch --grace 0.2 RUN -- escaper --markers DIR
  // </dev/null &` for each of them (DIR: markers-RUN, made here), then reads a line from its stdin.
  // It owns every one of them and exits when the test ends it (end_owner). Tracked.
  struct Owner {
    pid_t pid = 0;
    int stdin_w = -1;
  };
  Owner start_owner(const std::vector<std::string>& runs) {
    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0) ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    std::string cmd;
    for (const auto& run : runs) {
      std::string dir = path("markers-" + run);
      if (::mkdir(dir.c_str(), 0700) != 0) ADD_FAILURE() << "mkdir " << dir << ": " << std::strerror(errno);
      cmd += "'" + kNervectl + "' launch --grace " + kShortGraceArg + " " + run + " -- '" + kEscaper + "' --markers '" +
             dir + "' </dev/null & ";
    }
    cmd += "read line";
    SpawnSpec spec = command({"sh", "-c", cmd});
    spec.stdin_fd = in[0];
    Owner owner{spawn(spec), in[1]};
    track(owner.pid, false);
    ::close(in[0]);
    return owner;
  }
  // Closes the owner's stdin, so it exits; a fatal failure unless it did within kEventTimeout.
  void end_owner(Owner& owner) {
    ::close(owner.stdin_w);
    owner.stdin_w = -1;
    ASSERT_TRUE(wait_child(owner.pid, kEventTimeout).has_value()) << "the owner shell did not exit";
  }
  // The escaper of RUN, launched by start_owner: its four pids (await_markers).
  std::map<std::string, pid_t> owned_markers(const std::string& run) { return await_markers(path("markers-" + run)); }

  pid_t stopped_manager_ = -1;
};

// ---- 1. a record of another boot that names a live scope ------------------------------------------

class ARecordOfAnotherBoot : public CrashSafety {
 protected:
  // lifecycle.json for run FORGED that names LIVE's scope exactly (unit, nonce, cgroup, cgroup id,
  // invocation id) but says it was written in another boot.
  void forge(const Record& live, const std::string& forged, const std::string& state) {
    Record f = live;
    f.run = forged;
    f.boot_id = live.boot_id;
    f.boot_id[0] = f.boot_id[0] == '0' ? '1' : '0';
    f.state = *from_string<RunState>(state);
    // The owner stays the live run's (this test, alive): only the boot id makes it another boot's.
    std::string dir = runs_ + "/" + forged;
    ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << std::strerror(errno);
    write_private_file(dir + "/lifecycle.json", to_json_text(f));
  }
};

// A record of run "forged" that names run "live"'s unit is one nerve never writes:
// it is refused as corrupt and moved aside before any lookup, so nothing of the live run is touched.
// (The boot-id rule itself is covered by tests/unit/reap_decision_test.cpp.)
TEST_F(ARecordOfAnotherBoot, ThatNamesALiveScopeOfAnotherRunIsRefusedAsCorruptAndSignalsNothing) {
  auto pids = launch_with_markers("live", "markers");
  ASSERT_EQ(pids.size(), 4u);
  Record live = record("live");
  ASSERT_EQ(to_string(live.state), "running");
  ASSERT_NO_FATAL_FAILURE(forge(live, "forged", "running"));

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "forged"});
  EXPECT_NE(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_THAT(reap.err, HasSubstr("RecordFailed"));
  EXPECT_THAT(reap.err, HasSubstr(live.unit));
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/forged/lifecycle.json")) << "the forged record was not moved aside";
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/forged/receipt.json"));

  // The live scope of the other run: every process there, unit active with the same invocation.
  expect_all_alive(pids, "the live run");
  EXPECT_EQ(unit_property(live.unit, "ActiveState"), "active");
  EXPECT_EQ(unit_property(live.unit, "InvocationID"), live.invocation_id);
  for (const auto& [role, pid] : pids) EXPECT_EQ(proc_cgroup(pid).value_or("(gone)"), live.leaf) << role;
  EXPECT_EQ(to_string(record("live").state), "running");
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/live/receipt.json"));

  reap_expecting_all_dead("live", pids, "the live run after its own reap");
  EXPECT_EQ(to_string(receipt("live").outcome), "complete");
}

TEST_F(ARecordOfAnotherBoot, ThatNamesALiveScopeIsQuarantinedAtStartupWithoutASignal) {
  auto pids = launch_with_markers("live", "markers");
  ASSERT_EQ(pids.size(), 4u);
  Record live = record("live");
  stop_nerved();
  // "reaping": a record of this boot in that state would be stopped at once by the next start.
  ASSERT_NO_FATAL_FAILURE(forge(live, "forged", "reaping"));
  ASSERT_NO_FATAL_FAILURE(start_nerved());

  Output list = ctl({"list"});  // answered after the startup pass (same loop)
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/forged/lifecycle.json")) << "startup left the forged record";
  EXPECT_EQ(count_lines_with(nerved_log(), {"reconcile: run forged: quarantined", live.unit}), 1) << nerved_log();
  expect_all_alive(pids, "the live run");
  EXPECT_EQ(unit_property(live.unit, "InvocationID"), live.invocation_id);
  EXPECT_THAT(nerved_log(), HasSubstr("reconcile: run live: adopted"));

  reap_expecting_all_dead("live", pids, "the live run after its own reap");
}

// docs/records.md: a reap writes receipt.json, then the record's "reaped"; a crash in between leaves
// "reaping", which the next nerved reaps again. That second reap finds nothing left, but the final
// receipt already written (complete, killed) is the run's outcome and must not be replaced.
class AFinalReceipt : public CrashSafety {};

TEST_F(AFinalReceipt, SurvivesACrashBeforeTheRecordSaidReaped) {
  auto pids = launch_with_markers("r1", "markers");
  ASSERT_EQ(pids.size(), 4u);
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  ASSERT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  std::string final_receipt = read_file(runs_ + "/r1/receipt.json").value_or("");
  ASSERT_EQ(to_string(receipt("r1").outcome), "complete");
  ASSERT_TRUE(receipt("r1").killed);

  // What a crash between the two writes leaves: the final receipt, and the record still "reaping".
  stop_nerved();
  Record rec = record("r1");
  rec.state = RunState::Reaping;
  write_private_file(runs_ + "/r1/lifecycle.json", to_json_text(rec));
  ASSERT_NO_FATAL_FAILURE(start_nerved());

  Output again = ctl({"reap", "r1"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  EXPECT_EQ(read_file(runs_ + "/r1/receipt.json").value_or(""), final_receipt)
      << "the final receipt (complete, killed) was replaced by the startup pass's second reap";
  EXPECT_THAT(again.out, HasSubstr("run r1: complete"));
}

// ---- 2. a launch racing the final reap ------------------------------------------------------------

class ALaunchRacingTheFinalReap : public CrashSafety {};

TEST_F(ALaunchRacingTheFinalReap, NeverLeavesAScopeOrAProcessAfterTheReceipt) {
  constexpr int kRuns = 30;
  struct Race {
    std::string run;
    std::map<std::string, pid_t> first;  // attempt 1's processes
    std::string second_markers;
    pid_t relaunch = 0, reap = 0;
  };
  std::vector<Race> races(kRuns);
  // Attempt 1 of every run, all at once; each proves it started.
  for (int i = 0; i < kRuns; ++i) {
    races[i].run = "r" + std::to_string(i);
    std::string dir = path("m1-" + races[i].run);
    ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
    ctl_background("first-" + races[i].run,
                   {"launch", "--grace", kShortGraceArg, races[i].run, "--", kEscaper, "--markers", dir});
  }
  for (auto& r : races) {
    r.first = await_markers(path("m1-" + r.run));
    ASSERT_EQ(r.first.size(), 4u) << r.run;
  }

  // The race: a relaunch (attempt 2) and the final reap of the same run, started together; which one
  // is started first alternates, and the gap between them varies (0 to 8 ms) to cover the window.
  for (int i = 0; i < kRuns; ++i) {
    Race& r = races[i];
    r.second_markers = path("m2-" + r.run);
    ASSERT_EQ(::mkdir(r.second_markers.c_str(), 0700), 0);
    std::vector<std::string> relaunch = {"launch", "--grace", kShortGraceArg, r.run, "--", kEscaper, "--markers", r.second_markers};
    std::vector<std::string> reap = {"reap", "--json", r.run};
    auto gap = std::chrono::milliseconds((i / 2) % 5 * 2);
    if (i % 2 == 0) {
      r.relaunch = ctl_background("relaunch-" + r.run, relaunch);
      std::this_thread::sleep_for(gap);
      r.reap = ctl_background("reap-" + r.run, reap);
    } else {
      r.reap = ctl_background("reap-" + r.run, reap);
      std::this_thread::sleep_for(gap);
      r.relaunch = ctl_background("relaunch-" + r.run, relaunch);
    }
  }

  int launch_won = 0, reap_won = 0;
  for (auto& r : races) {
    SCOPED_TRACE("run " + r.run);
    auto reap_code = wait_child(r.reap, 30'000ms);
    ASSERT_TRUE(reap_code) << "the reap of " << r.run << " did not return within 30 s";
    // Right after the reap returned: a final receipt, and the scope it names is empty.
    EXPECT_EQ(*reap_code, 0) << read_file(path("reap-" + r.run + ".err")).value_or("");
    Receipt rc = receipt(r.run);
    EXPECT_THAT(to_string(rc.outcome), AnyOf("complete", "no_scope")) << rc.error;
    Record rec = record(r.run);
    EXPECT_EQ(to_string(rec.state), "reaped");
    EXPECT_EQ(rc.attempt, rec.attempt);
    std::string folder = cgroup_folder(rec.cgroup);
    if (std::filesystem::exists(folder)) {
      EXPECT_EQ(read_file(folder + "/cgroup.procs").value_or(""), "")
          << "the receipt of " << r.run << " exists while " << folder << " holds processes";
    }
    for (const auto& [role, pid] : r.first) EXPECT_FALSE(alive(pid)) << "attempt 1 " << role << ": " << describe_process(pid);

    auto launch_code = wait_child(r.relaunch, kEventTimeout);
    for (pid_t p : marker_pids(r.second_markers)) track(p, true);
    ASSERT_TRUE(launch_code) << "the relaunch of " << r.run << " is still running after its run was reaped: "
                             << describe_process(r.relaunch);
    std::string launch_err = read_file(path("relaunch-" + r.run + ".err")).value_or("");
    if (*launch_code == 125) {
      ++reap_won;
      EXPECT_THAT(launch_err, HasSubstr("org.nerve.Lifecycle1.Error.RunFinished"));
      EXPECT_EQ(rc.attempt, 1u) << "the relaunch was refused, so the receipt is attempt 1's";
      EXPECT_THAT(list_folder(r.second_markers), IsEmpty()) << "a refused relaunch ran its command";
    } else {
      ++launch_won;
      EXPECT_GE(*launch_code, 128) << "the relaunch's command must have been ended by the reap; stderr: " << launch_err;
      EXPECT_EQ(rc.attempt, 2u) << "the relaunch ran, so the final reap must be of attempt 2";
    }
    EXPECT_FALSE(alive(r.relaunch)) << describe_process(r.relaunch);
    for (pid_t p : marker_pids(r.second_markers)) EXPECT_FALSE(alive(p)) << "attempt 2: " << describe_process(p);
  }
  std::cout << "race outcomes: relaunch first " << launch_won << ", reap first " << reap_won << " of " << kRuns << "\n";
  RecordProperty("relaunch_first", launch_won);
  RecordProperty("reap_first", reap_won);

  expect_no_run_left("after every race");
}

// ---- 3. a user manager that does not answer -------------------------------------------------------

// nerved's queries to the user manager time out after 1 s here (5 s by default) and its first retry
// comes after 0.1 s (1 s by default), so the test waits for neither at full length.
class AReapWhileTheUserManagerDoesNotAnswer : public CrashSafety {
 protected:
  AReapWhileTheUserManagerDoesNotAnswer() { nerved_args_ = {"--systemd-timeout", "1000", "--retry-first", "100"}; }
};

TEST_F(AReapWhileTheUserManagerDoesNotAnswer, IsPendingRetryAndCompletesOnceTheManagerAnswersAgain) {
  NERVE_NEEDS_USER_MANAGER();
  auto pids = launch_with_markers("r1", "markers");
  ASSERT_EQ(pids.size(), 4u);
  pid_t manager = find_user_manager();
  ASSERT_GT(manager, 0) << "no systemd --user among the children of " << ::getppid();
  Output before = run(command({"systemctl", "--user", "is-system-running"}));
  ASSERT_THAT(before.out, AnyOf(HasSubstr("running"), HasSubstr("degraded"))) << before.err;

  ASSERT_EQ(::kill(manager, SIGSTOP), 0);
  stopped_manager_ = manager;  // TearDown sends SIGCONT whatever happens
  ASSERT_TRUE(eventually([&] { return proc_state(manager) == 'T'; }, 2000ms)) << describe_process(manager);

  Output reap = ctl({"reap", "r1"}, {}, 60'000ms);
  EXPECT_EQ(reap.exit_code, 75) << "a failed systemd query must give pending_retry\n" << reap.out << reap.err;
  EXPECT_THAT(reap.out, HasSubstr("run r1: pending_retry"));
  EXPECT_GE(reap.took, 900ms) << "nerved's query timeout is 1 s here (--systemd-timeout 1000)";
  EXPECT_LT(reap.took, 30'000ms);
  Receipt pending = receipt("r1");
  EXPECT_EQ(to_string(pending.outcome), "pending_retry");
  EXPECT_FALSE(pending.killed);
  EXPECT_EQ(to_string(record("r1").state), "reaping") << "the fence stays while the reap is pending";
  // Unknown is not gone: nothing was signalled.
  expect_all_alive(pids, "the run while systemd did not answer");

  ASSERT_EQ(::kill(manager, SIGCONT), 0);
  stopped_manager_ = -1;

  std::string last;
  EXPECT_TRUE(wait_for_outcome(runs_ + "/r1", "complete", 20'000ms, &last))
      << "nerved's own retry did not complete the reap within 20 s of SIGCONT; receipt.json:\n" << last;
  for (const auto& [role, pid] : pids) EXPECT_TRUE(wait_gone(pid, 2000ms)) << role << ": " << describe_process(pid);
  // The record follows its receipt (docs/records.md: receipt.json, then "reaped").
  EXPECT_TRUE(eventually([&] { return to_string(record("r1").state) == "reaped"; }, 2000ms))
      << to_string(record("r1").state);
  EXPECT_THAT(nerved_log(), HasSubstr("run r1: reap pending; next try in 100 ms"));
  Output again = ctl({"reap", "r1"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("run r1: complete"));
}

// ---- 4. corrupt records ---------------------------------------------------------------------------

class CorruptRecords : public CrashSafety {};

TEST_F(CorruptRecords, AreQuarantinedAtStartupWhileAGoodRunIsAdoptedAndTheirIdsCanBeLaunchedAgain) {
  auto pids = launch_with_markers("good", "markers");
  ASSERT_EQ(pids.size(), 4u);
  Record good = record("good");
  stop_nerved();

  // Each bad record names the good run's live scope and says "reaping": read leniently, it would be
  // stopped at once.
  auto valid_text = [&](const std::string& run) {
    Record r = good;
    r.run = run;
    r.state = RunState::Reaping;
    return to_json_text(r);
  };
  auto without_line = [](const std::string& text, const std::string& key) {
    std::string out;
    for (const auto& l : lines_of(text))
      if (l.find("\"" + key + "\":") == std::string::npos) out += l + "\n";
    return out;
  };
  std::string version_99 = valid_text("bad-version");
  auto at = version_99.find("\"version\": 1");
  ASSERT_NE(at, std::string::npos) << version_99;
  version_99.replace(at, std::strlen("\"version\": 1"), "\"version\": 99");
  std::string truncated = valid_text("bad-truncated");
  truncated.resize(truncated.size() / 2);
  const std::map<std::string, std::string> bad = {
      {"bad-truncated", truncated},
      {"bad-array", "[1, 2, 3]\n"},
      {"bad-version", version_99},
      {"bad-missing", without_line(valid_text("bad-missing"), "unit")},
  };
  for (const auto& [run, text] : bad) {
    ASSERT_EQ(::mkdir((runs_ + "/" + run).c_str(), 0700), 0);
    write_private_file(runs_ + "/" + run + "/lifecycle.json", text);
  }

  ASSERT_NO_FATAL_FAILURE(start_nerved());
  Output list = ctl({"list", "--json"});
  EXPECT_EQ(list.exit_code, 0) << "nerved does not answer after the corrupt records: " << list.err;
  // The startup pass runs after nerved owns its name, a run per turn of its loop: wait for its end.
  ASSERT_TRUE(eventually([&] { return count_lines_with(nerved_log(), {"startup reconciliation done: 5 run(s)"}) == 1; },
                         10'000ms))
      << nerved_log();

  std::string qdir = runs_ + "/.quarantine";
  auto quarantined = list_folder(qdir);
  EXPECT_EQ(quarantined.size(), bad.size()) << ::testing::PrintToString(quarantined);
  std::string log = nerved_log();
  for (const auto& [run, text] : bad) {
    SCOPED_TRACE(run);
    std::vector<std::string> mine;
    for (const auto& q : quarantined)
      if (q.rfind(run + ".", 0) == 0) mine.push_back(q);
    ASSERT_EQ(mine.size(), 1u) << ::testing::PrintToString(quarantined);
    std::string moved = qdir + "/" + mine[0];
    EXPECT_THAT(mine[0], ::testing::EndsWith(".lifecycle.json"));
    EXPECT_EQ(read_file(moved).value_or("(gone)"), text) << "the quarantined record is not the original";
    EXPECT_FALSE(std::filesystem::exists(runs_ + "/" + run + "/lifecycle.json"));
    // Logged once, with its path.
    EXPECT_EQ(count_lines_with(log, {"reconcile: run " + run + ": quarantined", moved}), 1) << log;
    EXPECT_EQ(count_lines_with(log, {moved}), 1) << log;
  }

  // The good run: adopted, untouched, and still reapable.
  EXPECT_EQ(count_lines_with(log, {"reconcile: run good: adopted"}), 1) << log;
  expect_all_alive(pids, "the good run");
  EXPECT_EQ(unit_property(good.unit, "InvocationID"), good.invocation_id);
  EXPECT_EQ(to_string(record("good").state), "running");

  // A bad run's id can be launched afresh.
  pid_t relaunched = ctl_background(
      "relaunch", {"launch", "--grace", kShortGraceArg, "bad-version", "--", kEscaper, "--pidfile", path("again.pid")});
  ASSERT_EQ(await_pidfile(path("again.pid")), relaunched);
  Record again = record("bad-version");
  EXPECT_EQ(to_string(again.state), "running");
  EXPECT_EQ(again.attempt, 1u);
  EXPECT_EQ(ctl({"reap", "bad-version"}).exit_code, 0);
  EXPECT_FALSE(alive(relaunched));

  reap_expecting_all_dead("good", pids, "the good run after its reap");
  EXPECT_EQ(to_string(receipt("good").outcome), "complete");
  // Nothing was quarantined twice, by the calls since.
  EXPECT_EQ(list_folder(qdir).size(), bad.size());
}

// The record of a live run is damaged while nerved is down. Quarantining it must not make nerved forget
// the run's scope: a relaunch of the id reaps the earlier attempt's scope first (docs/records.md), and a
// final reap that says complete leaves no process of the run.
TEST_F(CorruptRecords, OfALiveRunDoNotLeaveItsScopeRunningBesideTheNextAttempt) {
  auto pids = launch_with_markers("r1", "markers");
  ASSERT_EQ(pids.size(), 4u);
  Record old = record("r1");
  stop_nerved();
  std::string text = read_file(runs_ + "/r1/lifecycle.json").value_or("");
  write_private_file(runs_ + "/r1/lifecycle.json", text.substr(0, text.size() / 2));
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  // The startup pass looks at runs after nerved owns its name, a run per turn of its loop.
  ASSERT_TRUE(eventually([&] { return list_folder(runs_ + "/.quarantine").size() == 1u; }, 10'000ms));

  pid_t launcher =
      ctl_background("relaunch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("again.pid")});
  ASSERT_EQ(await_pidfile(path("again.pid")), launcher);
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_FALSE(alive(launcher));
  for (const auto& [role, pid] : pids)
    EXPECT_FALSE(alive(pid)) << "run r1 was reaped 'complete', yet " << role << " of its first attempt ("
                             << old.unit << ", whose record was quarantined) still runs: " << describe_process(pid);
  std::vector<std::string> units;
  EXPECT_TRUE(eventually([&] { return (units = live_nerve_units()).empty(); }, 2000ms))
      << "scopes left after the final reap of r1: " << ::testing::PrintToString(units);
}

// ---- 5. symlinked and badly named run folders -----------------------------------------------------

class ARunFolderThatIsNotARunsOwn : public CrashSafety {};

TEST_F(ARunFolderThatIsNotARunsOwn, IsSkippedAndReportedAndNothingOutsideTheRunsFolderIsTouched) {
  auto pids = launch_with_markers("live", "markers");
  ASSERT_EQ(pids.size(), 4u);
  Record live = record("live");
  // Valid-looking records of the live scope, in state "reaping": followed or read, they would stop it.
  auto fenced_copy = [&](const std::string& run) {
    Record r = live;
    r.run = run;
    r.state = RunState::Reaping;
    return to_json_text(r);
  };
  std::string outside = path("outside");
  ASSERT_EQ(::mkdir(outside.c_str(), 0700), 0);
  write_private_file(outside + "/lifecycle.json", fenced_copy("linked"));
  ASSERT_EQ(::symlink(outside.c_str(), (runs_ + "/linked").c_str()), 0);
  for (const std::string bad_name : {"a b", ".hidden"}) {
    ASSERT_EQ(::mkdir((runs_ + "/" + bad_name).c_str(), 0700), 0);
    write_private_file(runs_ + "/" + bad_name + "/lifecycle.json", fenced_copy(bad_name));
  }
  std::string outside_before = snapshot(outside);
  std::string spaced_before = snapshot(runs_ + "/a b"), hidden_before = snapshot(runs_ + "/.hidden");

  Output rec = ctl({"reconcile"});
  EXPECT_EQ(rec.exit_code, 0) << rec.out << rec.err;
  EXPECT_EQ(count_lines_with(rec.out, {"skipped", runs_ + "/linked is a symlink"}), 1) << rec.out;
  EXPECT_EQ(count_lines_with(rec.out, {"skipped", runs_ + "/a b"}), 1) << rec.out;
  EXPECT_EQ(count_lines_with(rec.out, {"live", "adopted"}), 1) << rec.out;
  EXPECT_THAT(rec.out, Not(HasSubstr("reaped"))) << rec.out;

  // The same at startup.
  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  ASSERT_EQ(ctl({"list"}).exit_code, 0);
  std::string log = nerved_log();
  EXPECT_EQ(count_lines_with(log, {"reconcile: skipped " + runs_ + "/linked is a symlink"}), 2) << log;
  EXPECT_EQ(count_lines_with(log, {"reconcile: skipped " + runs_ + "/a b"}), 2) << log;

  // A call by the symlink's name reads nothing through it either.
  Output reap = ctl({"reap", "linked"});
  EXPECT_NE(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_THAT(reap.out, Not(HasSubstr("complete")));

  EXPECT_EQ(snapshot(outside), outside_before) << "something outside the runs folder was modified";
  EXPECT_EQ(snapshot(runs_ + "/a b"), spaced_before);
  EXPECT_EQ(snapshot(runs_ + "/.hidden"), hidden_before);
  EXPECT_TRUE(std::filesystem::is_symlink(runs_ + "/linked"));
  expect_all_alive(pids, "the live scope");
  EXPECT_EQ(unit_property(live.unit, "ActiveState"), "active");
  EXPECT_EQ(unit_property(live.unit, "InvocationID"), live.invocation_id);
  EXPECT_EQ(to_string(record("live").state), "running");

  reap_expecting_all_dead("live", pids, "the live run after its own reap");
}

// ---- 6. a full or read-only runs folder -----------------------------------------------------------

class ARunsFolderThatCannotBeWritten : public CrashSafety {
 protected:
  // Once there is space again, nerved's retry comes after 0.1 s (1 s by default).
  ARunsFolderThatCannotBeWritten() { nerved_args_ = {"--retry-first", "100"}; }

  // A 64 KiB tmpfs (mount_small_tmpfs) holding the runs folder; nerved is restarted on it.
  void mount_small_runs_folder() {
    small_ = path("small");
    ASSERT_NO_FATAL_FAILURE(mount_small_tmpfs(small_, "64k"));
    stop_nerved();
    runs_ = small_ + "/runs";
    ASSERT_EQ(::mkdir(runs_.c_str(), 0700), 0);
    ASSERT_NO_FATAL_FAILURE(start_nerved());
  }

  // Fills the tmpfs until ENOSPC.
  void fill() {
    std::string filler = small_ + "/filler";
    int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    std::string block(4096, 'x');
    int err = 0;
    for (int i = 0; i < 1000 && err == 0; ++i)
      if (::write(fd, block.data(), block.size()) < 0) err = errno;
    ::close(fd);
    ASSERT_EQ(err, ENOSPC) << "the tmpfs did not fill up: " << std::strerror(err);
  }

  // Gives back BYTES of the filler (all of it with -1).
  void free_space(long bytes = -1) {
    std::string filler = small_ + "/filler";
    if (bytes < 0) {
      ASSERT_EQ(::unlink(filler.c_str()), 0) << std::strerror(errno);
      return;
    }
    struct stat st {};
    ASSERT_EQ(::stat(filler.c_str(), &st), 0);
    ASSERT_EQ(::truncate(filler.c_str(), st.st_size - bytes), 0) << std::strerror(errno);
  }

  // The runs folder on the small tmpfs, run r1 launched by an owner (start_owner) and its escaper
  // standing (all four processes), then the tmpfs filled: a live run on a full disk.
  void launch_r1_under_owner_on_a_full_disk(Owner* owner, std::map<std::string, pid_t>* pids) {
    ASSERT_NO_FATAL_FAILURE(mount_small_runs_folder());
    *owner = start_owner({"r1"});
    *pids = owned_markers("r1");
    ASSERT_EQ(pids->size(), 4u);
    ASSERT_NO_FATAL_FAILURE(fill());
  }

  // Waits (bounded by TIMEOUT) until r1's receipt says complete, a failure saying what should have
  // made it so (WHY) and quoting the receipt otherwise; PIDS must be gone then (within 2 s more).
  void expect_r1_complete_and_gone(const std::map<std::string, pid_t>& pids, milliseconds timeout, const std::string& why) {
    std::string last;
    bool reaped = wait_for_outcome(runs_ + "/r1", "complete", timeout, &last);
    EXPECT_TRUE(reaped) << why << "; receipt.json: '" << last << "'";
    for (const auto& [role, pid] : pids)
      EXPECT_TRUE(wait_gone(pid, reaped ? 2000ms : 0ms)) << role << ": " << describe_process(pid);
  }

  // nervectl launch RUN -- escaper --touch F: refused before anything ran or was started.
  void expect_launch_refused(const std::string& run, const std::string& cause) {
    std::string touched = path("touched-" + run);
    Output o = ctl({"launch", "--grace", kShortGraceArg, run, "--", kEscaper, "--touch", touched});
    EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
    EXPECT_THAT(o.err, HasSubstr(runs_ + "/" + run)) << "the error must name the path";
    EXPECT_THAT(o.err, HasSubstr(cause));
    EXPECT_THAT(o.err, HasSubstr("the command was not started"));
    EXPECT_FALSE(std::filesystem::exists(touched)) << "the command ran although its record could not be written";
    for (const auto& name : list_folder(runs_ + "/" + run))
      ADD_FAILURE() << "left in " << runs_ << "/" << run << ": " << name;
    EXPECT_THAT(live_nerve_units(), IsEmpty()) << "a scope was started for a run that has no record";
    EXPECT_THAT(nerve_cgroup_folders(), IsEmpty());
    Output list = ctl({"list"});
    EXPECT_EQ(list.exit_code, 0) << "nerved does not answer any more: " << list.err;
  }

  std::string small_;  // the tmpfs of mount_small_runs_folder
};

TEST_F(ARunsFolderThatCannotBeWritten, WhenFullRefusesTheLaunchNamingThePathAndStartsNoScope) {
  ASSERT_NO_FATAL_FAILURE(mount_small_runs_folder());
  ASSERT_NO_FATAL_FAILURE(fill());
  expect_launch_refused("r1", "No space left on device");
}

TEST_F(ARunsFolderThatCannotBeWritten, WhenReadOnlyRefusesTheLaunchNamingThePathAndStartsNoScope) {
  ASSERT_NO_FATAL_FAILURE(mount_small_runs_folder());
  ASSERT_EQ(::mount(nullptr, small_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr), 0)
      << std::strerror(errno);
  expect_launch_refused("r1", "Read-only file system");
}

// The intent record fits, the running record does not: the scope was made already, and holds only
// nervectl, which must not exec. (tmpfs counts whole pages: one free page takes the intent record,
// and the running record's temporary file needs a second one while the intent still holds the first.)
TEST_F(ARunsFolderThatCannotBeWritten, WhenItFillsUpBetweenTheIntentAndTheRunningRecordStartsNothingAndLeavesNoScope) {
  ASSERT_NO_FATAL_FAILURE(mount_small_runs_folder());
  ASSERT_NO_FATAL_FAILURE(fill());
  ASSERT_NO_FATAL_FAILURE(free_space(4096));
  std::string touched = path("touched");
  Output o = ctl({"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--touch", touched});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("No space left on device"));
  EXPECT_FALSE(std::filesystem::exists(touched)) << "the command ran although its running record was not written";
  Record intent = record("r1");
  EXPECT_EQ(to_string(intent.state), "launching") << "only the intent fitted";
  EXPECT_THAT(nerved_log(), HasSubstr("cannot write the running record"));
  expect_no_run_left("after a launch that failed");

  // With space again, the run is launched afresh (attempt 2) and reaped.
  ASSERT_NO_FATAL_FAILURE(free_space());
  pid_t launcher = ctl_background("again", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", path("again.pid")});
  ASSERT_EQ(await_pidfile(path("again.pid")), launcher);
  EXPECT_EQ(record("r1").attempt, 2u);
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  EXPECT_FALSE(alive(launcher));
}

// A reap must write its fence before it signals anything; when the fence cannot be written nothing is
// signalled. But the run must still end with its owner once the fence can be written again.
// On a full disk: kill first, record as soon as space allows (docs/records.md).
TEST_F(ARunsFolderThatCannotBeWritten, WhenFullAtTheOwnersExitKillsTheRunAndRecordsItOnceThereIsSpace) {
  Owner owner;
  std::map<std::string, pid_t> pids;
  ASSERT_NO_FATAL_FAILURE(launch_r1_under_owner_on_a_full_disk(&owner, &pids));

  ASSERT_NO_FATAL_FAILURE(end_owner(owner));  // nerved reaps, though it cannot write the fence
  EXPECT_TRUE(eventually([&] { return nerved_log().find("cannot write the fence") != std::string::npos; }, 5000ms))
      << nerved_log();
  for (const auto& [role, pid] : pids) EXPECT_TRUE(wait_gone(pid, kEventTimeout)) << role << ": " << describe_process(pid);
  EXPECT_EQ(to_string(record("r1").state), "running") << "the disk is full: nothing can have been recorded";
  // Meanwhile no new attempt can start (its intent cannot be written either).
  Output again = ctl({"launch", "r1", "--", kEscaper, "--exit", "0"});
  EXPECT_NE(again.exit_code, 0) << again.out;

  ASSERT_NO_FATAL_FAILURE(free_space());
  expect_r1_complete_and_gone(pids, 10'000ms,
                              "the owner of r1 exited, yet 10 s after the runs folder has space again the run is not "
                              "reaped (no retry after the failed fence)");
}

TEST_F(ARunsFolderThatCannotBeWritten, WhenFullAtAReapKillsTheRunAndSaysItsReceiptIsNotWrittenYet) {
  Owner owner;
  std::map<std::string, pid_t> pids;
  ASSERT_NO_FATAL_FAILURE(launch_r1_under_owner_on_a_full_disk(&owner, &pids));

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 1) << reap.out << reap.err;
  EXPECT_THAT(reap.err, HasSubstr("was reaped (complete) but its receipt cannot be written"));
  EXPECT_THAT(reap.err, HasSubstr("No space left on device"));
  expect_all_dead(pids, "a run reaped on a full disk");
  EXPECT_EQ(to_string(record("r1").state), "running") << "the disk is full: nothing can have been recorded";

  // Space again: the receipt kept in memory is written by the retry, without reaping again.
  ASSERT_NO_FATAL_FAILURE(free_space());
  ASSERT_NO_FATAL_FAILURE(end_owner(owner));
  expect_r1_complete_and_gone(pids, kEventTimeout,
                              "the run was reaped on a full disk, and 10 s after the runs folder has space again its "
                              "receipt is not written");
}

// ---- 7. nervectl reconcile ------------------------------------------------------------------------

class Reconcile : public CrashSafety {};

// The owner of "orphan" and "gone" is a shell that waits on its stdin; it exits while nerved is down.
// nerved's startup pass sees "gone" (reaped) but not "orphan", whose folder is moved away meanwhile and
// back afterwards: only `nervectl reconcile` can find that its owner died.
TEST_F(Reconcile, PrintsOneLinePerRunWithWhatItDid) {
  auto alive_pids = launch_with_markers("alive", "m-alive");
  ASSERT_EQ(alive_pids.size(), 4u);
  pid_t kept = ctl_background("kept", {"launch", "--keep", "r-kept", "--", kEscaper, "--pidfile", path("kept.pid")});
  ASSERT_EQ(await_pidfile(path("kept.pid")), kept);

  Owner owner = start_owner({"orphan", "gone"});
  auto orphan_pids = owned_markers("orphan");
  auto gone_pids = owned_markers("gone");
  ASSERT_EQ(orphan_pids.size(), 4u);
  ASSERT_EQ(gone_pids.size(), 4u);
  ASSERT_EQ(record("orphan").owner.pid, owner.pid);
  ASSERT_EQ(record("gone").owner.pid, owner.pid);

  stop_nerved();
  ASSERT_NO_FATAL_FAILURE(end_owner(owner));
  std::string stash = path("stash-orphan");
  ASSERT_EQ(::rename((runs_ + "/orphan").c_str(), stash.c_str()), 0);
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  ASSERT_TRUE(wait_for_file(runs_ + "/gone/receipt.json")) << "startup did not reap the run whose owner died";
  ASSERT_EQ(ctl({"list"}).exit_code, 0);  // after the startup pass
  std::string log = nerved_log();
  EXPECT_EQ(count_lines_with(log, {"reconcile: run gone: reaped", "owner pid " + std::to_string(owner.pid) + " is gone",
                                   "complete"}),
            1)
      << log;
  EXPECT_EQ(count_lines_with(log, {"reconcile: run alive: adopted"}), 1) << log;
  EXPECT_EQ(count_lines_with(log, {"reconcile: run r-kept: kept"}), 1) << log;
  expect_all_dead(gone_pids, "the run whose owner died while nerved was down");
  ASSERT_EQ(::rename(stash.c_str(), (runs_ + "/orphan").c_str()), 0);
  expect_all_alive(orphan_pids, "the orphan nerved has not seen yet");

  Output o = ctl({"reconcile"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  std::map<std::string, std::string> action;
  for (const auto& l : lines_of(o.out)) {
    std::istringstream s(l);
    std::string run, what;
    s >> run >> what;
    EXPECT_EQ(action.count(run), 0u) << "two lines for run " << run << ":\n" << o.out;
    action[run] = what;
  }
  EXPECT_EQ(action, (std::map<std::string, std::string>{
                        {"alive", "adopted"}, {"gone", "final"}, {"orphan", "reaped"}, {"r-kept", "kept"}}))
      << o.out;
  EXPECT_EQ(count_lines_with(o.out, {"orphan", "reaped", "is gone", "complete"}), 1) << o.out;
  expect_all_dead(orphan_pids, "the orphan after nervectl reconcile");
  EXPECT_EQ(to_string(receipt("orphan").outcome), "complete");
  expect_all_alive(alive_pids, "the adopted run");
  EXPECT_TRUE(alive(kept));

  Output again = ctl({"reconcile", "--json"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr(R"({"action":"final","detail":"","run":"orphan"})")) << again.out;

  EXPECT_EQ(ctl({"reap", "--grace", kShortGraceArg, "alive"}).exit_code, 0);
  EXPECT_EQ(ctl({"reap", "--grace", kShortGraceArg, "r-kept"}).exit_code, 0);
  expect_all_dead(alive_pids, "the adopted run after its reap");
  EXPECT_FALSE(alive(kept));
}

}  // namespace
}  // namespace nerve::itest
