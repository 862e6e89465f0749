// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl launch --wait`: nervectl stays in the foreground as the supervisor of its run. A signal
// to the supervisor alone cancels the whole run (every process of the scope, whatever it did to
// escape) before nervectl exits 128+n; the command's own exit status passes through; and the run
// never outlives its supervisor, not even a SIGKILLed one.
#include "nerved_fixture.h"

#include "base/host.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace nerve::itest {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

constexpr milliseconds kGrace = kShortGrace;  // every launch here uses --grace kShortGraceArg

// Waits (SIGCHLD on a signalfd, bounded) until child PID of this process has stopped, and consumes
// that stop report. False (with *why) if it exited instead or did not stop in time.
bool await_stopped(pid_t pid, milliseconds timeout, std::string* why) {
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, &old);
  int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  auto deadline = Clock::now() + timeout;
  bool stopped = false;
  for (;;) {
    // The check after SIGCHLD is blocked: a stop that came before is still reported here.
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &si, WSTOPPED | WEXITED | WNOHANG | WNOWAIT) < 0) {
      *why = std::string("waitid: ") + std::strerror(errno);
      break;
    }
    if (si.si_pid == pid) {
      if (si.si_code == CLD_STOPPED || si.si_code == CLD_TRAPPED) {
        siginfo_t consumed{};
        ::waitid(P_PID, static_cast<id_t>(pid), &consumed, WSTOPPED | WNOHANG);
        stopped = true;
      } else {
        *why = "it ended instead (si_code " + std::to_string(si.si_code) + ", status " +
               std::to_string(si.si_status) + ")";
      }
      break;
    }
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      *why = "it did not stop within " + std::to_string(timeout.count()) + " ms; " + describe_process(pid);
      break;
    }
    pollfd p{sfd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(left));
    signalfd_siginfo info;
    while (::read(sfd, &info, sizeof info) == sizeof info) {
    }
  }
  ::close(sfd);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  return stopped;
}

// The children of PID (from /proc/PID/task/PID/children).
std::vector<pid_t> children_of(pid_t pid) {
  std::istringstream in(
      read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children").value_or(""));
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "TERM";
    case SIGINT: return "INT";
    case SIGHUP: return "HUP";
    case SIGQUIT: return "QUIT";
    default: return std::to_string(sig);
  }
}

class ASupervisor : public NervedTest {
 protected:

  std::string make_dir(const std::string& name) {
    std::string dir = path(name);
    EXPECT_EQ(::mkdir(dir.c_str(), 0700), 0) << dir << ": " << std::strerror(errno);
    return dir;
  }

  // Starts `nervectl launch --wait --grace 0.2 r1 -- escaper --markers DIR` and waits until the tree
  // stands: the four pids, none of which ignores INT or QUIT.
  void launch_tree(pid_t* ctl_pid, std::map<std::string, pid_t>* pids) {
    std::string markers = make_dir("markers");
    *ctl_pid = ctl_background("launch", {"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--markers", markers});
    *pids = await_markers(markers);
    ASSERT_EQ(pids->size(), 4u);
    // The tree is as the test means it: a setsid child, an orphaned grandchild, a TERM ignorer.
    ASSERT_EQ(session_of(pids->at("setsid")), pids->at("setsid"));
    ASSERT_NE(proc_parent(pids->at("grandchild")).value_or(-1), pids->at("main"));
    ASSERT_TRUE(ignores_signal(pids->at("ignoreterm"), SIGTERM));
    // The supervisor restores default signal handling before its exec: INT and QUIT can end them.
    for (const auto& [role, pid] : *pids) {
      EXPECT_FALSE(ignores_signal(pid, SIGINT)) << role << " ignores SIGINT";
      EXPECT_FALSE(ignores_signal(pid, SIGQUIT)) << role << " ignores SIGQUIT";
    }
    // nervectl supervises: it is the command's parent, not the command itself.
    ASSERT_EQ(proc_parent(pids->at("main")).value_or(-1), *ctl_pid) << describe_process(pids->at("main"));
    Record rec = record("r1");
    ASSERT_EQ(to_string(rec.state), "running");
    EXPECT_EQ(to_string(rec.owner.kind), "bus") << "the owner of a supervised run is the supervisor's bus connection";
    for (const auto& [role, pid] : *pids)
      ASSERT_EQ(proc_cgroup(pid).value_or("(gone)"), rec.leaf) << role << ": " << describe_process(pid);
  }

  std::string log_of(const std::string& name) { return read_file(path(name + ".err")).value_or("(no log)"); }
};

// 1. A signal to the supervisor alone ends the whole tree, and nervectl reports it as 128+n.
class ASupervisorSignalled : public ASupervisor, public ::testing::WithParamInterface<int> {};

TEST_P(ASupervisorSignalled, EndsTheWholeTreeBeforeItExitsWith128PlusTheSignal) {
  const int sig = GetParam();
  pid_t ctl_pid = 0;
  std::map<std::string, pid_t> pids;
  ASSERT_NO_FATAL_FAILURE(launch_tree(&ctl_pid, &pids));

  auto sent = Clock::now();
  ASSERT_EQ(::kill(ctl_pid, sig), 0);  // to the supervisor only, not to its process group
  auto code = wait_child(ctl_pid, kEventTimeout);
  // The moment nervectl has exited: nothing of its run may still be running.
  std::map<std::string, std::string> survivors;
  for (const auto& [role, pid] : pids)
    if (alive(pid)) survivors[role] = describe_process(pid);
  auto took = since(sent);

  ASSERT_TRUE(code.has_value()) << "nervectl launch --wait did not exit within " << kEventTimeout.count()
                                << " ms of SIG" << signal_name(sig) << "\n" << log_of("launch");
  EXPECT_EQ(*code, 128 + sig) << log_of("launch");
  EXPECT_THAT(survivors, IsEmpty()) << "processes of the run were still alive when nervectl exited";
  EXPECT_LT(took, kGrace + 1000ms) << "SIG" << signal_name(sig) << " to exit took " << took.count() << " ms";
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "no receipt when nervectl exited";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "cancelled") << "the supervisor passed SIG" << signal_name(sig) << " on with Cancel";
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  EXPECT_EQ(await_no_nerve_units(), "");
  if (sig == SIGTERM) {
    EXPECT_TRUE(r.killed) << "the TERM ignorer can only have gone by SIGKILL";
  }
}

INSTANTIATE_TEST_SUITE_P(EachForwardedSignal, ASupervisorSignalled, ::testing::Values(SIGTERM, SIGINT, SIGHUP, SIGQUIT),
                         [](const ::testing::TestParamInfo<int>& info) { return "SIG" + signal_name(info.param); });

// 2. A signal at each step of the supervisor, delivered deterministically while it is stopped at
// that step (NERVE_TEST_PAUSE): it must end 143, never hang, and leave nothing behind.
struct PauseCase {
  const char* step;
  bool command_starts;  // the command has exec'd by this step
};

void PrintTo(const PauseCase& c, std::ostream* os) { *os << c.step; }

class ASupervisorPaused : public ASupervisor, public ::testing::WithParamInterface<PauseCase> {
 protected:
  // Starts `nervectl launch --wait --grace 0.2 r1` paused at the case's step, running the escaper tree
  // (markers) when the command is meant to start, else `--touch touched`. Returns nervectl's pid.
  pid_t start_paused(const PauseCase& c, const std::string& touched, const std::string& markers) {
    std::vector<std::string> cmd = c.command_starts ? std::vector<std::string>{kEscaper, "--markers", markers}
                                                    : std::vector<std::string>{kEscaper, "--touch", touched};
    std::vector<std::string> argv = {"env", std::string("NERVE_TEST_PAUSE=") + c.step, kNervectl,
                                     "launch", "--wait", "--grace", kShortGraceArg, "r1", "--"};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return start_background("launch", argv);  // env execs nervectl in place: same pid
  }

  // A supervisor stopped at the case's step: nervectl, its one child (tracked: the one that contains
  // itself and execs the command), and when the command has started, the escaper's four pids.
  struct Paused {
    pid_t ctl = 0;
    pid_t child = 0;
    std::map<std::string, pid_t> pids;
    std::string touched;  // the file the command makes when it is not the escaper tree
  };
  // start_paused, then a fatal failure unless nervectl stopped at the step with its one child and,
  // when the command starts by then, the escaper stands (all four processes).
  void start_stopped_at_step(const PauseCase& c, Paused* p) {
    p->touched = path("touched");
    std::string markers = make_dir("markers");
    p->ctl = start_paused(c, p->touched, markers);
    std::string why;
    ASSERT_TRUE(await_stopped(p->ctl, kEventTimeout, &why))
        << "nervectl did not stop at " << c.step << ": " << why << "\n" << log_of("launch");
    std::vector<pid_t> kids = children_of(p->ctl);
    ASSERT_EQ(kids.size(), 1u) << "nervectl stopped at " << c.step << " with children "
                               << ::testing::PrintToString(kids);
    p->child = kids[0];
    track(p->child, true);
    if (c.command_starts) {
      p->pids = await_markers(markers);
      ASSERT_EQ(p->pids.size(), 4u);
    }
  }
};

TEST_P(ASupervisorPaused, AndSentTermExits143AndLeavesNothingOfTheRun) {
  const PauseCase c = GetParam();
  Paused p;
  ASSERT_NO_FATAL_FAILURE(start_stopped_at_step(c, &p));
  if (c.command_starts) {
    ASSERT_EQ(p.pids["main"], p.child);
  }

  ASSERT_EQ(::kill(p.ctl, SIGTERM), 0);
  ASSERT_EQ(::kill(p.ctl, SIGCONT), 0);
  auto resumed = Clock::now();
  auto code = wait_child(p.ctl, kGrace + 3000ms);
  auto took = since(resumed);
  std::map<std::string, std::string> survivors;
  if (alive(p.child)) survivors["child"] = describe_process(p.child);
  for (const auto& [role, pid] : p.pids)
    if (alive(pid)) survivors[role] = describe_process(pid);

  ASSERT_TRUE(code.has_value()) << "nervectl hung after TERM at " << c.step << ": still running "
                                << took.count() << " ms after SIGCONT; " << describe_process(p.ctl) << "\n"
                                << log_of("launch");
  EXPECT_EQ(*code, 143) << log_of("launch");
  EXPECT_THAT(survivors, IsEmpty()) << "processes of the run outlived nervectl";
  EXPECT_EQ(await_no_nerve_units(), "") << "a nerve scope is left after TERM at " << c.step;
  if (!c.command_starts) {
    EXPECT_FALSE(std::filesystem::exists(p.touched)) << "the command ran although TERM came at " << c.step;
  }
  if (std::string(c.step) == "before-scope") {
    EXPECT_THAT(list_folder(runs_), IsEmpty()) << "Contain was never asked for, yet a record exists";
  } else {
    // Contained: the run has a record, and it must be final.
    ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json"))
        << "the run has a record but no receipt after TERM at " << c.step;
    Receipt r = receipt("r1");
    EXPECT_THAT(to_string(r.outcome), AnyOf("complete", "no_scope")) << r.error;
    EXPECT_EQ(to_string(record("r1").state), "reaped");
  }
  if (std::filesystem::exists(runs_ + "/r1/lifecycle.json")) {
    EXPECT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "a record without a final receipt";
  }
}

// SIGKILL cannot be forwarded: whatever step the supervisor was at, nerved (watching the
// supervisor's bus connection) or the supervisor's child (its control pipe closes) ends the run.
TEST_P(ASupervisorPaused, AndKilledWithSigkillLeavesNothingOfTheRun) {
  const PauseCase c = GetParam();
  Paused p;
  ASSERT_NO_FATAL_FAILURE(start_stopped_at_step(c, &p));
  p.pids["child"] = p.child;

  auto killed = Clock::now();
  ASSERT_EQ(::kill(p.ctl, SIGKILL), 0);
  ASSERT_EQ(wait_child(p.ctl, kEventTimeout).value_or(-1), 128 + SIGKILL);
  expect_all_gone_by(p.pids, killed, killed + kGrace + 2000ms, std::string("the supervisor was SIGKILLed at ") + c.step);
  if (std::string(c.step) == "before-scope") {
    EXPECT_THAT(list_folder(runs_), IsEmpty());
  } else {
    ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json", kGrace + 2000ms))
        << "no receipt within grace + 2 s; record state " << to_string(record("r1").state);
    EXPECT_THAT(to_string(receipt("r1").outcome), AnyOf("complete", "no_scope")) << receipt("r1").error;
  }
  if (!c.command_starts) {
    EXPECT_FALSE(std::filesystem::exists(p.touched)) << "the command ran after its supervisor was killed";
  }
  EXPECT_EQ(await_no_nerve_units(), "");
}

INSTANTIATE_TEST_SUITE_P(AtEachStep, ASupervisorPaused,
                         ::testing::Values(PauseCase{"before-scope", false}, PauseCase{"before-exec", false},
                                           PauseCase{"before-wait", true}),
                         [](const ::testing::TestParamInfo<PauseCase>& info) {
                           std::string name = info.param.step;
                           for (auto& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// 3. The command's own status passes through, and what it leaves behind is reaped.
TEST_F(ASupervisor, ExitsWithTheCommandsExitCode) {
  Output o = ctl({"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(o.exit_code, 7) << o.out << o.err;
  EXPECT_FALSE(o.timed_out);
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "no receipt when nervectl exited";
  Receipt r = receipt("r1");
  EXPECT_THAT(to_string(r.outcome), AnyOf("complete", "no_scope")) << r.error;
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "exited") << "the command ended by itself before the supervisor's reap";
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  EXPECT_EQ(await_no_nerve_units(), "");
}

TEST_F(ASupervisor, ExitsWith128PlusTheSignalThatKilledTheCommand) {
  Output o = ctl({"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", "sh", "-c", "kill -9 $$"});
  EXPECT_EQ(o.exit_code, 137) << o.out << o.err;
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "no receipt when nervectl exited";
  Receipt r = receipt("r1");
  EXPECT_THAT(to_string(r.outcome), AnyOf("complete", "no_scope")) << r.error;
  EXPECT_EQ(to_string(record("r1").state), "reaped");
}

TEST_F(ASupervisor, ReapsWhatTheCommandLeftBehindBeforeItExits) {
  // sh starts the escaper tree in the background, waits (head on a FIFO) until the escaper says it
  // stands (all four pid files written), and exits 0, leaving the tree behind.
  std::string markers = make_dir("markers"), fifo = path("ready.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string script = "'" + kEscaper + "' --markers '" + markers + "' --ready-fd 3 3>'" + fifo +
                       "' >/dev/null 2>&1 & head -c1 '" + fifo + "' >/dev/null; exit 0";
  pid_t ctl_pid = ctl_background("launch", {"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", "sh", "-c", script});
  auto code = wait_child(ctl_pid, kEventTimeout);
  std::map<std::string, std::string> survivors;
  std::map<std::string, pid_t> pids;
  for (const char* role : {"main", "setsid", "grandchild", "ignoreterm"}) {
    pid_t p = read_pid_file(markers + "/" + role + ".pid");
    track(p, true);
    pids[role] = p;
    if (alive(p)) survivors[role] = describe_process(p);
  }
  ASSERT_TRUE(code.has_value()) << "nervectl did not exit within " << kEventTimeout.count() << " ms\n"
                                << log_of("launch");
  EXPECT_EQ(*code, 0) << log_of("launch");
  for (const auto& [role, pid] : pids) EXPECT_GT(pid, 0) << "the escaper never wrote " << role << ".pid";
  EXPECT_THAT(survivors, IsEmpty()) << "what the command left behind outlived nervectl";
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "no receipt when nervectl exited";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  EXPECT_TRUE(r.killed) << "the TERM ignorer can only have gone by SIGKILL";
  EXPECT_EQ(to_string(record("r1").state), "reaped");
  EXPECT_EQ(await_no_nerve_units(), "");
}

TEST_F(ASupervisor, OfACommandThatCannotBeFoundExits127AndClosesTheRun) {
  Output o = ctl({"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", path("no-such-command")});
  EXPECT_EQ(o.exit_code, 127) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("no-such-command"));
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "no receipt when nervectl exited";
  EXPECT_THAT(to_string(receipt("r1").outcome), AnyOf("complete", "no_scope")) << receipt("r1").error;
  EXPECT_EQ(await_no_nerve_units(), "");
}

// The brief's own form: a setsid'd sleep whose pid the command writes before it exits.
TEST_F(ASupervisor, ReapsASetsidSleepTheCommandLeftBehind) {
  std::string pid_file = path("sleep.pid");
  Output o = ctl({"launch", "--wait", "--grace", kShortGraceArg, "r1", "--", "sh", "-c",
                  "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > '" + pid_file + "'; exit 0"});
  pid_t sleeper = read_pid_file(pid_file);
  bool sleeper_alive = alive(sleeper);
  track(sleeper, true);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  ASSERT_GT(sleeper, 0) << "the command did not write the sleep's pid";
  EXPECT_FALSE(sleeper_alive) << "the setsid sleep outlived nervectl: " << describe_process(sleeper);
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json"));
  EXPECT_EQ(to_string(receipt("r1").outcome), "complete") << receipt("r1").error;
}

// 4. SIGKILL cannot be caught: nerved sees the supervisor's bus connection close and reaps the run.
TEST_F(ASupervisor, KilledWithSigkillStillGetsItsRunReaped) {
  pid_t ctl_pid = 0;
  std::map<std::string, pid_t> pids;
  ASSERT_NO_FATAL_FAILURE(launch_tree(&ctl_pid, &pids));

  auto sent = Clock::now();
  ASSERT_EQ(::kill(ctl_pid, SIGKILL), 0);
  ASSERT_EQ(wait_child(ctl_pid, kEventTimeout).value_or(-1), 128 + SIGKILL);
  expect_all_gone_by(pids, sent, sent + kGrace + 2000ms, "the supervisor was SIGKILLed");
  auto took = since(sent);
  EXPECT_LT(took, kGrace + 2000ms);
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json", kGrace + 2000ms))
      << "no receipt within grace + 2 s of the supervisor's SIGKILL";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  EXPECT_TRUE(r.killed);
  EXPECT_EQ(await_no_nerve_units(), "");
}

}  // namespace
}  // namespace nerve::itest
