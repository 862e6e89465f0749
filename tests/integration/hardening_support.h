// SPDX-License-Identifier: LGPL-2.1-or-later
// What the hardening tests (hardening_*_test.cpp) share: a fixture over NervedTest with
// owners that hold many runs, records written by hand into the runs folder, bus calls made in this
// process with their own deadline and measured, and the faults the kernel gives for real (a stalled
// user manager by SIGSTOP, a full tmpfs, a low RLIMIT_NOFILE) plus the EIO shim (tests/fault/).
#pragma once

#include "nerved_fixture.h"

#include "base/timestamps.h"

#include <fcntl.h>
#include <sdbus-c++/sdbus-c++.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nerve::itest {

// A bus call's outcome, made in this process with its own deadline.
struct Timed {
  std::string error;  // empty on success, else the error name
  std::string message;
  std::string text;  // the string a GetRun returns
  std::size_t count = 0;  // the rows a ListRuns returns
  milliseconds took{0};     // the call, from its sending to its answer
  milliseconds connect{0};  // connecting to the bus before it
};

class Hardening : public NervedTest {
 protected:
  void TearDown() override {
    resume_manager();
    NervedTest::TearDown();
  }

  // An owner process (sh) that runs `nervectl launch RUN [ARGS] -- CMD...` for each run, in the
  // background, then waits: it owns all of them (nervectl's parent is a run's owner; nervectl
  // becomes CMD in place). Tracked.
  // In waves of kLaunchWave: these tests are about holding many runs, not about a burst. 300
  // launches at once queue behind each other at the user manager; on a loaded 2-core machine
  // (load 5) the last ones waited past nervectl's 25 s call bound and were refused ("nerved did not
  // answer"). The owner reads a line from a gate (a fifo) before each next wave; this function
  // writes it once the wave's records say running (or after a minute: the caller's own wait then
  // reports what is missing), and returns when the last wave is started.
  static constexpr std::size_t kLaunchWave = 50;
  pid_t start_owner(const std::string& name, const std::vector<std::string>& runs,
                    const std::string& launch_args = "--grace 1", const std::string& cmd = "sleep 600") {
    const std::string gate = path(name + ".gate");
    if (::mkfifo(gate.c_str(), 0600) != 0) ADD_FAILURE() << "mkfifo " << gate << ": " << std::strerror(errno);
    std::string script = "exec 3<>'" + gate + "'; ";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      script += "'" + kNervectl + "' launch " + launch_args + " " + runs[i] + " -- " + cmd + " 3<&- & ";
      if ((i + 1) % kLaunchWave == 0 && i + 1 < runs.size()) script += "read _ <&3; ";
    }
    script += "exec 3<&-; wait";
    pid_t owner = start_background(name, {"sh", "-c", script});
    int fd = ::open(gate.c_str(), O_RDWR | O_CLOEXEC);  // read-write: never blocks for a reader
    for (std::size_t begin = 0; begin + kLaunchWave < runs.size(); begin += kLaunchWave) {
      std::vector<std::string> wave(runs.begin() + begin, runs.begin() + begin + kLaunchWave);
      await_state(wave, "running", std::chrono::milliseconds(60'000));
      if (fd < 0 || ::write(fd, "\n", 1) != 1) ADD_FAILURE() << "cannot open the gate " << gate;
    }
    if (fd >= 0) ::close(fd);
    return owner;
  }

  // Bounded wait until every run's record has said STATE (records written by nerved); a run is not
  // read again once it did, so thousands of runs are cheap to wait for.
  bool await_state(const std::vector<std::string>& runs, const std::string& state, milliseconds timeout) {
    std::vector<std::string> left = runs;
    return eventually([&] {
      std::vector<std::string> still;
      for (const auto& r : left) {
        auto text = read_file(runs_ + "/" + r + "/lifecycle.json");
        bool there = false;
        try {
          there = text && to_string(parse_record(*text).state) == state;
        } catch (const std::exception&) {
        }
        if (!there) still.push_back(r);
      }
      left.swap(still);
      return left.empty();
    }, timeout);
  }

  static std::vector<std::string> run_ids(const std::string& prefix, int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
  }

  // Writes TEXT as RUN's lifecycle.json (folder 0700), as if nerve had: for records nerve would not write.
  void write_record_text(const std::string& run, const std::string& text, const std::string& file = "lifecycle.json") {
    std::string dir = runs_ + "/" + run;
    ::mkdir(dir.c_str(), 0700);
    std::ofstream(dir + "/" + file) << text;
  }

  // A record of RUN as nerve writes one for a live scope, with every field well formed.
  Record plausible_record(const std::string& run, const std::string& boot_id) const {
    Record r;
    r.run = run;
    r.nonce = "0123456789abcdef";
    r.unit = "nerve-" + run + "-" + r.nonce + ".scope";
    r.boot_id = boot_id;
    r.invocation_id = std::string(32, 'a');
    r.cgroup = "/app.slice/" + r.unit;
    r.cgroup_id = 1;
    r.state = RunState::Running;
    r.grace_usec = 1'000'000;
    r.owner.kind = OwnerKind::None;
    // Now, never a fixed date: nerved forgets a reaped run keep_finished (7 days) after it ended, so a
    // record dated once "recent" becomes one nerved prunes at startup as the calendar moves on. A test
    // that needs an old record makes its age relative to this (see clock.AYearAhead).
    r.created_at = r.updated_at = now_rfc3339();
    return r;
  }

  std::string boot_id() const {
    auto text = read_file("/proc/sys/kernel/random/boot_id").value_or("");
    std::string out;
    for (char c : text)
      if (c != '-' && c != '\n') out += c;
    return out;
  }

  // GetRun / ListRuns / any Manager method on a connection of this process, with DEADLINE.
  Timed timed_call(const std::string& method, const std::string& run = "", milliseconds deadline = milliseconds{15'000}) {
    Timed t;
    auto start = Clock::now();
    try {
      auto bus = sdbus::createSessionBusConnection();
      auto proxy = sdbus::createProxy(*bus, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
      // The call's own round trip: connecting to the bus is this client's cost, not nerved's answer.
      t.connect = since(start);
      start = Clock::now();
      auto call = proxy->createMethodCall("org.nerve.Lifecycle1.Manager", method);
      if (!run.empty()) call << run;
      if (method == "Reap") call << std::uint64_t{0};
      auto reply = proxy->callMethod(call, static_cast<std::uint64_t>(deadline.count()) * 1000);
      if (method == "GetRun") reply >> t.text;
      if (method == "ListRuns") {
        std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> rows;
        reply >> rows;
        t.count = rows.size();
      }
    } catch (const sdbus::Error& e) {
      t.error = e.getName();
      t.message = e.getMessage();
    }
    t.took = since(start);
    return t;
  }

  // The pid of the private user manager (the owner of org.freedesktop.systemd1 on the bus).
  pid_t manager_pid() {
    auto bus = sdbus::createSessionBusConnection();
    auto dbus = sdbus::createProxy(*bus, "org.freedesktop.DBus", "/org/freedesktop/DBus");
    std::uint32_t pid = 0;
    dbus->callMethod("GetConnectionUnixProcessID")
        .onInterface("org.freedesktop.DBus")
        .withArguments(std::string("org.freedesktop.systemd1"))
        .storeResultsTo(pid);
    return static_cast<pid_t>(pid);
  }

  // SIGSTOP to the user manager: every call to it stalls until resume_manager (TearDown resumes it).
  void stall_manager() {
    stalled_ = manager_pid();
    ASSERT_GT(stalled_, 1);
    ASSERT_EQ(::kill(stalled_, SIGSTOP), 0);
  }
  void resume_manager() {
    if (stalled_ > 0) ::kill(stalled_, SIGCONT);
    stalled_ = -1;
  }

  // Fills the file system holding DIR until ENOSPC (one file, DIR/filler); true if it got full.
  static bool fill(const std::string& dir) {
    int fd = ::open((dir + "/filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    std::string block(64 * 1024, 'x');
    bool full = false;
    for (;;) {
      if (::write(fd, block.data(), block.size()) < 0) {
        full = errno == ENOSPC;
        break;
      }
    }
    // Small writes too, so not even a few bytes are left.
    while (::write(fd, "x", 1) == 1) {
    }
    ::close(fd);
    return full;
  }

  // The processes in RUN's cgroup now (empty when the record or the folder is missing).
  std::vector<pid_t> run_pids(const std::string& run) {
    std::vector<pid_t> out;
    try {
      Record rec = record(run);  // the run's processes are in its run/ leaf (none: a record without one)
      std::istringstream procs(read_file(cgroup_folder(rec.leaf.empty() ? rec.cgroup : rec.leaf) + "/cgroup.procs").value_or(""));
      for (pid_t pid; procs >> pid;) out.push_back(pid);
    } catch (const std::exception&) {
    }
    return out;
  }

  std::string log() const { return read_file(nerved_log_).value_or(""); }

  pid_t stalled_ = -1;
};

}  // namespace nerve::itest
