// SPDX-License-Identifier: LGPL-2.1-or-later
// Real engines, end to end: GNU make, GNU parallel and Snakemake run every job through nerve-sh
// (client/nerve-sh.in), and a shell script each through `nervectl launch --wait`, each wired by the
// line docs/adopting.md gives, and are stopped mid-run.
//
// The workflow is the same for each engine: a job "quick" that ends at once, then two jobs e1 and e2
// that each become the escaper tree (setsid, double fork, TERM ignored: nerve_test_escaper --markers)
// with a named pipe held open for writing by all four of its processes. Each job first writes its
// run id (NERVE_RUN) to a file. The test waits until both trees are ready (their markers) and quick
// has run, so it cannot pass without jobs, then stops the engine:
//   SIGTERM  to the engine's pid alone (`kill PID`), which make and parallel pass on to their jobs
//            (sh just dies: its jobs end with it, cause owner_gone);
//            Snakemake's answer to that is "finish the running jobs", so it gets SIGTERM as its
//            process group (as `kill -TERM -PGID` or a service manager's stop sends it);
//   SIGINT   to the engine's process group, as Ctrl-C at a terminal sends it (make and Snakemake
//            leave a SIGINT to their jobs, which get it from the terminal too);
//   SIGKILL  to the engine's pid alone: no job is told anything.
// Then, within bounds: the engine exits; every process of every job is gone, nerve-sh's supervisors
// too; the held pipe reads EOF; no nerve unit or cgroup folder is left; and every job that ran (the
// three run ids) has a final receipt (runs folder, `nervectl list --json`), with cause exited for
// quick and, for e1 and e2, cancelled (their supervisor got the signal) or owner_gone (SIGKILL).
// Each engine runs in a session of its own (setsid), so the test can signal its process group.
#include "nerved_fixture.h"

#include "base/fd.h"
#include "base/host.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <set>

namespace nerve::itest {
namespace {

using namespace std::chrono_literals;

// Where nervectl, nerve-sh and nerve-bash are: the engines find the last two in PATH.
const std::string kClientDir = NERVE_TEST_CLIENT_DIR;

struct Case {
  std::string engine;  // sh (a shell script), make, parallel, snakemake
  int sig;
  bool to_group;      // the signal goes to the engine's process group, not its pid alone
  std::string cause;  // the receipts' cause for e1 and e2
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.engine + "_" + sigabbrev_np(info.param.sig);
}

class AnEngineStoppedMidRun : public NervedTest, public ::testing::WithParamInterface<Case> {
 protected:
  // Snakemake takes seconds to start (more on a loaded machine); make and parallel far less.
  milliseconds start_bound() const { return GetParam().engine == "snakemake" ? 60s : 20s; }

  // job.sh NAME: writes its run id to run-NAME; quick then ends, e1 and e2 become escaper trees
  // whose processes all hold the pipe `held` open.
  void write_job_script() {
    std::ofstream(path("job.sh")) << "#!/bin/sh\nset -e\n"
                                  << "printf '%s\\n' \"$NERVE_RUN\" >" << path("run-$1.tmp") << "\n"
                                  << "mv " << path("run-$1.tmp") << " " << path("run-$1") << "\n"
                                  << "[ \"$1\" = quick ] && exit 0\n"
                                  << "exec " << kEscaper << " --markers " << path("markers-$1") << " >" << path("held")
                                  << "\n";
    ASSERT_EQ(::chmod(path("job.sh").c_str(), 0755), 0);
  }

  // The engine's command line; its workflow file written here, with the documented line.
  std::vector<std::string> engine_command() {
    const std::string& e = GetParam().engine;
    std::string job = path("job.sh");
    if (e == "make") {
      std::ofstream(path("Makefile")) << ".PHONY: all quick e1 e2\nall: e1 e2\n"
                                      << "e1 e2: quick\n\t" << job << " $@\n"
                                      << "quick:\n\t" << job << " quick\n";
      return {"make", "-j3", "-f", path("Makefile"), "SHELL=nerve-sh"};
    }
    if (e == "sh") {
      std::string launch = "nervectl launch --wait --grace " + kShortGraceArg;
      std::ofstream(path("engine.sh")) << launch << " \"quick-$$\" -- " << job << " quick\n"
                                       << launch << " \"e1-$$\" -- " << job << " e1 &\n"
                                       << launch << " \"e2-$$\" -- " << job << " e2 &\n"
                                       << "wait\n";
      return {"/bin/sh", path("engine.sh")};
    }
    if (e == "parallel") return {"parallel", "-j3", job, ":::", "quick", "e1", "e2"};
    std::ofstream(path("Snakefile")) << "shell.executable(\"nerve-bash\")\n\n"
                                     << "rule all:\n    input: \"e1.done\", \"e2.done\"\n\n"
                                     << "rule quick:\n    output: \"quick.done\"\n    shell: \"" << job
                                     << " quick && touch {output}\"\n\n"
                                     << "rule escaper:\n    input: \"quick.done\"\n    output: \"{name}.done\"\n"
                                     << "    shell: \"" << job << " {wildcards.name}\"\n";
    return {"snakemake", "--cores", "3", "--snakefile", path("Snakefile"), "--directory", path("work")};
  }

  // Starts the engine in a session of its own (setsid execs it in place: same pid), with nerve-sh in
  // PATH and a short grace for every job's run.
  pid_t start_engine() {
    std::vector<std::string> argv = {"setsid"};
    for (auto& a : engine_command()) argv.push_back(a);
    SpawnSpec spec;
    spec.argv = argv;
    spec.env = {{"PATH", kClientDir + ":" + getenv_or("PATH", "/usr/bin:/bin")},
                {"NERVE_SH_OPTIONS", "--grace " + kShortGraceArg},
                {"HOME", tmp_},  // parallel and Snakemake keep caches and notes under HOME
                {"XDG_CACHE_HOME", path("cache")}};
    if (GetParam().engine == "parallel") spec.env["PARALLEL_SHELL"] = "nerve-sh";
    std::string out = path("engine.out");
    int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    spec.stdout_fd = spec.stderr_fd = fd;
    pid_t pid = spawn(spec);
    ::close(fd);
    track(pid, false);
    engine_log_ = out;
    return pid;
  }

  static std::string getenv_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v ? v : fallback;
  }

  // The processes between ENGINE and a job's main process MAIN, by role: the job's supervisor
  // (nerve-sh became nervectl, which runs nervectl-full: the engine's child) and any shell between
  // it and MAIN. A failure when the engine's child is not nervectl-full (the job is not a run).
  std::map<std::string, pid_t> job_chain(const std::string& job, pid_t main, pid_t engine) {
    std::map<std::string, pid_t> chain;
    pid_t p = main;
    for (int depth = 0; depth < 4; ++depth) {
      auto parent = proc_parent(p);
      if (!parent || *parent <= 1) break;
      if (*parent == engine) {
        auto comm = read_file("/proc/" + std::to_string(p) + "/comm").value_or("?");
        EXPECT_EQ(comm, "nervectl-full\n") << "job " << job << ": the engine's child is not nerve-sh's supervisor";
        chain[job + " supervisor"] = p;
        track(p, false);
        return chain;
      }
      chain[job + " shell " + std::to_string(depth)] = p = *parent;
      track(p, false);
    }
    ADD_FAILURE() << "job " << job << ": no chain from its process " << main << " up to the engine " << engine;
    return chain;
  }

  // Every process of both escaper trees and of their jobs (job_chain), once quick has run and both
  // trees are ready.
  std::map<std::string, pid_t> await_jobs(pid_t engine) {
    std::map<std::string, pid_t> pids;
    EXPECT_TRUE(wait_for_file(path("run-quick"), start_bound())) << "the job quick did not run";
    for (const char* job : {"e1", "e2"}) {
      if (!wait_for_file(path("markers-" + std::string(job)) + "/ready", start_bound())) {
        ADD_FAILURE() << "the escaper tree of job " << job << " did not get ready";
        continue;
      }
      for (const auto& [role, pid] : await_markers(path("markers-" + std::string(job))))
        pids[std::string(job) + " " + role] = pid;
      pids.merge(job_chain(job, pids[std::string(job) + " main"], engine));
    }
    return pids;
  }

  // The run id each job wrote, by job name.
  std::map<std::string, std::string> run_ids() {
    std::map<std::string, std::string> runs;
    for (const char* job : {"quick", "e1", "e2"}) {
      auto text = read_file(path(std::string("run-") + job));
      std::string id = text ? text->substr(0, text->find('\n')) : "";
      EXPECT_FALSE(id.empty()) << "job " << job << " wrote no run id (not run through nerve-sh?)";
      if (!id.empty()) runs[job] = id;
    }
    return runs;
  }

  // A final receipt for every job's run, in the runs folder and in `nervectl list --json`.
  void expect_receipts(const std::map<std::string, std::string>& runs) {
    for (const auto& [job, run] : runs) {
      ASSERT_TRUE(wait_for_file(runs_ + "/" + run + "/receipt.json", 5s)) << job << " (" << run << "): no receipt";
      Receipt r = receipt(run);
      EXPECT_THAT(to_string(r.outcome), ::testing::AnyOf("complete", "no_scope")) << job << ": " << r.error;
      ASSERT_TRUE(r.cause) << job;
      EXPECT_EQ(to_string(*r.cause), job == "quick" ? "exited" : GetParam().cause) << job << " (" << run << ")";
    }
    Output list = ctl({"list", "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    std::set<std::string> listed, wanted;
    for (const auto& row : nlohmann::json::parse(list.out)) {
      listed.insert(row.at("run").get<std::string>());
      EXPECT_EQ(row.at("state"), "reaped") << row.dump();
    }
    for (const auto& [job, run] : runs) wanted.insert(run);
    EXPECT_EQ(listed, wanted) << list.out;
  }

  std::string engine_log_;
};

TEST_P(AnEngineStoppedMidRun, LeavesNothingOfAnyJobAndAReceiptForEach) {
  const Case& c = GetParam();
  write_job_script();
  ASSERT_EQ(::mkfifo(path("held").c_str(), 0600), 0);
  // The test's end of the held pipe: open before any job opens it for writing (which waits for it).
  Fd held(::open(path("held").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  ASSERT_GE(held.get(), 0);
  for (const char* dir : {"work", "markers-e1", "markers-e2"}) ASSERT_EQ(::mkdir(path(dir).c_str(), 0700), 0);

  pid_t engine = start_engine();
  auto pids = await_jobs(engine);
  ASSERT_GE(pids.size(), 10u) << "the engine's log:\n" << read_file(engine_log_).value_or("");
  auto runs = run_ids();
  ASSERT_EQ(runs.size(), 3u);
  // quick has ended before the engine is stopped: its run has its receipt. make, sh and Snakemake
  // start e1 and e2 only after it; parallel starts all three at once, so quick may still be ending.
  ASSERT_TRUE(wait_for_file(runs_ + "/" + runs["quick"] + "/receipt.json", start_bound())) << "quick did not end";

  auto sent = Clock::now();
  ASSERT_EQ(::kill(c.to_group ? -engine : engine, c.sig), 0);
  auto code = wait_child(engine, 30s);
  ASSERT_TRUE(code) << c.engine << " did not exit within 30 s of " << sigabbrev_np(c.sig);
  if (c.sig == SIGKILL) {
    EXPECT_EQ(*code, 128 + SIGKILL);
  }
  expect_all_gone_by(pids, sent, Clock::now() + kShortGrace + 5s, std::string("the engine got SIG") + sigabbrev_np(c.sig));
  bool eof = false;
  read_until_eof(held.get(), 5s, &eof);
  EXPECT_TRUE(eof) << "a process still holds the pipe the jobs held open";
  expect_receipts(runs);
  expect_no_run_left(std::string("after SIG") + sigabbrev_np(c.sig) + " to " + c.engine);
  if (HasFailure()) std::cerr << "---- " << c.engine << "'s log ----\n" << read_file(engine_log_).value_or("") << "\n";
}

INSTANTIATE_TEST_SUITE_P(Engines, AnEngineStoppedMidRun,
                         ::testing::Values(Case{"sh", SIGTERM, false, "owner_gone"},  // sh dies; its jobs are not told
                                           Case{"sh", SIGINT, true, "cancelled"},
                                           Case{"sh", SIGKILL, false, "owner_gone"},
                                           Case{"make", SIGTERM, false, "cancelled"},  // make passes it on
                                           Case{"make", SIGINT, true, "cancelled"},
                                           Case{"make", SIGKILL, false, "owner_gone"},
                                           Case{"parallel", SIGTERM, false, "cancelled"},  // its --termseq
                                           Case{"parallel", SIGINT, true, "cancelled"},
                                           Case{"parallel", SIGKILL, false, "owner_gone"},
                                           Case{"snakemake", SIGTERM, true, "cancelled"},
                                           Case{"snakemake", SIGINT, true, "cancelled"},
                                           Case{"snakemake", SIGKILL, false, "owner_gone"}),
                         case_name);

}  // namespace
}  // namespace nerve::itest
