// SPDX-License-Identifier: LGPL-2.1-or-later
// examples/engine.py, the example engine of docs/dbus-api.md, run as a user would run it (Debian's
// /usr/bin/python3 with python3-jeepney, the package nerve from python/) against this test's nerved: its output, its JSON summary, and a
// cancel that ends a command which ignores SIGTERM and leaves a pipe holder behind.
#include "nerved_fixture.h"

#include "base/host.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <sstream>

namespace nerve::itest {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

const std::string kPython = "/usr/bin/python3";

// examples/engine.py of the source tree this file belongs to.
std::string engine_script() {
  std::filesystem::path here(__FILE__);
  return (here.parent_path().parent_path().parent_path() / "examples" / "engine.py").string();
}

// The last non-empty line of TEXT.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

class TheExampleEngine : public NervedTest {
 protected:
  void SetUp() override {
    NervedTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(std::filesystem::exists(engine_script())) << "no example engine at " << engine_script();
    // Never a skip: without python3-jeepney the example is untested, and that is a failure.
    Output lib = run(command({kPython, "-c", "import jeepney.io.threading"}));
    ASSERT_EQ(lib.exit_code, 0) << kPython << " cannot import jeepney (python3-jeepney), which the package nerve "
                                << "under examples/engine.py needs. Install it (scripts/install-deps installs it, or "
                                << "apt-get install python3-jeepney). Its error:\n" << lib.err;
  }

  // engine.py ARGS with this test's bus, run to its end; its summary (last stdout line) parsed.
  Output engine(std::vector<std::string> args, nlohmann::json* summary) {
    SpawnSpec spec;
    spec.argv = {kPython, engine_script()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env["DBUS_SESSION_BUS_ADDRESS"] = std::getenv("DBUS_SESSION_BUS_ADDRESS");
    Output o = run(std::move(spec), milliseconds{30'000});
    std::string last = last_line(o.out);
    *summary = nlohmann::json::parse(last, nullptr, false);
    return o;
  }
};

TEST_F(TheExampleEngine, StreamsTheOutputOfARunAndSummarisesItsExitAndReap) {
  nlohmann::json summary;
  Output o = engine({"r1", "--", "sh", "-c", "echo one; echo two >&2; echo three; exit 5"}, &summary);
  ASSERT_FALSE(o.timed_out) << "engine.py did not end within 30 s\nstdout:\n" << o.out << "\nstderr:\n" << o.err;
  EXPECT_EQ(o.exit_code, 0) << "stdout:\n" << o.out << "\nstderr:\n" << o.err;
  EXPECT_THAT(o.out, HasSubstr("[r1] one\n"));
  EXPECT_THAT(o.out, HasSubstr("[r1] two\n")) << "stderr goes to the same pipe";
  EXPECT_THAT(o.out, HasSubstr("[r1] three\n"));
  ASSERT_TRUE(summary.is_object()) << "the last stdout line is not a JSON summary:\n" << o.out << "\nstderr:\n" << o.err;
  EXPECT_EQ(summary.value("run", ""), "r1");
  EXPECT_THAT(summary.value("outcome", ""), AnyOf("complete", "no_scope")) << summary.dump();
  ASSERT_TRUE(summary["exited"].is_object()) << "no RunExited seen: " << summary.dump();
  EXPECT_EQ(summary["exited"].value("exit_code", -100), 5) << summary.dump();
  EXPECT_EQ(summary["exited"].value("signal", -100), 0) << summary.dump();
  EXPECT_EQ(summary["lines"], nlohmann::json({"one", "two", "three"})) << summary.dump();
  EXPECT_TRUE(summary["cancelled"].is_null());
  EXPECT_EQ(summary["receipt"].value("run", ""), "r1");
  EXPECT_EQ(summary.value("run_path", ""), "/org/nerve/Lifecycle1/run/r1");
  // The run as nerved keeps it agrees with the summary.
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json"));
  EXPECT_EQ(to_string(receipt("r1").outcome), summary.value("outcome", ""));
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  EXPECT_EQ(record("r1").leader_pid, summary.value("pid", 0));
}

TEST_F(TheExampleEngine, CancelsACommandThatIgnoresTermAndHoldsThePipeWithinTheGrace) {
  // sh ignores TERM (so does the sleep it starts, which also holds the engine's pipe); the sleep's
  // pid is written before "started".
  std::string sleep_pid = path("sleep.pid");
  std::string script = "trap '' TERM; sleep 30 & echo $! > '" + sleep_pid + "'; echo started; wait; echo never";
  nlohmann::json summary;
  auto started = Clock::now();
  Output o = engine({"--cancel-after", "0.5", "--grace", kShortGraceArg, "r1", "--", "sh", "-c", script}, &summary);
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
  pid_t sleeper = read_pid_file(sleep_pid);
  bool sleeper_alive = alive(sleeper);
  track(sleeper, true);

  ASSERT_FALSE(o.timed_out) << "engine.py did not end within 30 s\nstdout:\n" << o.out << "\nstderr:\n" << o.err;
  EXPECT_EQ(o.exit_code, 0) << "stdout:\n" << o.out << "\nstderr:\n" << o.err;
  EXPECT_THAT(o.out, HasSubstr("[r1] started\n"));
  EXPECT_THAT(o.out, ::testing::Not(HasSubstr("never")));
  EXPECT_LT(took, 500ms + kShortGrace + 3000ms) << "cancel-after + grace + 3 s; stderr:\n" << o.err;
  ASSERT_GT(sleeper, 0) << "the command never wrote the sleep's pid";
  EXPECT_FALSE(sleeper_alive) << "the pipe holder outlived the engine: " << describe_process(sleeper);
  ASSERT_TRUE(summary.is_object()) << "the last stdout line is not a JSON summary:\n" << o.out << "\nstderr:\n" << o.err;
  EXPECT_EQ(summary["cancelled"], "complete") << summary.dump();
  EXPECT_EQ(summary.value("outcome", ""), "complete") << summary.dump();
  EXPECT_TRUE(summary["receipt"].value("killed", false)) << "the TERM ignorers can only have gone by SIGKILL: "
                                                        << summary.dump();
  ASSERT_TRUE(summary["exited"].is_object()) << "no RunExited seen: " << summary.dump();
  EXPECT_EQ(summary["exited"].value("signal", 0), SIGKILL) << summary.dump();
  EXPECT_EQ(to_string(receipt("r1").outcome), "complete");
}

}  // namespace
}  // namespace nerve::itest
