// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl doctor` against the real nerved and user manager: every required check passes under the
// harness (exit 0, the probe run contained, reaped and forgotten without a trace), and a check fails
// with what to do when nerved is not running or its runs folder cannot be written.
#include "nerved_fixture.h"
#include "backend_view.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nerve::itest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class Doctor : public NervedTest {};

const std::vector<std::string> kRequired = {"session bus", "cgroup2", "backend", "nerved", "runs folder",
                                            "probe scope"};

// The line of doctor's text output for CHECK ("" if there is none) and the hint line after it.
std::pair<std::string, std::string> check_line(const std::string& out, const std::string& check) {
  auto lines = lines_of(out);
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].size() > 6 && lines[i].substr(6, check.size() + 1) == check + " ")
      return {lines[i], i + 1 < lines.size() && lines[i + 1].rfind("      -> ", 0) == 0 ? lines[i + 1] : ""};
  return {"", ""};
}

TEST_F(Doctor, PassesEveryRequiredCheckUnderTheHarnessAndLeavesNoTrace) {
  Output o = ctl({"doctor"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  for (const auto& check : kRequired) {
    auto [line, hint] = check_line(o.out, check);
    EXPECT_THAT(line, ::testing::StartsWith("ok    " + check)) << o.out;
    EXPECT_EQ(hint, "") << "a hint for a check that passed:\n" << o.out;
  }
  EXPECT_THAT(check_line(o.out, "probe scope").first, HasSubstr("reaped (no process left) and forgotten"));
  if (cgroup_backend()) {  // no user manager: a warning, not a failure; the backend check says what holds runs
    EXPECT_THAT(check_line(o.out, "user manager").first, ::testing::MatchesRegex("WARN +user manager +no systemd user manager .*"));
    EXPECT_THAT(check_line(o.out, "backend").first, ::testing::MatchesRegex("ok +backend +cgroup: .*subtree / .*"));
    EXPECT_THAT(check_line(o.out, "nerved").first, HasSubstr("; backend cgroup subtree /"));
  } else {
    EXPECT_THAT(check_line(o.out, "user manager").first, ::testing::MatchesRegex("ok +user manager +systemd [0-9]+.*"));
    EXPECT_THAT(check_line(o.out, "backend").first, ::testing::MatchesRegex("ok +backend +systemd: .*"));
    EXPECT_THAT(check_line(o.out, "nerved").first, HasSubstr("; backend the systemd user manager"));
  }
  EXPECT_THAT(check_line(o.out, "nerved").first, ::testing::MatchesRegex("ok +nerved .*; version [0-9]+\\.[0-9]+\\.[0-9]+;.*"));
  EXPECT_THAT(check_line(o.out, "controllers").first, ::testing::MatchesRegex("(ok|WARN) +controllers .*"));
  EXPECT_THAT(check_line(o.out, "sealing").first, ::testing::MatchesRegex("(ok|INFO) +sealing .*"));
  EXPECT_THAT(lines_of(o.out).back(), "All required checks passed.");

  EXPECT_THAT(list_folder(runs_), IsEmpty()) << "the probe run or the test file was left in the runs folder";
  EXPECT_THAT(ctl({"list"}).out, "No runs.\n");
  expect_no_run_left("after doctor");
}

TEST_F(Doctor, WithJsonPrintsOneObjectPerCheck) {
  Output o = ctl({"doctor", "--json"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(lines_of(o.out).size(), 1u) << "plain --json is one line";
  json checks = json::parse(o.out);
  ASSERT_TRUE(checks.is_array());
  std::vector<std::string> names;
  for (const auto& c : checks) {
    names.push_back(c.at("check"));
    EXPECT_TRUE(c.at("detail").is_string());
    EXPECT_TRUE(c.at("hint").is_string());
    EXPECT_THAT(std::string(c.at("status")), ::testing::AnyOf("ok", "fail", "warn", "info"));
    if (std::find(kRequired.begin(), kRequired.end(), names.back()) != kRequired.end()) {
      EXPECT_EQ(c["status"], "ok") << c.dump();
    }
  }
  EXPECT_THAT(names, ::testing::ElementsAre("session bus", "user manager", "cgroup2", "backend", "controllers",
                                            "nerved", "runs folder", "probe scope", "sealing"));
}

TEST_F(Doctor, FailsWithWhatToDoWhenNervedIsNotRunning) {
  stop_nerved();
  Output o = ctl({"doctor"});
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  auto [line, hint] = check_line(o.out, "nerved");
  EXPECT_THAT(line, ::testing::StartsWith("FAIL  nerved")) << o.out;
  EXPECT_THAT(line, HasSubstr("org.freedesktop.DBus.Error")) << "the bus's own reason";
  EXPECT_THAT(hint, HasSubstr("systemctl --user start nerved")) << o.out;
  EXPECT_THAT(check_line(o.out, "session bus").first, ::testing::StartsWith("ok ")) << o.out;
  EXPECT_THAT(check_line(o.out, "backend").first, ::testing::StartsWith("ok ")) << o.out;
  EXPECT_THAT(check_line(o.out, "probe scope").first, ::testing::StartsWith("FAIL ")) << o.out;
  EXPECT_THAT(o.out, HasSubstr("required checks failed."));

  json checks = json::parse(ctl({"doctor", "--json"}).out);
  auto nerved = std::find_if(checks.begin(), checks.end(), [](const json& c) { return c["check"] == "nerved"; });
  ASSERT_NE(nerved, checks.end());
  EXPECT_EQ((*nerved)["status"], "fail");
  EXPECT_THAT(std::string((*nerved)["hint"]), HasSubstr("nerved"));
  expect_no_run_left("after doctor without nerved");
}

TEST_F(Doctor, WithoutASessionBusSaysHowToGetOne) {
  Output o = ctl({"doctor"}, {{"DBUS_SESSION_BUS_ADDRESS", "unix:path=" + path("no-bus")}});
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  auto [line, hint] = check_line(o.out, "session bus");
  EXPECT_THAT(line, ::testing::StartsWith("FAIL  session bus")) << o.out;
  EXPECT_THAT(line, HasSubstr(path("no-bus"))) << "the address tried is named";
  EXPECT_THAT(hint, HasSubstr("loginctl enable-linger")) << o.out;
  EXPECT_THAT(hint, HasSubstr("tests/harness/with-user-manager.sh")) << o.out;
  for (const std::string check : {"user manager", "backend", "nerved", "runs folder", "probe scope"}) {
    auto [dependent, see] = check_line(o.out, check);
    EXPECT_THAT(dependent, ::testing::MatchesRegex("FAIL  " + check + " +not checked: needs .*")) << o.out;
    EXPECT_THAT(see, HasSubstr("above")) << o.out;
  }
  EXPECT_THAT(check_line(o.out, "cgroup2").first, ::testing::StartsWith("ok ")) << "checked without a bus";
}

// The runs folder read-only: a read-only bind mount of itself (root, in the harness's own mount
// namespace), or no write permission (any other account).
class DoctorWithAReadOnlyRunsFolder : public Doctor {
 protected:
  void make_read_only() {
    if (::geteuid() == 0) {
      ASSERT_EQ(::mount(runs_.c_str(), runs_.c_str(), nullptr, MS_BIND, nullptr), 0) << std::strerror(errno);
      mounted_ = true;
      ASSERT_EQ(::mount(nullptr, runs_.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
          << std::strerror(errno);
    } else {
      ASSERT_EQ(::chmod(runs_.c_str(), 0500), 0) << std::strerror(errno);
    }
  }
  void TearDown() override {
    if (mounted_) ::umount2(runs_.c_str(), MNT_DETACH);
    ::chmod(runs_.c_str(), 0700);
    Doctor::TearDown();
  }
  bool mounted_ = false;
};

TEST_F(DoctorWithAReadOnlyRunsFolder, FailsTheRunsFolderCheckWithWhatToDo) {
  ASSERT_NO_FATAL_FAILURE(make_read_only());
  Output o = ctl({"doctor"});
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  auto [line, hint] = check_line(o.out, "runs folder");
  EXPECT_THAT(line, ::testing::StartsWith("FAIL  runs folder")) << o.out;
  EXPECT_THAT(line, HasSubstr(runs_)) << "the folder is named";
  EXPECT_THAT(line, ::testing::AnyOf(HasSubstr("Read-only file system"), HasSubstr("Permission denied")));
  EXPECT_THAT(hint, HasSubstr("make the folder writable")) << o.out;
  EXPECT_THAT(check_line(o.out, "nerved").first, ::testing::StartsWith("ok ")) << o.out;
  expect_no_run_left("after doctor on a read-only runs folder");
}

}  // namespace
}  // namespace nerve::itest
