// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl's systemctl conventions with the real nerved: `list` in columns sized to their content with
// a legend (or none with --no-legend, "No runs." when empty), colour only when wanted, `status` exit
// codes as LSB (0 running, 3 not running, 4 no such run), --json=MODE, and `events` following nerved's
// signals live.
#include "nerved_fixture.h"
#include "backend_view.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <regex>

namespace nerve::itest {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class NervectlConventions : public NervedTest {
 protected:
  // nervectl launch RUN -- escaper --pidfile: a running run with one process.
  void launch_running(const std::string& run) {
    std::string pidfile = path(run + ".pid");
    pid_t launcher = ctl_background(run, {"launch", "--grace", kShortGraceArg, run, "--", kEscaper, "--pidfile", pidfile});
    ASSERT_EQ(await_pidfile(pidfile), launcher) << "run " << run << " did not start";
  }
  void reap(const std::string& run) {
    Output o = ctl({"reap", "--grace", kShortGraceArg, run});
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  }
};

// Where each word of LINE starts.
std::vector<std::size_t> word_starts(const std::string& line) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] != ' ' && (i == 0 || line[i - 1] == ' ')) out.push_back(i);
  return out;
}

TEST_F(NervectlConventions, ListWithoutRunsSaysNoRunsAndNothingElse) {
  Output o = ctl({"list"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "No runs.\n");
  Output bare = ctl({"list", "--no-legend"});
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.out, "") << "--no-legend prints only rows, and there are none";
}

TEST_F(NervectlConventions, ListPrintsColumnsSizedToTheirContentAndALegend) {
  ASSERT_NO_FATAL_FAILURE(launch_running("r1"));
  ASSERT_NO_FATAL_FAILURE(launch_running("a-much-longer-run-id"));
  Output o = ctl({"list"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto lines = lines_of(o.out);
  ASSERT_EQ(lines.size(), 5u) << o.out;
  EXPECT_THAT(lines[0], ::testing::MatchesRegex("RUN +STATE +UNIT +PROCESSES +AGE +OUTCOME"));
  EXPECT_EQ(lines[3], "");
  EXPECT_EQ(lines[4], "2 runs listed.");
  auto columns = word_starts(lines[0]);
  ASSERT_EQ(columns.size(), 6u);
  EXPECT_EQ(columns[1], std::string("a-much-longer-run-id ").size()) << "RUN is as wide as the longest id:\n" << o.out;
  for (const std::string run : {"a-much-longer-run-id", "r1"}) {
    auto row = std::find_if(lines.begin() + 1, lines.begin() + 3, [&](const std::string& l) { return l.rfind(run + " ", 0) == 0; });
    ASSERT_NE(row, lines.begin() + 3) << run << " is not listed:\n" << o.out;
    EXPECT_EQ(word_starts(*row), columns) << "the columns of " << run << " do not line up:\n" << o.out;
    EXPECT_THAT(*row, ::testing::MatchesRegex(run + " +running +nerve-" + run + "-[0-9a-f]+\\.scope +1 +[0-9]+s +-"));
    EXPECT_EQ(row->back(), '-') << "nothing after the last column";
  }
  EXPECT_THAT(o.out, Not(HasSubstr("\x1b["))) << "colour on a pipe";

  Output bare = ctl({"list", "--no-legend"});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(lines_of(bare.out).size(), 2u) << bare.out;
  EXPECT_THAT(bare.out, Not(HasSubstr("RUN"))) << bare.out;
  EXPECT_THAT(bare.out, Not(HasSubstr("listed"))) << bare.out;

  EXPECT_THAT(ctl({"list"}, {{"SYSTEMD_COLORS", "1"}}).out, HasSubstr("\x1b[0;32mrunning\x1b[0m"));
  EXPECT_THAT(ctl({"list"}, {{"SYSTEMD_COLORS", "1"}, {"NO_COLOR", "1"}}).out, Not(HasSubstr("\x1b[")));

  reap("r1");
  reap("a-much-longer-run-id");
  Output after = ctl({"list", "--no-legend"});
  EXPECT_THAT(after.out, ::testing::MatchesRegex("(r1|a-much-longer-run-id) +reaped +[^ ]+ +0 +[0-9]+s +complete\n"
                                                 "(r1|a-much-longer-run-id) +reaped +[^ ]+ +0 +[0-9]+s +complete\n"));
}

TEST_F(NervectlConventions, JsonTakesAModeAsInSystemctl) {
  ASSERT_NO_FATAL_FAILURE(launch_running("r1"));
  Output pretty = ctl({"list", "--json=pretty"});
  ASSERT_EQ(pretty.exit_code, 0) << pretty.err;
  EXPECT_GT(lines_of(pretty.out).size(), 3u) << "pretty is indented over several lines:\n" << pretty.out;
  json p = json::parse(pretty.out);
  Output shrt = ctl({"list", "--json=short"});
  EXPECT_EQ(lines_of(shrt.out).size(), 1u) << shrt.out;
  Output plain = ctl({"list", "--json"});
  EXPECT_EQ(plain.out, shrt.out) << "plain --json is short";
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0]["processes"], 1);
  EXPECT_EQ(p[0]["created_at"], record("r1").created_at);
  Output off = ctl({"list", "--json=off"});
  EXPECT_THAT(off.out, HasSubstr("1 run listed.")) << "off is the table";
  Output bad = ctl({"list", "--json=yaml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("'yaml'"));
  reap("r1");
}

TEST_F(NervectlConventions, StatusExitsZeroForARunningRunThreeOtherwiseAndFourForNoSuchRun) {
  ASSERT_NO_FATAL_FAILURE(launch_running("r1"));
  EXPECT_EQ(ctl({"status", "r1"}).exit_code, 0);
  EXPECT_EQ(ctl({"status", "--json", "r1"}).exit_code, 0);
  reap("r1");
  Output reaped = ctl({"status", "r1"});
  EXPECT_EQ(reaped.exit_code, 3) << reaped.out << reaped.err;
  EXPECT_THAT(reaped.out, HasSubstr("run r1 (attempt 1): reaped"));
  EXPECT_EQ(ctl({"status", "--json", "r1"}).exit_code, 3);
  Output unknown = ctl({"status", "nope"});
  EXPECT_EQ(unknown.exit_code, 4) << unknown.out << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("org.nerve.Lifecycle1.Error.NoSuchRun"));
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(ctl({"status", "--json", "nope"}).exit_code, 4);
  EXPECT_EQ(ctl({"status", "../x"}).exit_code, 2) << "a bad run id is still a usage error";
}

// A run whose record says running but whose scope was stopped behind nerved's back is not running,
// as systemctl would say of its unit.
TEST_F(NervectlConventions, StatusOfARunWhoseScopeIsGoneIsNotRunning) {
  std::string pidfile = path("r1.pid");
  pid_t launcher = ctl_background("r1", {"launch", "--keep", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--pidfile", pidfile});
  ASSERT_EQ(await_pidfile(pidfile), launcher);
  ASSERT_EQ(ctl({"status", "r1"}).exit_code, 0);
  Record rec = record("r1");
  ASSERT_EQ(stop_out_of_band(rec.unit), "");
  ASSERT_TRUE(wait_gone(launcher, kEventTimeout)) << describe_process(launcher);
  // nerved watches the run's leaf: the run's processes are gone, so it reaps the run (cause exited).
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "nothing reaped the run whose processes were stopped";
  ASSERT_TRUE(eventually([&] { return to_string(record("r1").state) == "reaped"; }, kEventTimeout));
  Output o = ctl({"status", "r1"});
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("run r1 (attempt 1): reaped"));
  EXPECT_THAT(o.out, HasSubstr("processes:     none"));
  EXPECT_EQ(to_string(*receipt("r1").cause), "exited");
}

// `nervectl events` in the background, its stdout and stderr on pipes; returns once it said (on
// stderr) that it follows, so nothing after that can be missed.
struct EventsProcess {
  pid_t pid = -1;
  int out = -1;
};

class NervectlEvents : public NervectlConventions {
 protected:
  EventsProcess start_events(std::vector<std::string> extra = {}) {
    int out[2], err[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    SpawnSpec spec = command({kNervectl, "events"});
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    spec.stdout_fd = out[1];
    spec.stderr_fd = err[1];
    pid_t pid = spawn(spec);
    track(pid, false);
    ::close(out[1]);
    ::close(err[1]);
    std::string said;
    EXPECT_TRUE(read_until(err[0], "Following nerved's signals", kEventTimeout, &said)) << said;
    ::close(err[0]);
    fds_.push_back(out[0]);
    return {pid, out[0]};
  }
  // The line of OUT that contains all of WORDS, read within the bound; "" if none came.
  std::string await_line(int fd, const std::vector<std::string>& words) {
    auto deadline = Clock::now() + kEventTimeout;
    while (Clock::now() < deadline) {
      auto nl = got_.find('\n');
      if (nl != std::string::npos) {
        std::string line = got_.substr(0, nl);
        got_.erase(0, nl + 1);
        seen_ += line + "\n";
        bool all = std::all_of(words.begin(), words.end(), [&](const std::string& w) { return line.find(w) != std::string::npos; });
        if (all) return line;
        continue;
      }
      std::string more;
      read_until(fd, "\n", std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), &more);
      if (more.empty()) break;
      got_ += more;
    }
    ADD_FAILURE() << "no event line with " << ::testing::PrintToString(words) << "; seen:\n" << seen_ << got_;
    return "";
  }
  // SIGTERM ends it with exit 0.
  void expect_ends_cleanly(pid_t pid) {
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    auto code = wait_child(pid, kEventTimeout);
    ASSERT_TRUE(code.has_value()) << "nervectl events did not end on SIGTERM";
    EXPECT_EQ(*code, 0);
  }
  // Launch (the engine API) of `sh -c 'exit CODE'` as RUN from a helper process, with "keep", so that
  // the helper's exit cannot reap the run before the command's own exit is seen.
  void launch_exiting(const std::string& run, int code) {
    BusReply r = call_nerved([&](sdbus::IProxy& proxy) {
      std::vector<sdbus::UnixFd> stdio;
      for (int i = 0; i < 3; ++i) stdio.emplace_back(::open("/dev/null", O_RDWR | O_CLOEXEC), sdbus::adopt_fd);
      sdbus::ObjectPath object;
      std::uint32_t pid = 0;
      proxy.callMethod("Launch")
          .onInterface("org.nerve.Lifecycle1.Manager")
          .withArguments(run, std::vector<std::string>{"sh", "-c", "exit " + std::to_string(code)},
                         std::vector<std::string>{"PATH=/usr/bin:/bin"}, tmp_, stdio,
                         std::map<std::string, sdbus::Variant>{{"keep", sdbus::Variant(true)}})
          .storeResultsTo(object, pid);
    });
    ASSERT_EQ(r.error_name + r.failure, "") << r.error_message;
  }
  void TearDown() override {
    for (int fd : fds_) ::close(fd);
    NervectlConventions::TearDown();
  }
  std::vector<int> fds_;
  std::string got_, seen_;
};

TEST_F(NervectlEvents, ShowsTheStateChangesOfARunAndTheExitOfALaunchedCommandUntilSigterm) {
  EventsProcess ev = start_events();
  Output o = ctl({"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--exit", "0"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::string reaped = await_line(ev.out, {" r1 changed ", "State=reaped"});
  EXPECT_THAT(reaped, ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z r1 changed .*State=reaped.*"));

  ASSERT_NO_FATAL_FAILURE(launch_exiting("e1", 3));
  std::string exited = await_line(ev.out, {" e1 exited "});
  EXPECT_THAT(exited, HasSubstr(" e1 exited code=3 signal=0"));
  expect_ends_cleanly(ev.pid);
}

TEST_F(NervectlEvents, WithJsonPrintsOneObjectPerLine) {
  EventsProcess ev = start_events({"--json"});
  ASSERT_NO_FATAL_FAILURE(launch_exiting("e1", 7));
  std::string exited = await_line(ev.out, {"\"RunExited\""});
  ASSERT_FALSE(exited.empty());
  json e = json::parse(exited);
  EXPECT_EQ(e["event"], "RunExited");
  EXPECT_EQ(e["run"], "e1");
  EXPECT_EQ(e["exit_code"], 7);
  EXPECT_EQ(e["signal"], 0);
  EXPECT_TRUE(e["time"].is_string());
  std::string changed = await_line(ev.out, {"\"PropertiesChanged\"", "\"e1\""});
  ASSERT_FALSE(changed.empty());
  json c = json::parse(changed);
  EXPECT_EQ(c["interface"], "org.nerve.Lifecycle1.Run");
  EXPECT_TRUE(c["changed"].is_object()) << changed;
  expect_ends_cleanly(ev.pid);
}

}  // namespace
}  // namespace nerve::itest
