// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl launch --wait` ends with the process that started it: a real engine (GNU make, a Python
// program) runs one supervised step per job and is killed with SIGKILL, its pid alone, as a crash or
// an OOM kill does. Every step's processes go, each run with a receipt of cause owner_gone; with
// --keep a step lives on until its command ends.
#include "nerved_fixture.h"

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;

class ASupervisedRunsEngine : public NervedTest {
 protected:
  // The nervectl launch --wait command line of step N (run rN, the escaper tree in markers-N).
  std::vector<std::string> step(int n, bool keep = false) {
    std::string markers = path("markers-" + std::to_string(n));
    EXPECT_EQ(::mkdir(markers.c_str(), 0700), 0);
    std::vector<std::string> argv = {kNervectl, "launch", "--wait", "--grace", kShortGraceArg};
    if (keep) argv.push_back("--keep");
    argv.insert(argv.end(), {"r" + std::to_string(n), "--", kEscaper, "--markers", markers});
    return argv;
  }

  // The markers of steps 1 and 2, once both run.
  std::map<std::string, pid_t> await_steps() {
    std::map<std::string, pid_t> all;
    for (int n : {1, 2})
      for (const auto& [role, pid] : await_markers(path("markers-" + std::to_string(n))))
        all["r" + std::to_string(n) + " " + role] = pid;
    EXPECT_EQ(all.size(), 8u);
    return all;
  }

  // SIGKILL to ENGINE's pid alone; then every step's processes must go and each run get its receipt
  // with cause owner_gone.
  void kill_engine_and_expect_runs_ended(pid_t engine, const std::map<std::string, pid_t>& pids) {
    auto sent = Clock::now();
    ASSERT_EQ(::kill(engine, SIGKILL), 0);
    ASSERT_EQ(wait_child(engine, kEventTimeout).value_or(-1), 128 + SIGKILL);
    expect_all_gone_by(pids, sent, sent + kShortGrace + 5s, "the engine was SIGKILLed");
    for (const char* run : {"r1", "r2"}) {
      ASSERT_TRUE(wait_for_file(runs_ + "/" + run + "/receipt.json", 5s)) << run << ": no receipt";
      Receipt r = receipt(run);
      EXPECT_EQ(to_string(r.outcome), "complete") << run << ": " << r.error;
      ASSERT_TRUE(r.cause) << run;
      EXPECT_EQ(to_string(*r.cause), "owner_gone") << run;
    }
    EXPECT_EQ(await_no_nerve_units(), "");
  }

  // ARGV as words of a make recipe or sh -c: plain words (the test's paths have no spaces), so
  // that make runs the step itself, without a shell between it and nervectl.
  static std::string shell_words(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
    return out;
  }
  // ARGV as a Python list of strings.
  static std::string py_list(const std::vector<std::string>& argv) {
    std::string out = "[";
    for (const auto& a : argv) out += "'" + a + "', ";
    return out + "]";
  }
};

TEST_F(ASupervisedRunsEngine, GnuMakeKilledWithSigkillTakesEveryStepWithIt) {
  std::string makefile = path("Makefile");
  std::ofstream(makefile) << "all: step1 step2\n"
                          << "step1:\n\t" << shell_words(step(1)) << "\n"
                          << "step2:\n\t" << shell_words(step(2)) << "\n";
  pid_t make = start_background("make", {"make", "-j2", "-f", makefile});
  auto pids = await_steps();
  ASSERT_EQ(pids.size(), 8u);
  kill_engine_and_expect_runs_ended(make, pids);
}

TEST_F(ASupervisedRunsEngine, APythonEngineKilledWithSigkillTakesEveryStepWithIt) {
  std::string engine = path("engine.py");
  std::ofstream(engine) << "import subprocess\n"
                        << "steps = [subprocess.Popen(s) for s in [" << py_list(step(1)) << ", " << py_list(step(2)) << "]]\n"
                        << "for s in steps: s.wait()\n";
  pid_t python = start_background("engine", {"/usr/bin/python3", engine});
  auto pids = await_steps();
  ASSERT_EQ(pids.size(), 8u);
  kill_engine_and_expect_runs_ended(python, pids);
}

// --keep: the old behaviour, the step lives on after its engine and ends when its command does.
TEST_F(ASupervisedRunsEngine, AKeptStepOutlivesItsEngine) {
  std::string markers = path("markers-1");
  std::string sh = shell_words(step(1, true));
  pid_t shell = start_background("engine", {"/bin/sh", "-c", sh + "; exit 0"});  // sh waits for its step
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_EQ(::kill(shell, SIGKILL), 0);
  ASSERT_EQ(wait_child(shell, kEventTimeout).value_or(-1), 128 + SIGKILL);
  // The supervisor of a kept step does not watch its engine: nothing ends it.
  EXPECT_FALSE(wait_gone(pids.at("main"), 2s)) << "the kept step ended with its engine";
  EXPECT_FALSE(std::ifstream(runs_ + "/r1/receipt.json").good());
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.err;
}

}  // namespace
}  // namespace nerve::itest
