// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nerved_fixture.h"

#include "backend_view.h"

#include "base/host.h"
#include "process/sealing.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sdbus-c++/sdbus-c++.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace nerve::itest {

namespace {

constexpr milliseconds kStopTimeout{5'000};
constexpr const char* kRoles[] = {"main", "setsid", "grandchild", "ignoreterm"};

std::string getenv_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int open_log(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  return fd;
}

}  // namespace

void NervedTest::SetUp() {
  // Never a skip: an integration test that cannot reach a user manager has not tested anything.
  const char* bus = std::getenv("DBUS_SESSION_BUS_ADDRESS");
  ASSERT_TRUE(bus && *bus)
      << "not under a systemd user manager: DBUS_SESSION_BUS_ADDRESS is not set. Run the integration tests "
         "with `ctest -L integration` (each test runs under tests/harness/with-user-manager.sh), or by hand as "
         "`tests/harness/with-user-manager.sh -- nerve_integration_tests`.";
  ASSERT_NE(std::getenv("NERVE_TEST_PRIVATE_MANAGER"), nullptr)
      << "NERVE_TEST_PRIVATE_MANAGER is not set: this process was not started by "
         "tests/harness/with-user-manager.sh, so it cannot know that the bus at "
      << bus << " belongs to a user manager it may use.";
  cgroup_root_ = getenv_or("NERVE_CGROUP_ROOT", "/sys/fs/cgroup");

  // Orphans of the processes a test starts (the escaper's double-forked grandchild) become children
  // of this process, not of the machine's PID 1, so TearDown can collect them.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);

  char tmpl[] = "/tmp/nerve-it.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr) << "mkdtemp: " << std::strerror(errno);
  tmp_ = tmpl;
  state_ = tmp_ + "/state";
  runs_ = state_ + "/runs";
  ASSERT_EQ(::mkdir(state_.c_str(), 0700), 0);
  nerved_log_ = path("nerved.log");
  logs_.push_back(nerved_log_);
  ASSERT_NO_FATAL_FAILURE(start_nerved());
}

void NervedTest::start_nerved(Env env) {
  int ready[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  int log = open_log(nerved_log_);
  SpawnSpec spec;
  spec.argv = {kNerved, "--ready-fd", "3", "--verbose"};
  if (runs_dir_flag_) spec.argv.insert(spec.argv.end(), {"--runs-dir", runs_});
  // The harness's --no-manager mode: the same suite on the cgroup backend (docs/testing.md).
  if (getenv_or("NERVE_TEST_BACKEND", "systemd") == "cgroup") spec.argv.push_back("--backend=cgroup");
  spec.argv.insert(spec.argv.end(), nerved_args_.begin(), nerved_args_.end());
  spec.stdout_fd = log;
  spec.stderr_fd = log;
  spec.keep_fds = {{ready[1], 3}};
  spec.env = std::move(env);
  nerved_pid_ = spawn(spec);
  ::close(ready[1]);
  ::close(log);

  bool eof = false;
  std::string said = read_until_eof(ready[0], kEventTimeout, &eof);
  ::close(ready[0]);
  ASSERT_EQ(said, "READY\n") << "nerved (pid " << nerved_pid_ << ") did not report READY within "
                             << kEventTimeout.count() << " ms"
                             << (eof ? " (it closed --ready-fd)" : "") << "; its state: "
                             << describe_process(nerved_pid_);
  ASSERT_TRUE(eof) << "nerved wrote READY but did not close --ready-fd";
  ASSERT_TRUE(alive(nerved_pid_));
}

int NervedTest::await_nerved_exit() {
  auto code = wait_child(nerved_pid_, kEventTimeout);
  if (!code) {
    ADD_FAILURE() << "nerved (pid " << nerved_pid_ << ") is still running after " << kEventTimeout.count() << " ms";
    return -1;
  }
  nerved_pid_ = -1;
  return *code;
}

void NervedTest::stop_nerved() {
  if (nerved_pid_ <= 0) return;
  pid_t pid = nerved_pid_;
  nerved_pid_ = -1;
  ::kill(pid, SIGTERM);
  auto code = wait_child(pid, kStopTimeout);
  if (!code) {
    ADD_FAILURE() << "nerved (pid " << pid << ") did not exit within " << kStopTimeout.count()
                  << " ms of SIGTERM; killing it";
    ::kill(pid, SIGKILL);
    wait_child(pid, kStopTimeout);
    return;
  }
  EXPECT_EQ(*code, 0) << "nerved exited with " << *code << " after SIGTERM";
}

void NervedTest::TearDown() {
  // Kill, by pid, what the test started and is still there (a pid whose start time changed is
  // someone else's now and is left alone).
  for (const auto& t : tracked_) {
    auto start = proc_start_time(t.pid);
    if (start && *start == t.start_time && alive(t.pid)) ::kill(t.pid, SIGKILL);
  }
  for (const auto& t : tracked_) {
    auto start = proc_start_time(t.pid);
    if (!start || *start != t.start_time) continue;
    bool gone = wait_gone(t.pid, kStopTimeout);
    if (t.escaper) {
      EXPECT_TRUE(gone) << "escaper process " << describe_process(t.pid) << " survived SIGKILL";
    }
  }
  stop_nerved();
  reap_ended_children();
  // After nerved, which holds the runs folder open; before the temp folder the mounts are in.
  for (const auto& m : mounts_) ::umount2(m.c_str(), MNT_DETACH);
  mounts_.clear();

  if (HasFailure()) {
    for (const auto& f : logs_) {
      auto text = read_file(f);
      std::cerr << "---- " << f << (text ? "" : " (missing)") << " ----\n" << text.value_or("") << "---- end ----\n";
    }
  }
  if (!tmp_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }
}

void NervedTest::mount_small_tmpfs(const std::string& dir, const std::string& size) {
  ASSERT_TRUE(::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) << "mkdir " << dir << ": " << std::strerror(errno);
  const std::string options = "size=" + size + ",mode=0700";
  int rc = ::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str());
  if (rc != 0 && errno == EPERM && ::geteuid() != 0) {
    const char* step = nullptr;
    int err = unshare_with_own_user_namespace(CLONE_NEWNS, &step);
    ASSERT_EQ(err, 0) << "a user + mount namespace of our own (" << step << "): " << std::strerror(err);
    rc = ::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str());
  }
  ASSERT_EQ(rc, 0) << "mount tmpfs (" << options << ") at " << dir << ": " << std::strerror(errno);
  mounts_.push_back(dir);
}

Output NervedTest::ctl(std::vector<std::string> args, Env env, milliseconds timeout) {
  SpawnSpec spec;
  spec.argv = {kNervectl};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = std::move(env);
  return run(std::move(spec), timeout);
}

pid_t NervedTest::start_background(const std::string& name, std::vector<std::string> argv, int stdout_fd) {
  std::string out = path(name + ".out"), err = path(name + ".err");
  int out_fd = stdout_fd >= 0 ? -1 : open_log(out);
  int err_fd = open_log(err);
  SpawnSpec spec;
  spec.argv = std::move(argv);
  spec.stdout_fd = stdout_fd >= 0 ? stdout_fd : out_fd;
  spec.stderr_fd = err_fd;
  pid_t pid = spawn(spec);
  if (out_fd >= 0) ::close(out_fd);
  ::close(err_fd);
  if (stdout_fd < 0) logs_.push_back(out);
  logs_.push_back(err);
  track(pid, false);
  return pid;
}

pid_t NervedTest::ctl_background(const std::string& name, std::vector<std::string> args, int stdout_fd) {
  std::vector<std::string> argv = {kNervectl};
  argv.insert(argv.end(), args.begin(), args.end());
  return start_background(name, std::move(argv), stdout_fd);
}

void NervedTest::track(pid_t pid, bool escaper) {
  if (pid <= 0) return;
  for (auto& t : tracked_) {
    if (t.pid == pid) {
      t.escaper = t.escaper || escaper;
      return;
    }
  }
  tracked_.push_back({pid, proc_start_time(pid).value_or(0), escaper});
}

std::map<std::string, pid_t> NervedTest::launch_escaper(const std::string& markers) {
  EXPECT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  EXPECT_EQ(pids.size(), 4u);
  for (const auto& [role, pid] : pids) EXPECT_TRUE(alive(pid)) << role;
  return pids;
}

std::map<std::string, pid_t> NervedTest::await_markers(const std::string& dir) {
  std::map<std::string, pid_t> pids;
  bool ready = wait_for_file(dir + "/ready");
  // Whatever got written is tracked, ready or not, so TearDown kills it.
  for (const char* role : kRoles)
    if (pid_t p = read_pid_file(dir + "/" + role + ".pid")) track(p, true);
  if (!ready) {
    ADD_FAILURE() << "the escaper did not write " << dir << "/ready within " << kEventTimeout.count()
                  << " ms; " << dir << " holds: " << ::testing::PrintToString(list_folder(dir));
    return {};
  }
  for (const char* role : kRoles) {
    pid_t p = read_pid_file(dir + "/" + role + ".pid");
    if (p <= 0) {
      ADD_FAILURE() << "the escaper wrote ready but no valid " << role << ".pid";
      return {};
    }
    pids[role] = p;
  }
  return pids;
}

pid_t NervedTest::await_pidfile(const std::string& file) {
  if (!wait_for_file(file)) {
    ADD_FAILURE() << "no pid file " << file << " within " << kEventTimeout.count() << " ms";
    return 0;
  }
  pid_t p = read_pid_file(file);
  if (p <= 0) ADD_FAILURE() << "pid file " << file << " holds no pid";
  track(p, true);
  return p;
}

Record NervedTest::record(const std::string& run) const {
  auto text = read_file(runs_ + "/" + run + "/lifecycle.json");
  if (!text) throw std::runtime_error("no " + runs_ + "/" + run + "/lifecycle.json");
  return parse_record(*text);
}

Receipt NervedTest::receipt(const std::string& run) const {
  auto text = read_file(runs_ + "/" + run + "/receipt.json");
  if (!text) throw std::runtime_error("no " + runs_ + "/" + run + "/receipt.json");
  return parse_receipt(*text);
}

std::string NervedTest::unit_property(const std::string& unit, const std::string& name) {
  if (cgroup_backend()) {
    auto value = cgroup_unit_property(unit, name);
    EXPECT_TRUE(value) << "the cgroup backend has no property " << name << " (of " << unit << ")";
    return value.value_or("");
  }
  Output o = run(command({"systemctl", "--user", "show", "-p", name, "--value", unit}));
  EXPECT_EQ(o.exit_code, 0) << "systemctl --user show " << unit << ": " << o.err;
  while (!o.out.empty() && o.out.back() == '\n') o.out.pop_back();
  return o.out;
}

BusReply NervedTest::call_nerved(const std::string& method, const std::string& run_id) {
  return call_nerved([&](sdbus::IProxy& proxy) {
    const char* iface = "org.nerve.Lifecycle1.Manager";
    if (method == "Contain")
      proxy.callMethod("Contain").onInterface(iface).withArguments(run_id, std::uint64_t{0},
                                                                   std::map<std::string, sdbus::Variant>{});
    else if (method == "Reap")
      proxy.callMethod("Reap").onInterface(iface).withArguments(run_id, std::uint64_t{0});
    else if (method == "GetRun" || method == "Forget")
      proxy.callMethod(method).onInterface(iface).withArguments(run_id);
    else
      proxy.callMethod(method).onInterface(iface);
  });
}

BusReply NervedTest::call_nerved(const std::function<void(sdbus::IProxy&)>& call) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) < 0) return {"", "", "pipe2 failed"};
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = ::fork();
  if (pid < 0) return {"", "", "fork failed"};
  if (pid == 0) {
    ::close(p[0]);
    std::string answer;
    try {
      auto proxy = sdbus::createProxy(sdbus::createSessionBusConnection(), "org.nerve.Lifecycle1",
                                      "/org/nerve/Lifecycle1");
      call(*proxy);
      answer = "ok\n\n";
    } catch (const sdbus::Error& e) {
      answer = "error\n" + e.getName() + "\n" + e.getMessage();
    } catch (const std::exception& e) {
      answer = "failure\n\n" + std::string(e.what());
    }
    (void)!::write(p[1], answer.data(), answer.size());
    ::_exit(0);
  }
  ::close(p[1]);
  bool eof = false;
  std::string text = read_until_eof(p[0], kEventTimeout, &eof);
  ::close(p[0]);
  auto code = wait_child(pid, kStopTimeout);
  if (!code) {
    ::kill(pid, SIGKILL);
    wait_child(pid, kStopTimeout);
    return {"", "", "the bus helper process did not end"};
  }
  auto nl1 = text.find('\n');
  auto nl2 = nl1 == std::string::npos ? std::string::npos : text.find('\n', nl1 + 1);
  if (nl2 == std::string::npos) return {"", "", "no answer from the bus helper: '" + text + "'"};
  std::string kind = text.substr(0, nl1);
  if (kind == "ok") return {};
  if (kind == "error") return {text.substr(nl1 + 1, nl2 - nl1 - 1), text.substr(nl2 + 1), ""};
  return {"", "", text.substr(nl2 + 1)};
}

void NervedTest::expect_no_run_left(const std::string& when) {
  std::vector<std::string> units, folders;
  EXPECT_TRUE(eventually([&] { return (units = live_nerve_units()).empty(); }, milliseconds(5000)))
      << "units left " << when << ": " << ::testing::PrintToString(units);
  EXPECT_TRUE(eventually([&] { return (folders = nerve_cgroup_folders()).empty(); }, milliseconds(5000)))
      << "cgroup folders left " << when << ": " << ::testing::PrintToString(folders);
}

void expect_all_gone_by(const std::map<std::string, pid_t>& pids, Clock::time_point t0, Clock::time_point deadline,
                        const std::string& what) {
  for (const auto& [role, pid] : pids) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    EXPECT_TRUE(wait_gone(pid, left < milliseconds(0) ? milliseconds(0) : left))
        << role << " still alive " << since(t0).count() << " ms after " << what << ": " << describe_process(pid);
  }
}

}  // namespace nerve::itest
