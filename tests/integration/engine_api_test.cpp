// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine API over the bus, as an engine uses it: Launch with the engine's own pipe, RunExited and
// PropertiesChanged watched (subscribed before the Launch), output that always reaches EOF, runs that
// never outlive the engine's bus connection, and bad input refused before anything is recorded.
//
// The test is its own engine (AnEngine, engine_fixture.h).
#include "engine_fixture.h"
#include "backend_view.h"

#include "base/host.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nerve::itest {
namespace {

using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

const char* const kErrorPrefix = "org.nerve.Lifecycle1.Error.";
constexpr milliseconds kGrace = kShortGrace;

// A separate engine process with its own bus connection (the tests of an engine that dies). 'act'
// makes its calls and returns the line it reports; then the process serves its connection (so what
// it sent is flushed) until the test kills it. The test gets the pid and the report ("error ..." if
// 'act' threw), or a failed assertion. The pid is the caller's to kill and wait for.
pid_t fork_engine(const std::function<std::string(sdbus::IConnection&, sdbus::IProxy&)>& act, std::string* report) {
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0) return -1;
  std::cout.flush();
  std::cerr.flush();
  pid_t engine = ::fork();
  if (engine == 0) {
    ::close(pipe[0]);
    std::string said;
    try {
      auto bus = sdbus::createSessionBusConnection();
      auto proxy = sdbus::createProxy(*bus, kService, kManagerPath);
      said = act(*bus, *proxy) + "\n";
      (void)!::write(pipe[1], said.data(), said.size());
      for (;;) {
        while (bus->processPendingRequest()) {
        }
        auto pd = bus->getEventLoopPollData();
        pollfd p{pd.fd, pd.events, 0};
        ::poll(&p, 1, 100);
      }
    } catch (const std::exception& e) {
      said = std::string("error ") + e.what() + "\n";
      (void)!::write(pipe[1], said.data(), said.size());
      ::_exit(1);
    }
  }
  ::close(pipe[1]);
  if (engine > 0) read_until(pipe[0], "\n", kEventTimeout, report);
  ::close(pipe[0]);
  return engine;
}

// Three fds of /dev/null, as a Launch's stdio.
std::vector<sdbus::UnixFd> null_stdio() {
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  std::vector<sdbus::UnixFd> stdio{sdbus::UnixFd(devnull), sdbus::UnixFd(devnull), sdbus::UnixFd(devnull)};
  ::close(devnull);
  return stdio;
}

// The manager is the ObjectManager of the run objects : InterfacesAdded when a run
// appears, GetManagedObjects lists it, InterfacesRemoved when it is forgotten; the path is escaped as
// sd_bus_path_encode escapes (a leading digit, '.', ':', '-').
TEST_F(AnEngine, DiscoversRunsThroughTheObjectManagerWithSystemdEscapedPaths) {
  ASSERT_NO_FATAL_FAILURE(connect());
  using Managed = std::map<sdbus::ObjectPath, std::map<std::string, std::map<std::string, sdbus::Variant>>>;
  std::vector<std::string> added, removed;
  auto om = sdbus::createProxy(*bus_, kService, kManagerPath);
  om->uponSignal("InterfacesAdded")
      .onInterface("org.freedesktop.DBus.ObjectManager")
      .call([&](const sdbus::ObjectPath& p, const std::map<std::string, std::map<std::string, sdbus::Variant>>& i) {
        if (i.count(kRunIface)) added.push_back(p);
      });
  om->uponSignal("InterfacesRemoved")
      .onInterface("org.freedesktop.DBus.ObjectManager")
      .call([&](const sdbus::ObjectPath& p, const std::vector<std::string>& i) {
        if (std::find(i.begin(), i.end(), kRunIface) != i.end()) removed.push_back(p);
      });
  om->finishRegistration();
  auto managed = [&] {
    Managed m;
    om->callMethod("GetManagedObjects").onInterface("org.freedesktop.DBus.ObjectManager").storeResultsTo(m);
    return m;
  };
  EXPECT_TRUE(managed().empty());

  const std::string run = "7b.x:y-z";
  const std::string expected = "/org/nerve/Lifecycle1/run/_37b_2ex_3ay_2dz";
  ASSERT_EQ(run_path(run), expected);
  int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(devnull, 0);
  auto [object, pid] = launch(run, {"/bin/sleep", "30"}, devnull);
  ::close(devnull);
  track(pid, false);
  EXPECT_EQ(object, expected);
  ASSERT_TRUE(pump_until([&] { return !added.empty(); })) << "no InterfacesAdded for the launched run";
  EXPECT_EQ(added, std::vector<std::string>{expected});
  Managed m = managed();
  ASSERT_EQ(m.count(sdbus::ObjectPath(expected)), 1u);
  EXPECT_EQ(m[sdbus::ObjectPath(expected)][kRunIface]["Id"].get<std::string>(), run);
  EXPECT_EQ(m[sdbus::ObjectPath(expected)][kRunIface]["State"].get<std::string>(), "running");

  auto [outcome, receipt_text] = reap(run, kGraceUsec);
  EXPECT_EQ(outcome, "complete");
  EXPECT_TRUE(removed.empty()) << "a reaped run keeps its object until it is forgotten";
  manager_->callMethod("Forget").onInterface(kManager).withArguments(run);
  ASSERT_TRUE(pump_until([&] { return !removed.empty(); })) << "no InterfacesRemoved for the forgotten run";
  EXPECT_EQ(removed, std::vector<std::string>{expected});
  EXPECT_TRUE(managed().empty());
}

TEST_F(AnEngine, ReadsNervesVersionFromTheManager) {
  ASSERT_NO_FATAL_FAILURE(connect());
  auto version = manager_->getProperty("Version").onInterface(kManager).get<std::string>();
  Output v = run(command({kNerved, "--version"}));
  EXPECT_EQ("nerved " + version + "\n", v.out);
  EXPECT_FALSE(version.empty());
}

// 5. The whole life of a launched run, seen by an engine.
TEST_F(AnEngine, GetsTheOutputTheExitAndTheReapOfALaunchedRun) {
  ASSERT_NO_FATAL_FAILURE(connect());
  watch_run("r1");  // before Launch: nothing can be missed
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::pair<std::string, pid_t> launched;
  try {
    launched = launch("r1", {"sh", "-c", "echo hello; exit 3"}, p[1]);
  } catch (const sdbus::Error& e) {
    ::close(p[0]);
    ::close(p[1]);
    FAIL() << "Launch failed: " << e.getName() << ": " << e.getMessage();
  }
  ::close(p[1]);
  EXPECT_EQ(launched.first, run_path("r1"));
  EXPECT_GT(launched.second, 0);

  bool eof = false;
  std::string out = read_until_eof(p[0], kEventTimeout, &eof);
  ::close(p[0]);
  EXPECT_EQ(out, "hello\n");
  EXPECT_TRUE(eof) << "the run's output never reached EOF";

  ASSERT_TRUE(pump_until([&] { return exited_of("r1").has_value(); }))
      << "no RunExited for r1 within " << kEventTimeout.count() << " ms";
  EXPECT_EQ(exited_of("r1")->exit_code, 3);
  EXPECT_EQ(exited_of("r1")->signal, 0);
  EXPECT_EQ(exited_of("r1")->cause, "exited");
  EXPECT_TRUE(pump_until([&] { return saw_state("r1", "reaped"); }))
      << "no PropertiesChanged with State reaped; states seen: " << ::testing::PrintToString(states_["r1"]);
  EXPECT_EQ(states_["r1"].back(), "reaped") << ::testing::PrintToString(states_["r1"]);
  EXPECT_THAT(states_["r1"], Contains("running"));

  // The run object agrees, and so does the receipt on disk.
  EXPECT_EQ(run_property<std::string>("r1", "State"), "reaped");
  EXPECT_EQ(run_property<std::uint32_t>("r1", "MainPID"), static_cast<std::uint32_t>(launched.second));
  EXPECT_EQ(run_property<std::int32_t>("r1", "ExitStatus"), 3);
  EXPECT_EQ(run_property<std::string>("r1", "Id"), "r1");
  ASSERT_TRUE(std::filesystem::exists(runs_ + "/r1/receipt.json"));
  Receipt r = receipt("r1");
  EXPECT_THAT(to_string(r.outcome), AnyOf("complete", "no_scope")) << r.error;
  ASSERT_TRUE(r.cause.has_value()) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "exited");
  EXPECT_EQ(run_property<std::string>("r1", "Cause"), "exited");
  Record rec = record("r1");
  EXPECT_EQ(to_string(rec.state), "reaped");
  EXPECT_EQ(rec.leader_pid, launched.second);
  EXPECT_EQ(to_string(rec.owner.kind), "bus");
  EXPECT_EQ(rec.owner.name, bus_->getUniqueName()) << "the engine's connection owns the run";
}

// The command of a Launch sees its run in its environment (given to the held
// child after containment), and the run controls of the options reach the scope.
TEST_F(AnEngine, GivesTheCommandItsRunInItsEnvironmentAndItsPropertiesToTheScope) {
  NERVE_NEEDS_CONTROLLERS_FOR({"TasksMax=40"});
  ASSERT_NO_FATAL_FAILURE(connect());
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  Options options = launch_options();
  options["properties"] = sdbus::Variant(std::vector<sdbus::Struct<std::string, std::string>>{{"TasksMax", "40"}});
  options["timeout_usec"] = sdbus::Variant(std::uint64_t{600'000'000});
  options["reap_on_exit"] = sdbus::Variant(false);
  try {
    launch("r1", {"sh", "-c", "env; exec sleep 30"}, p[1], options);
  } catch (const sdbus::Error& e) {
    ::close(p[0]);
    ::close(p[1]);
    FAIL() << "Launch failed: " << e.getName() << ": " << e.getMessage();
  }
  ::close(p[1]);
  std::string out;
  read_until(p[0], "INVOCATION_ID=", kEventTimeout, &out);
  read_until(p[0], "\n", 2000ms, &out);
  ::close(p[0]);
  Record rec = record("r1");
  EXPECT_THAT(out, HasSubstr("NERVE_RUN=r1\n"));
  EXPECT_THAT(out, HasSubstr("NERVE_RUN_ATTEMPT=1\n"));
  EXPECT_THAT(out, HasSubstr("INVOCATION_ID=" + rec.invocation_id + "\n"));
  EXPECT_EQ(unit_property(rec.unit, "TasksMax"), "40");
  EXPECT_EQ(unit_property(rec.unit, "RuntimeMaxUSec"), "infinity") << "the timeout is nerve's deadline, not systemd's";
  EXPECT_EQ(rec.timeout_usec, 600'000'000u);
  EXPECT_EQ(rec.properties, std::vector<std::string>{"TasksMax=40"});
  track_run_processes("r1");
  auto [outcome, text] = reap("r1", kShortGraceUsec);
  EXPECT_EQ(outcome, "complete") << text;
}

// RunExited for a command killed by a signal: exit_code -1 and the signal; ExitStatus 128 + n.
TEST_F(AnEngine, IsToldWhichSignalKilledTheCommand) {
  ASSERT_NO_FATAL_FAILURE(connect());
  watch_run("r1");
  auto [object, pid] = launch("r1", {"sh", "-c", "kill -9 $$"}, STDERR_FILENO);
  ASSERT_TRUE(pump_until([&] { return exited_of("r1").has_value() && saw_state("r1", "reaped"); }))
      << "states seen: " << ::testing::PrintToString(states_["r1"]);
  EXPECT_EQ(exited_of("r1")->exit_code, -1);
  EXPECT_EQ(exited_of("r1")->signal, SIGKILL);
  EXPECT_EQ(run_property<std::int32_t>("r1", "ExitStatus"), 128 + SIGKILL);
}

// 6. A background process that holds the engine's pipe must not keep the reader waiting once the
// run is ended, by Reap or by Cancel.
class AnEnginesPipe : public AnEngine, public ::testing::WithParamInterface<std::string> {};

TEST_P(AnEnginesPipe, ReachesEofWithinASecondOfTheRunsEnd) {
  ASSERT_NO_FATAL_FAILURE(connect());
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::string bg = path("bg.pid");
  // The background process (it holds the pipe as its stdout) writes its own pid file; sh reports.
  std::string script = "'" + kEscaper + "' --pidfile '" + bg + "' & echo started; wait";
  auto launched_at = Clock::now();
  std::pair<std::string, pid_t> launched;
  try {
    launched = launch("r1", {"sh", "-c", script}, p[1]);
  } catch (const sdbus::Error& e) {
    ::close(p[0]);
    ::close(p[1]);
    FAIL() << "Launch failed: " << e.getName() << ": " << e.getMessage();
  }
  ::close(p[1]);
  track(launched.second, false);
  std::string got;
  bool started = read_until(p[0], "started\n", kEventTimeout, &got);
  pid_t holder = await_pidfile(bg);
  if (!started || holder <= 0) ::close(p[0]);
  ASSERT_TRUE(started) << "no 'started' from the run; read: '" << got << "'";
  ASSERT_GT(holder, 0);
  ASSERT_EQ(proc_cgroup(holder).value_or("(gone)"), record("r1").leaf);
  track_run_processes("r1");

  // The end comes 200 ms after the launch (the scenario, not a synchronisation).
  auto at = launched_at + 200ms;
  if (Clock::now() < at) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(at - Clock::now()).count();
    struct timespec ts {0, static_cast<long>(ns)};
    ::nanosleep(&ts, nullptr);
  }
  std::string outcome;
  try {
    outcome = std::get<0>(GetParam() == "Reap" ? reap("r1") : cancel("r1", SIGTERM));
  } catch (const sdbus::Error& e) {
    ::close(p[0]);
    FAIL() << GetParam() << " failed: " << e.getName() << ": " << e.getMessage();
  }
  auto replied = Clock::now();
  bool eof = false;
  std::string rest = read_until_eof(p[0], 1000ms, &eof);
  auto waited = since(replied);
  ::close(p[0]);
  EXPECT_EQ(outcome, "complete");
  Receipt r = receipt("r1");
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), GetParam() == "Reap" ? "reaped" : "cancelled");
  EXPECT_TRUE(eof) << "the pipe was still open 1 s after " << GetParam() << " replied (read: '" << rest << "')";
  EXPECT_LT(waited, 1000ms);
  EXPECT_LT(since(launched_at), 5000ms) << "the command's sleep would have ended by itself after 20 s";
  EXPECT_FALSE(alive(holder)) << describe_process(holder);
  EXPECT_FALSE(alive(launched.second)) << describe_process(launched.second);
}

INSTANTIATE_TEST_SUITE_P(EndedBy, AnEnginesPipe, ::testing::Values("Reap", "Cancel"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// 7. The run's owner is the engine's connection: an engine that dies takes its runs with it.
TEST_F(AnEngine, ThatIsKilledGetsItsRunReaped) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  std::string said;
  pid_t engine = fork_engine(
      [&](sdbus::IConnection& bus, sdbus::IProxy& proxy) {
        sdbus::ObjectPath object;
        std::uint32_t pid = 0;
        proxy.callMethod("Launch")
            .onInterface(kManager)
            .withArguments(std::string("r1"), std::vector<std::string>{kEscaper, "--markers", markers}, plain_env(),
                           tmp_, null_stdio(), launch_options())
            .storeResultsTo(object, pid);
        return "ok " + bus.getUniqueName() + " " + std::to_string(pid);
      },
      &said);
  ASSERT_GT(engine, 0);
  track(engine, false);
  ASSERT_TRUE(said.rfind("ok ", 0) == 0) << "the engine process did not launch: '" << said << "'";
  std::istringstream words(said.substr(3));
  std::string engine_name;
  pid_t command_pid = 0;
  words >> engine_name >> command_pid;

  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  EXPECT_EQ(pids["main"], command_pid);
  ASSERT_TRUE(ignores_signal(pids["ignoreterm"], SIGTERM));
  Record rec = record("r1");
  ASSERT_EQ(to_string(rec.state), "running");
  EXPECT_EQ(to_string(rec.owner.kind), "bus");
  EXPECT_EQ(rec.owner.name, engine_name);
  EXPECT_FALSE(rec.keep);

  auto killed = Clock::now();
  ASSERT_EQ(::kill(engine, SIGKILL), 0);
  ASSERT_EQ(wait_child(engine, kEventTimeout).value_or(-1), 128 + SIGKILL);
  expect_all_gone_by(pids, killed, killed + kGrace + 2000ms, "its engine was SIGKILLed");
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json", kGrace + 2000ms))
      << "no receipt within grace + 2 s of the engine's death";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  EXPECT_TRUE(r.killed) << "the TERM ignorer can only have gone by SIGKILL";
  EXPECT_EQ(await_no_nerve_units(), "");
}

// The same while the Launch is still in flight: the engine dies the moment nerved has written the
// run's intent record, before (or, depending on the race, just after) the reply. Whichever way the
// race goes, the run must end: nothing may rely on the engine being there to read the reply.
TEST_F(AnEngine, KilledWhileItsLaunchIsInFlightStillGetsItsRunReaped) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  std::string said;
  pid_t engine = fork_engine(
      [&](sdbus::IConnection& bus, sdbus::IProxy& proxy) {
        proxy.callMethodAsync("Launch")
            .onInterface(kManager)
            .withArguments(std::string("r1"), std::vector<std::string>{kEscaper, "--markers", markers}, plain_env(),
                           tmp_, null_stdio(), launch_options())
            .uponReplyInvoke([](const sdbus::Error*, sdbus::ObjectPath, std::uint32_t) {});
        return "sent " + bus.getUniqueName();
      },
      &said);
  ASSERT_GT(engine, 0);
  track(engine, false);
  ASSERT_TRUE(said.rfind("sent ", 0) == 0) << "the engine process did not send Launch: '" << said << "'";
  // (wait_for_file watches the parent folder, so the run's folder first.)
  bool recorded = wait_for_file(runs_ + "/r1") && wait_for_file(runs_ + "/r1/lifecycle.json");
  auto killed = Clock::now();
  ASSERT_EQ(::kill(engine, SIGKILL), 0);
  ASSERT_EQ(wait_child(engine, kEventTimeout).value_or(-1), 128 + SIGKILL);
  ASSERT_TRUE(recorded) << "nerved never wrote the run's intent record";

  // The receipt comes (the grace is short; the TERM ignorer, if it started, needs the SIGKILL).
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json", kGrace + 4000ms))
      << "no receipt within " << (kGrace + 4000ms).count() << " ms of the engine's death; record state "
      << to_string(record("r1").state);
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - killed);
  Receipt r = receipt("r1");
  EXPECT_THAT(to_string(r.outcome), AnyOf("complete", "no_scope")) << r.error;
  for (const char* role : {"main", "setsid", "grandchild", "ignoreterm"}) {
    pid_t p = read_pid_file(markers + "/" + role + ".pid");
    track(p, true);
    if (p > 0) {
      EXPECT_FALSE(alive(p)) << role << " outlived the run's receipt: " << describe_process(p);
    }
  }
  EXPECT_EQ(await_no_nerve_units(), "");
  std::cerr << "note: the receipt came " << took.count() << " ms after the engine's death; the command "
            << (std::filesystem::exists(markers + "/main.pid") ? "had started" : "never started") << "\n";
}

// 8. Bad input over the bus: refused with a precise error, before anything is recorded or started.
struct BadLaunch {
  std::string name;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;  // "" = the test's temp folder; "-" = really empty
  int fds;
  // Made when the test runs: an sdbus::Variant must not live in static storage (it would outlive
  // sdbus-c++'s own statics at exit).
  std::function<Options()> options;
  std::string error;         // the error name, without the prefix
  std::string must_mention;  // a piece of the message: the value at fault
};

void PrintTo(const BadLaunch& b, std::ostream* os) { *os << b.name; }

class AnEngineLaunchingBadly : public AnEngine, public ::testing::WithParamInterface<BadLaunch> {};

TEST_P(AnEngineLaunchingBadly, IsRefusedWithAnErrorNamingTheValueAndNothingRunsOrIsRecorded) {
  const BadLaunch& b = GetParam();
  std::string cwd = b.cwd == "-" ? "" : b.cwd.empty() ? tmp_ : b.cwd;
  if (cwd.find("@TMP@") != std::string::npos) cwd.replace(cwd.find("@TMP@"), 5, tmp_);
  std::vector<std::string> argv = b.argv;
  for (auto& a : argv)
    if (a.find("@TMP@") != std::string::npos) a.replace(a.find("@TMP@"), 5, tmp_);
  std::string not_exec = tmp_ + "/not-executable";
  { std::ofstream(not_exec) << "#!/bin/sh\necho ran > '" << tmp_ << "/ran'\n"; }
  ::chmod(not_exec.c_str(), 0644);

  BusReply reply = call_nerved([&](sdbus::IProxy& proxy) {
    int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    std::vector<sdbus::UnixFd> stdio;
    for (int i = 0; i < b.fds; ++i) stdio.emplace_back(devnull);
    ::close(devnull);
    proxy.callMethod("Launch").onInterface(kManager).withArguments(std::string("r1"), argv, b.env, cwd, stdio,
                                                                   b.options());
  });
  ASSERT_EQ(reply.failure, "");
  EXPECT_EQ(reply.error_name, kErrorPrefix + b.error) << reply.error_message;
  EXPECT_THAT(reply.error_message, HasSubstr(b.must_mention));
  EXPECT_FALSE(std::filesystem::exists(tmp_ + "/ran")) << "the command ran";
  EXPECT_EQ(await_no_nerve_units(), "") << "a scope is left after a refused Launch";
  if (b.error == "InvalidArgument" || b.name == "MissingCommandInPath" || b.name == "UnparsableProperty" ||
      b.name == "UnknownPropertyKey") {
    // Refused before the run was touched.
    EXPECT_THAT(list_folder(runs_), IsEmpty()) << "a refused Launch created a run record";
  } else if (std::filesystem::exists(runs_ + "/r1/lifecycle.json")) {
    // The command was held in a scope, then could not start: nothing of it may be left running, and
    // the record may not stay "running" (a reap_on_exit may still be finishing: bounded wait).
    auto deadline = Clock::now() + kGrace + 2000ms;
    while (to_string(record("r1").state) == "running" && Clock::now() < deadline) {
      struct timespec ts {0, 20'000'000};
      ::nanosleep(&ts, nullptr);
    }
    Record rec = record("r1");
    std::cerr << "note: after " << b.name << " the run's record says " << to_string(rec.state)
              << (std::filesystem::exists(runs_ + "/r1/receipt.json")
                      ? ", receipt outcome " + to_string(receipt("r1").outcome)
                      : ", no receipt")
              << "\n";
    EXPECT_NE(to_string(rec.state), "running") << "the run of a failed Launch is left 'running'";
    // The held child that never exec'd ends by itself once nerved lets go of it (exit 125), which
    // may be a moment after the refusal: gone within the event bound (seen still ending under load).
    if (rec.leader_pid > 0) {
      EXPECT_TRUE(wait_gone(rec.leader_pid, kEventTimeout)) << describe_process(rec.leader_pid);
    }
  }
}

using Pairs = std::vector<sdbus::Struct<std::string, std::string>>;

template <typename T>
std::function<Options()> with(const std::string& key, T value) {
  return [key, value] {
    Options o = launch_options();
    o[key] = sdbus::Variant(value);
    return o;
  };
}

INSTANTIATE_TEST_SUITE_P(
    Input, AnEngineLaunchingBadly,
    ::testing::Values(
        BadLaunch{"EmptyArgv", {}, plain_env(), "", 3, launch_options, "InvalidArgument", "argv"},
        BadLaunch{"EmptyArgv0", {""}, plain_env(), "", 3, launch_options, "InvalidArgument", "argv"},
        BadLaunch{"RelativeCwd", {"true"}, plain_env(), "some/relative/dir", 3, launch_options, "InvalidArgument",
                  "'some/relative/dir'"},
        BadLaunch{"EmptyCwd", {"true"}, plain_env(), "-", 3, launch_options, "InvalidArgument", "cwd"},
        BadLaunch{"TwoFds", {"true"}, plain_env(), "", 2, launch_options, "InvalidArgument", "not 2"},
        BadLaunch{"FourFds", {"true"}, plain_env(), "", 4, launch_options, "InvalidArgument", "not 4"},
        BadLaunch{"EnvEntryWithoutEquals", {"true"}, {"PATH=/usr/bin:/bin", "NOEQUALSSIGN"}, "", 3, launch_options,
                  "InvalidArgument", "'NOEQUALSSIGN'"},
        BadLaunch{"EnvEntryWithoutKey", {"true"}, {"=value"}, "", 3, launch_options, "InvalidArgument", "'=value'"},
        BadLaunch{"UnknownOption", {"true"}, plain_env(), "", 3, with("bogus_option", true),
                  "InvalidArgument", "'bogus_option'"},
        BadLaunch{"OptionOfTheWrongType", {"true"}, plain_env(), "", 3,
                  with("grace_usec", std::string("1s")), "InvalidArgument", "'grace_usec'"},
        BadLaunch{"GraceOverAnHour", {"true"}, plain_env(), "", 3,
                  with("grace_usec", std::uint64_t{3'600'000'001}), "InvalidArgument", "3600000001"},
        BadLaunch{"MissingCommandInPath", {"no-such-command-xyz"}, plain_env(), "", 3, launch_options, "ExecFailed",
                  "no-such-command-xyz"},
        BadLaunch{"MissingCommandByPath", {"/nonexistent/no-such-command"}, plain_env(), "", 3, launch_options,
                  "ExecFailed", "no-such-command"},
        BadLaunch{"NotExecutable", {"@TMP@/not-executable"}, plain_env(), "", 3, launch_options, "ExecFailed",
                  "not-executable"},
        BadLaunch{"MissingCwd", {"true"}, plain_env(), "@TMP@/no-such-folder", 3, launch_options, "InvalidArgument",
                  "no-such-folder"},
        // Bad run properties: one that does not parse, a key nerve does not know, and one systemd
        // refuses at StartTransientUnit (TasksMax=0 is out of its range): InvalidProperty, nothing runs.
        BadLaunch{"UnparsableProperty", {"sh", "-c", "touch @TMP@/ran"}, plain_env(), "", 3,
                  with("properties", Pairs{{"MemoryMax", "lots"}}), "InvalidProperty", "'lots'"},
        BadLaunch{"UnknownPropertyKey", {"sh", "-c", "touch @TMP@/ran"}, plain_env(), "", 3,
                  with("properties", Pairs{{"NoSuchKey", "1"}}), "InvalidProperty", "'NoSuchKey'"},
        BadLaunch{"PropertySystemdRefuses", {"sh", "-c", "touch @TMP@/ran"}, plain_env(), "", 3,
                  with("properties", Pairs{{"TasksMax", "0"}}), "InvalidProperty", "'TasksMax=0'"}),
    [](const ::testing::TestParamInfo<BadLaunch>& info) { return info.param.name; });

// After a Launch that failed with ExecFailed the command never ran; the docs call such an attempt
// "failed before its command ran; the run id may be launched again". So a second Launch of the same
// run id with a command that exists must start it.
class AnEngineRetryingAFailedExec : public AnEngine, public ::testing::WithParamInterface<std::string> {};

TEST_P(AnEngineRetryingAFailedExec, CanLaunchTheSameRunIdAgain) {
  ASSERT_NO_FATAL_FAILURE(connect());
  std::string not_exec = tmp_ + "/not-executable";
  { std::ofstream(not_exec) << "#!/bin/sh\nexit 0\n"; }
  ::chmod(not_exec.c_str(), 0644);
  std::vector<std::string> argv = GetParam() == "MissingCommandInPath"   ? std::vector<std::string>{"no-such-command-xyz"}
                                  : GetParam() == "MissingCommandByPath" ? std::vector<std::string>{tmp_ + "/no-such-command"}
                                                                         : std::vector<std::string>{not_exec};
  try {
    launch("r1", argv, STDERR_FILENO);
    FAIL() << "a Launch of a command that cannot be executed succeeded";
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), std::string(kErrorPrefix) + "ExecFailed") << e.getMessage();
  }
  // Whatever nerved does after the failed exec (reap_on_exit) is over before the second Launch.
  EXPECT_EQ(await_no_nerve_units(), "");
  std::string first_state = std::filesystem::exists(runs_ + "/r1/lifecycle.json") ? to_string(record("r1").state)
                                                                                 : "(no record)";
  try {
    auto [object, pid] = launch("r1", {kEscaper, "--pidfile", path("second.pid")}, STDERR_FILENO);
    EXPECT_EQ(await_pidfile(path("second.pid")), pid);
    EXPECT_EQ(std::get<0>(reap("r1")), "complete");
  } catch (const sdbus::Error& e) {
    ADD_FAILURE() << "the second Launch of r1 failed: " << e.getName() << ": " << e.getMessage()
                  << "\n(after the failed exec the run's record said '" << first_state << "')";
  }
}

INSTANTIATE_TEST_SUITE_P(AfterExecFailed, AnEngineRetryingAFailedExec,
                         ::testing::Values("MissingCommandInPath", "MissingCommandByPath", "NotExecutable"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace nerve::itest

namespace nerve::itest {
namespace {

// A run with timeout_usec is ended by nerved itself at created_at + timeout, the
// whole escaper tree, and its receipt says complete with cause timeout.
TEST_F(AnEngine, RunWithATimeoutIsEndedWholeByItselfWithCauseTimeout) {
  ASSERT_NO_FATAL_FAILURE(connect());
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  Options options = launch_options();
  options["grace_usec"] = sdbus::Variant(kShortGraceUsec);
  options["timeout_usec"] = sdbus::Variant(std::uint64_t{1'000'000});
  auto started = Clock::now();
  launch("r1", {kEscaper, "--markers", markers}, STDERR_FILENO, options);
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_TRUE(ignores_signal(pids["ignoreterm"], SIGTERM));
  EXPECT_EQ(record("r1").timeout_usec, 1'000'000u);
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json", 6000ms)) << "no receipt 6 s after a 1 s timeout";
  EXPECT_GE(Clock::now() - started, 900ms) << "ended before its timeout";
  for (const auto& [role, pid] : pids) EXPECT_TRUE(wait_gone(pid, 2000ms)) << role << ": " << describe_process(pid);
  ASSERT_TRUE(pump_until([&] { return exited_of("r1").has_value(); }));
  EXPECT_EQ(exited_of("r1")->cause, "timeout");
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "timeout");
}

// Freeze and Thaw over the bus: Freeze stops the whole escaper tree (Frozen, `frozen 1`), Thaw lets
// it go on, and a Reap of the frozen run ends every process of it with an exact receipt.
TEST_F(AnEngine, FreezesAndThawsARunAndItsReapWhileFrozenIsExact) {
  ASSERT_NO_FATAL_FAILURE(connect());
  watch_run("r1");
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  launch("r1", {kEscaper, "--markers", markers}, STDERR_FILENO);
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  Record rec = record("r1");
  std::string events = cgroup_folder(rec.cgroup) + "/cgroup.events";
  auto freezer = [&](const char* method) { manager_->callMethod(method).onInterface(kManager).withArguments(std::string("r1")); };
  freezer("Freeze");
  EXPECT_TRUE(run_property<bool>("r1", "Frozen"));
  EXPECT_THAT(read_file(events).value_or(""), HasSubstr("frozen 1"));
  freezer("Thaw");
  EXPECT_FALSE(run_property<bool>("r1", "Frozen"));
  EXPECT_THAT(read_file(events).value_or(""), HasSubstr("frozen 0"));
  freezer("Freeze");
  ASSERT_TRUE(run_property<bool>("r1", "Frozen"));
  for (const auto& [role, pid] : pids) EXPECT_TRUE(alive(pid)) << role << " ended while frozen";

  auto [outcome, text] = reap("r1", kGraceUsec);
  EXPECT_EQ(outcome, "complete");
  for (const auto& [role, pid] : pids) EXPECT_FALSE(alive(pid)) << role << ": " << describe_process(pid);
  Receipt r = parse_receipt(text);
  EXPECT_EQ(r.attempt, 1u);
  EXPECT_EQ(r.unit, rec.unit);
  EXPECT_EQ(r.invocation_id, rec.invocation_id);
  EXPECT_TRUE(r.killed) << "the TERM ignorer can only go by SIGKILL";
  ASSERT_TRUE(r.cause);
  EXPECT_EQ(to_string(*r.cause), "reaped");
  ASSERT_TRUE(r.usage);
  EXPECT_TRUE(r.usage->cpu_usage_usec) << "cpu.stat is there on every cgroup2";
  EXPECT_EQ(run_property<std::string>("r1", "Cause"), "reaped");
  EXPECT_FALSE(run_property<bool>("r1", "Frozen"));
  try {
    freezer("Thaw");
    ADD_FAILURE() << "Thaw of a reaped run succeeded";
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), std::string(kErrorPrefix) + "RunFinished") << e.getMessage();
  }
}

// A Launch'd command that ends by itself with reap_on_exit: its receipt has the CPU it used, read
// from its run/ leaf after it ended (the holder keeps the scope), and says so (usage_final).
TEST_F(AnEngine, LaunchWithReapOnExitGetsTheExactUsageOfACommandThatEnded) {
  ASSERT_NO_FATAL_FAILURE(connect());
  launch("r1", {kEscaper, "--burn", "1000", "--pidfile", path("burner.pid")}, STDERR_FILENO);
  EXPECT_GT(await_pidfile(path("burner.pid")), 0) << "the burner did not start";
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json", 30'000ms)) << "no receipt after the command ended";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_TRUE(r.cause);
  EXPECT_EQ(to_string(*r.cause), "exited");
  EXPECT_TRUE(r.usage_final) << "the figures were not read after the run's last process ended";
  ASSERT_TRUE(r.usage && r.usage->cpu_usage_usec) << "no CPU figure";
  EXPECT_GE(*r.usage->cpu_usage_usec, 900'000u);
  EXPECT_EQ(await_no_nerve_units(), "");
}

}  // namespace
}  // namespace nerve::itest
