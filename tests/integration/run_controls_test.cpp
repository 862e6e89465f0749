// SPDX-License-Identifier: LGPL-2.1-or-later
// Run controls: unit properties, timeout and slice reach systemd; a bad
// property starts nothing; slice set reaches the slice; the command sees its run in its environment;
// a run started from inside another run is reaped with it.
#include "nerved_fixture.h"
#include "backend_view.h"

#include "base/host.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <sdbus-c++/sdbus-c++.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

class RunControls : public NervedTest {
 protected:
  // `slice set` is persistent: systemd writes drop-ins under $XDG_CONFIG_HOME/systemd/user.control,
  // which the harness makes a folder of each test's own manager, so nothing set here reaches another.
  void SetUp() override {
    const char* config = std::getenv("XDG_CONFIG_HOME");
    ASSERT_TRUE(config && std::string(config).rfind(std::getenv("XDG_RUNTIME_DIR"), 0) == 0)
        << "XDG_CONFIG_HOME is not the private manager's own: slice settings would outlive the test";
    NervedTest::SetUp();
  }

  // Whether the cgroup folder that holds CGROUP (its parent) offers CONTROLLER to it.
  bool controller_offered(const std::string& cgroup, const std::string& controller) {
    auto parent = cgroup.substr(0, cgroup.rfind('/'));
    auto text = read_file(cgroup_folder(parent) + "/cgroup.controllers").value_or("");
    return (" " + text + " ").find(" " + controller + " ") != std::string::npos ||
           text.rfind(controller + "\n", 0) == 0 || (" " + text).find(" " + controller + "\n") != std::string::npos;
  }
};

TEST_F(RunControls, EachPropertyTheTimeoutAndTheSliceReachTheScope) {
  NERVE_NEEDS_CONTROLLERS_FOR({"MemoryMax=64M", "TasksMax=50", "CPUQuota=50%", "AllowedCPUs=0"});
  pid_t launcher = ctl_background(
      "launch", {"launch", "--grace", kShortGraceArg, "-p", "MemoryMax=64M", "--property", "TasksMax=50", "-p",
                 "CPUQuota=50%", "-p", "AllowedCPUs=0", "--timeout", "1h", "--slice", "ctla-test.slice", "r1", "--",
                 kEscaper, "--pidfile", path("r1.pid")});
  ASSERT_EQ(await_pidfile(path("r1.pid")), launcher);
  Record rec = record("r1");
  EXPECT_EQ(unit_property(rec.unit, "MemoryMax"), "67108864");
  EXPECT_EQ(unit_property(rec.unit, "TasksMax"), "50");
  EXPECT_EQ(unit_property(rec.unit, "CPUQuotaPerSecUSec"), "500ms");
  EXPECT_EQ(unit_property(rec.unit, "AllowedCPUs"), "0");
  EXPECT_EQ(unit_property(rec.unit, "RuntimeMaxUSec"), "infinity") << "the timeout is nerve's deadline, not systemd's";
  EXPECT_EQ(unit_property(rec.unit, "Slice"), "ctla-test.slice");
  EXPECT_THAT(rec.cgroup, HasSubstr("/ctla.slice/ctla-test.slice/"));
  EXPECT_EQ(rec.properties,
            (std::vector<std::string>{"MemoryMax=64M", "TasksMax=50", "CPUQuota=50%", "AllowedCPUs=0"}));
  EXPECT_EQ(rec.slice, "ctla-test.slice");
  EXPECT_EQ(rec.timeout_usec, 3600'000'000u);
  Output reap = ctl({"reap", "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
}

TEST_F(RunControls, ARunGoesIntoNerveSliceByDefault) {
  pid_t launcher = ctl_background("launch", {"launch", "r1", "--", kEscaper, "--pidfile", path("r1.pid")});
  ASSERT_EQ(await_pidfile(path("r1.pid")), launcher);
  Record rec = record("r1");
  EXPECT_EQ(unit_property(rec.unit, "Slice"), "nerve.slice");
  EXPECT_EQ(rec.slice, "nerve.slice");
  EXPECT_EQ(ctl({"reap", "--grace", kShortGraceArg, "r1"}).exit_code, 0);
}

// A property nerve cannot parse, a key it does not know, and one it parses but systemd refuses
// (TasksMax=0 is out of range for systemd): nothing runs, InvalidProperty names the key and quotes
// the value. Only systemd's refusal comes after the intent record, which then says failed.
struct BadProperty {
  std::string name, assignment, key, quoted;
  bool refused_by_systemd;
};
class RunControlsBadProperty : public RunControls, public ::testing::WithParamInterface<BadProperty> {};

TEST_P(RunControlsBadProperty, StartsNothingAndNamesTheKey) {
  const BadProperty& b = GetParam();
  std::string marker = path("ran");
  Output o = ctl({"launch", "-p", b.assignment, "r1", "--", "sh", "-c", "touch '" + marker + "'"});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("org.nerve.Lifecycle1.Error.InvalidProperty"));
  EXPECT_THAT(o.err, HasSubstr(b.key));
  EXPECT_THAT(o.err, HasSubstr(b.quoted));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
  if (b.refused_by_systemd)
    EXPECT_EQ(to_string(record("r1").state), "failed");
  else
    EXPECT_FALSE(std::filesystem::exists(runs_ + "/r1")) << "a record was made";
  EXPECT_TRUE(nerve_cgroup_folders().empty());
}

INSTANTIATE_TEST_SUITE_P(Properties, RunControlsBadProperty,
                         ::testing::Values(BadProperty{"Unparsable", "MemoryMax=lots", "MemoryMax", "'lots'", false},
                                           BadProperty{"UnknownKey", "NoSuchKey=1", "NoSuchKey", "'1'", false},
                                           BadProperty{"RefusedBySystemd", "TasksMax=0", "TasksMax", "'TasksMax=0'", true}),
                         [](const auto& info) { return info.param.name; });

TEST_F(RunControls, ABadSliceStartsNothing) {
  std::string marker = path("ran");
  Output o = ctl({"launch", "--slice", "not-a-slice", "r1", "--", "sh", "-c", "touch '" + marker + "'"});
  EXPECT_NE(o.exit_code, 0);
  EXPECT_THAT(o.err, HasSubstr("InvalidArgument"));
  EXPECT_THAT(o.err, HasSubstr("'not-a-slice'"));
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/r1"));
}

TEST_F(RunControls, ATimeoutEndsTheWholeTree) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  auto t0 = Clock::now();
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "--timeout", "1s", "r1", "--", kEscaper, "--markers",
                            markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_TRUE(ignores_signal(pids["ignoreterm"], SIGTERM));
  expect_all_gone_by(pids, t0, t0 + 15s, "its timeout of 1 s passed");
  EXPECT_GE(since(t0), 900ms);
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "no receipt after the timeout";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "timeout");
  Output status = ctl({"status", "r1"});
  EXPECT_THAT(status.out, HasSubstr("cause:         timeout")) << status.out;
}

// A timeout too far away for a clock to hold (20000 weeks is past the year 2262 of a nanosecond
// time_point; 2^64-1 is systemd's "infinity") is no timeout at all, never one that is already over:
// the run is still running after its launch and a later call, and its reap has cause reaped.
struct FarTimeout {
  std::string name;
  bool over_the_bus;  // Launch with the option timeout_usec, else nervectl launch --timeout
  std::string cli_value;
  std::uint64_t timeout_usec;
};
class RunControlsFarTimeout : public RunControls, public ::testing::WithParamInterface<FarTimeout> {};

TEST_P(RunControlsFarTimeout, DoesNotEndTheRunAtOnce) {
  const FarTimeout& f = GetParam();
  if (f.over_the_bus) {
    BusReply reply = call_nerved([&](sdbus::IProxy& proxy) {
      int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
      std::vector<sdbus::UnixFd> stdio;
      for (int i = 0; i < 3; ++i) stdio.emplace_back(devnull);
      std::map<std::string, sdbus::Variant> options;
      options["keep"] = sdbus::Variant(true);  // the helper's connection ends with it; the run must not
      options["grace_usec"] = sdbus::Variant(kShortGraceUsec);
      options["timeout_usec"] = sdbus::Variant(f.timeout_usec);
      proxy.callMethod("Launch")
          .onInterface("org.nerve.Lifecycle1.Manager")
          .withArguments(std::string("r1"), std::vector<std::string>{kEscaper, "--pidfile", path("r1.pid")},
                         std::vector<std::string>{"PATH=/usr/bin:/bin"}, tmp_, stdio, options);
    });
    ASSERT_EQ(reply.failure, "");
    ASSERT_EQ(reply.error_name, "") << reply.error_message;
    ASSERT_GT(await_pidfile(path("r1.pid")), 0);
  } else {
    pid_t launcher = ctl_background("launch", {"launch", "--grace", kShortGraceArg, "--timeout", f.cli_value, "r1",
                                               "--", kEscaper, "--pidfile", path("r1.pid")});
    ASSERT_EQ(await_pidfile(path("r1.pid")), launcher);
  }
  EXPECT_EQ(record("r1").timeout_usec, f.timeout_usec);
  // A call after the launch: a deadline that had wrapped into the past has fired by its answer.
  Output status = ctl({"status", "r1"});
  EXPECT_EQ(status.exit_code, 0) << "the run is not running after its launch: " << status.out << status.err;
  EXPECT_EQ(to_string(record("r1").state), "running");
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/r1/receipt.json")) << "the run was reaped at once";
  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  Receipt r = receipt("r1");
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "reaped");
}

INSTANTIATE_TEST_SUITE_P(
    Timeouts, RunControlsFarTimeout,
    ::testing::Values(FarTimeout{"TwentyThousandWeeks", false, "20000w", 20000ull * 604800 * 1'000'000},
                      FarTimeout{"TwoToTheSixtyThreeUsecOverTheBus", true, "", std::uint64_t{1} << 63},
                      FarTimeout{"InfinityOverTheBus", true, "", UINT64_MAX}),
    [](const auto& info) { return info.param.name; });

// -p RuntimeMaxSec=N is the run's timeout, the same control as --timeout N: recorded as the run's
// timeout_usec, ended by nerve's own deadline (cause timeout), and never handed to systemd.
TEST_F(RunControls, RuntimeMaxSecIsTheRunsTimeout) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  auto t0 = Clock::now();
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "-p", "RuntimeMaxSec=1", "r1", "--", kEscaper,
                            "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  Record rec = record("r1");
  EXPECT_EQ(rec.timeout_usec, 1'000'000u);
  EXPECT_EQ(rec.properties, (std::vector<std::string>{"RuntimeMaxSec=1"})) << "kept as given";
  EXPECT_EQ(unit_property(rec.unit, "RuntimeMaxUSec"), "infinity") << "nerve's deadline ends the run, not systemd's";
  expect_all_gone_by(pids, t0, t0 + 15s, "its RuntimeMaxSec of 1 s passed");
  EXPECT_GE(since(t0), 900ms);
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "no receipt after the timeout";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "timeout");
}

// The deadline is the record's: a nerved SIGKILLed and started again before it still ends the run at
// it, with cause timeout.
TEST_F(RunControls, ARuntimeMaxSecIsKeptAcrossARestartOfNerved) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  auto t0 = Clock::now();
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "-p", "RuntimeMaxSec=3", "r1", "--", kEscaper,
                            "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_EQ(::kill(nerved_pid_, SIGKILL), 0);
  ASSERT_EQ(await_nerved_exit(), 128 + SIGKILL);
  ASSERT_LT(since(t0), 2500ms) << "too slow to restart nerved before the deadline";
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  expect_all_gone_by(pids, t0, t0 + 15s, "its RuntimeMaxSec of 3 s passed across a restart of nerved");
  EXPECT_GE(since(t0), 2900ms);
  ASSERT_TRUE(wait_for_file(runs_ + "/r1/receipt.json")) << "no receipt after the timeout";
  Receipt r = receipt("r1");
  EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
  ASSERT_TRUE(r.cause) << "a receipt without a cause";
  EXPECT_EQ(to_string(*r.cause), "timeout");
}

// Both given: the same value is one timeout; different values are refused before anything starts.
TEST_F(RunControls, RuntimeMaxSecAndTimeoutMustAgree) {
  std::string marker = path("ran");
  Output o = ctl({"launch", "--timeout", "2s", "-p", "RuntimeMaxSec=3", "r1", "--", "sh", "-c", "touch '" + marker + "'"});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("org.nerve.Lifecycle1.Error.InvalidProperty"));
  EXPECT_THAT(o.err, HasSubstr("'RuntimeMaxSec=3'"));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
  EXPECT_FALSE(std::filesystem::exists(runs_ + "/r1")) << "a record was made";

  pid_t launcher = ctl_background("launch", {"launch", "--timeout", "1h", "-p", "RuntimeMaxSec=60min", "r2", "--",
                                             kEscaper, "--pidfile", path("r2.pid")});
  ASSERT_EQ(await_pidfile(path("r2.pid")), launcher);
  EXPECT_EQ(record("r2").timeout_usec, 3600'000'000u);
  EXPECT_EQ(ctl({"reap", "--grace", kShortGraceArg, "r2"}).exit_code, 0);
}

// Enforcement needs the controller in the scope's cgroup: where it is offered, the kernel's file has
// the limit; where not (this hybrid host: no memory, pids, io, cpu, cpuset on cgroup2), the test is
// skipped visibly, naming the controller, after the property reached systemd (checked above).
struct Enforced {
  std::string name, assignment, controller, file, expected;
};
class RunControlsEnforced : public RunControls, public ::testing::WithParamInterface<Enforced> {};

TEST_P(RunControlsEnforced, WhereTheControllerIsOffered) {
  const Enforced& e = GetParam();
  if (!controller_missing_for({e.assignment}).empty()) {
    // The cgroup backend without the controller: refused by name before anything runs or is recorded.
    std::string marker = path("ran");
    Output o = ctl({"launch", "-p", e.assignment, "r1", "--", "sh", "-c", "touch '" + marker + "'"});
    EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
    EXPECT_THAT(o.err, HasSubstr("org.nerve.Lifecycle1.Error.InvalidProperty"));
    EXPECT_THAT(o.err, HasSubstr("'" + e.assignment + "'"));
    EXPECT_THAT(o.err, HasSubstr("needs the " + e.controller + " controller"));
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
    EXPECT_EQ(await_no_nerve_units(), "");
    GTEST_SKIP() << "the " << e.controller << " controller is not offered to the cgroup backend's subtree here: "
                 << e.assignment << " is refused by name (checked), enforcement cannot be";
  }
  pid_t launcher = ctl_background("launch", {"launch", "-p", e.assignment, "r1", "--", kEscaper, "--pidfile", path("r1.pid")});
  ASSERT_EQ(await_pidfile(path("r1.pid")), launcher);
  Record rec = record("r1");
  bool offered = controller_offered(rec.cgroup, e.controller);
  if (offered) {
    EXPECT_EQ(read_file(cgroup_folder(rec.cgroup) + "/" + e.file).value_or(""), e.expected + "\n");
  }
  EXPECT_EQ(ctl({"reap", "--grace", kShortGraceArg, "r1"}).exit_code, 0);
  if (!offered)
    GTEST_SKIP() << "the " << e.controller << " controller is not offered in the scope's cgroup on this host: "
                 << e.assignment << " reaches systemd but is not enforced here";
}

INSTANTIATE_TEST_SUITE_P(Limits, RunControlsEnforced,
                         ::testing::Values(Enforced{"MemoryMax", "MemoryMax=32M", "memory", "memory.max", "33554432"},
                                           Enforced{"TasksMax", "TasksMax=7", "pids", "pids.max", "7"},
                                           Enforced{"CPUQuota", "CPUQuota=50%", "cpu", "cpu.max", "50000 100000"},
                                           Enforced{"IOWeight", "IOWeight=300", "io", "io.weight", "default 300"},
                                           Enforced{"AllowedCPUs", "AllowedCPUs=0", "cpuset", "cpuset.cpus", "0"}),
                         [](const auto& info) { return info.param.name; });

TEST_F(RunControls, SliceSetReachesTheSlice) {
  NERVE_NEEDS_CONTROLLERS_FOR({"TasksMax=100", "MemoryMax=1G"});
  Output o = ctl({"slice", "set", "ctlb.slice", "-p", "TasksMax=100", "-p", "MemoryMax=1G"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(unit_property("ctlb.slice", "TasksMax"), "100");
  EXPECT_EQ(unit_property("ctlb.slice", "MemoryMax"), "1073741824");
  Output d = ctl({"slice", "set", "-p", "TasksMax=77"});
  ASSERT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_EQ(unit_property("nerve.slice", "TasksMax"), "77");
  Output bad = ctl({"slice", "set", "-p", "TasksMax=many"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("InvalidProperty"));
  EXPECT_THAT(bad.err, HasSubstr("'many'"));
  // A key a slice does not have: systemd refuses it, and nothing else of the call is set.
  Output refused = ctl({"slice", "set", "-p", "TasksMax=55", "-p", "RuntimeMaxSec=10"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("org.nerve.Lifecycle1.Error.InvalidProperty"));
  EXPECT_THAT(refused.err, HasSubstr("RuntimeMaxSec=10"));
  EXPECT_EQ(unit_property("nerve.slice", "TasksMax"), "77");
}

// slice set succeeds only when the slice has the value afterwards. systemd 252 answers
// SetUnitProperties(TasksMax=infinity) without error after TasksMax=50% but keeps the 50% (seen on
// Debian 12): nervectl must then fail naming the property, not say "set". Whatever systemd does, the
// exit code follows what the slice really has.
TEST_F(RunControls, SliceSetFailsWhenSystemdDidNotApplyTheValue) {
  NERVE_NEEDS_CONTROLLERS_FOR({"TasksMax=50%"});
  Output scaled = ctl({"slice", "set", "ctlc.slice", "-p", "TasksMax=50%"});
  ASSERT_EQ(scaled.exit_code, 0) << scaled.out << scaled.err;
  std::string before = unit_property("ctlc.slice", "TasksMax");
  Output o = ctl({"slice", "set", "ctlc.slice", "-p", "TasksMax=infinity"});
  std::string after = unit_property("ctlc.slice", "TasksMax");
  if (after == "infinity") {
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    std::cerr << "note: this systemd applied TasksMax=infinity after 50%\n";
  } else {
    EXPECT_EQ(o.exit_code, 1) << "slice set said it set a value the slice does not have: " << o.out << o.err;
    EXPECT_THAT(o.out, Not(HasSubstr("set TasksMax")));
    EXPECT_THAT(o.err, HasSubstr("org.nerve.Lifecycle1.Error.InvalidProperty"));
    EXPECT_THAT(o.err, HasSubstr("'TasksMax=infinity'"));
    EXPECT_THAT(o.err, HasSubstr("'" + before + "'")) << "the value the slice has instead";
  }
}

TEST_F(RunControls, TheCommandSeesItsRunInItsEnvironment) {
  for (bool wait : {false, true}) {
    std::string run = wait ? "r-wait" : "r-exec", env = path(run + ".env");
    std::vector<std::string> args = {"launch"};
    if (wait) args.push_back("--wait");
    for (auto a : {run, std::string("--"), std::string("sh"), std::string("-c"), "env > '" + env + "'"}) args.push_back(a);
    Output o = ctl(args, {{"NERVE_RUN", "stale"}});
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    auto text = read_file(env).value_or("");
    Record rec = record(run);
    EXPECT_THAT(text, HasSubstr("\nNERVE_RUN=" + run + "\n")) << text;
    EXPECT_THAT(text, HasSubstr("\nNERVE_RUN_ATTEMPT=1\n")) << text;
    EXPECT_THAT(text, HasSubstr("\nINVOCATION_ID=" + rec.invocation_id + "\n")) << text;
    ctl({"reap", run});
  }
}

TEST_F(RunControls, ARunStartedInsideAnotherIsReapedWithIt) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  std::string script = "'" + kNervectl + "' launch --grace " + std::string(kShortGraceArg) + " child -- '" + kEscaper + "' --markers '" + markers + "' & exec '" +
                       kEscaper + "' --pidfile '" + path("parent.pid") + "'";
  pid_t launcher = ctl_background("parent", {"launch", "--grace", kShortGraceArg, "parent", "--", "sh", "-c", script});
  ASSERT_EQ(await_pidfile(path("parent.pid")), launcher);
  auto child = await_markers(markers);
  ASSERT_EQ(child.size(), 4u);
  Record c = record("child");
  EXPECT_EQ(c.parent, "parent");
  EXPECT_EQ(record("parent").parent, "");
  EXPECT_NE(c.unit, record("parent").unit);

  auto t0 = Clock::now();
  Output reap = ctl({"reap", "parent"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  expect_all_gone_by(child, t0, Clock::now() + 1s, "its parent run was reaped");
  EXPECT_EQ(to_string(record("child").state), "reaped");
  EXPECT_EQ(to_string(receipt("child").outcome), "complete");
}

// The same over the bus: an engine whose process is inside run "parent" calls Launch (here a helper
// that joined parent's scope first, as any process started inside the run would be). Its run is
// parent's child, and reaping parent ends the child's whole escaper tree too: the engine could not
// take the tree out of its run by asking nerved for a new one.
TEST_F(RunControls, ARunLaunchedOverTheBusFromInsideAnotherIsReapedWithIt) {
  pid_t launcher = ctl_background(
      "parent", {"launch", "--grace", kShortGraceArg, "parent", "--", kEscaper, "--pidfile", path("parent.pid")});
  ASSERT_EQ(await_pidfile(path("parent.pid")), launcher);
  std::string parent_procs = cgroup_folder(record("parent").cgroup) + "/cgroup.procs";
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  BusReply reply = call_nerved([&](sdbus::IProxy& proxy) {
    std::ofstream(parent_procs) << ::getpid() << std::endl;
    if (proc_cgroup(::getpid()).value_or("") != record("parent").cgroup)
      throw std::runtime_error("cannot join " + parent_procs);
    int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    std::vector<sdbus::UnixFd> stdio;
    for (int i = 0; i < 3; ++i) stdio.emplace_back(devnull);
    std::map<std::string, sdbus::Variant> options;
    options["keep"] = sdbus::Variant(true);  // the helper's connection ends with it; the run must not
    options["grace_usec"] = sdbus::Variant(kShortGraceUsec);
    proxy.callMethod("Launch")
        .onInterface("org.nerve.Lifecycle1.Manager")
        .withArguments(std::string("child"), std::vector<std::string>{kEscaper, "--markers", markers},
                       std::vector<std::string>{"PATH=/usr/bin:/bin"}, tmp_, stdio, options);
  });
  ASSERT_EQ(reply.failure, "");
  ASSERT_EQ(reply.error_name, "") << reply.error_message;
  auto child = await_markers(markers);
  ASSERT_EQ(child.size(), 4u);
  EXPECT_EQ(record("child").parent, "parent");

  auto t0 = Clock::now();
  Output reap = ctl({"reap", "parent"});
  EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
  expect_all_gone_by(child, t0, Clock::now() + 1s, "its parent run was reaped");
  Receipt c = receipt("child");
  EXPECT_EQ(to_string(c.outcome), "complete") << c.error;
  EXPECT_TRUE(c.killed) << "the TERM ignorer of the child run can only go by SIGKILL";
}

// A child cannot outlive its parent whatever ends the parent: here the parent's timeout.
TEST_F(RunControls, ARunStartedInsideAnotherEndsWhenItsParentTimesOut) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  std::string script = "'" + kNervectl + "' launch --keep --grace " + std::string(kShortGraceArg) + " child -- '" +
                       kEscaper + "' --markers '" + markers + "' & exec '" + kEscaper + "' --pidfile '" +
                       path("parent.pid") + "'";
  auto t0 = Clock::now();
  pid_t launcher = ctl_background("parent", {"launch", "--grace", kShortGraceArg, "--timeout", "2s", "parent", "--",
                                             "sh", "-c", script});
  ASSERT_EQ(await_pidfile(path("parent.pid")), launcher);
  auto child = await_markers(markers);
  ASSERT_EQ(child.size(), 4u);
  ASSERT_EQ(record("child").parent, "parent");
  ASSERT_EQ(record("child").timeout_usec, 0u) << "the child has no timeout of its own";
  expect_all_gone_by(child, t0, t0 + 15s, "its parent's timeout of 2 s passed");
  ASSERT_TRUE(wait_for_file(runs_ + "/child/receipt.json"));
  EXPECT_EQ(to_string(receipt("child").outcome), "complete");
  ASSERT_TRUE(wait_for_file(runs_ + "/parent/receipt.json"));
  Receipt p = receipt("parent");
  ASSERT_TRUE(p.cause);
  EXPECT_EQ(to_string(*p.cause), "timeout");
}

// nerved --default-slice: a launch that names no slice goes there.
class RunControlsWithADefaultSlice : public RunControls {
 protected:
  RunControlsWithADefaultSlice() { nerved_args_ = {"--default-slice", "ctlc-default.slice"}; }
};

TEST_F(RunControlsWithADefaultSlice, PutsARunThatNamesNoSliceIntoIt) {
  pid_t launcher = ctl_background("launch", {"launch", "r1", "--", kEscaper, "--pidfile", path("r1.pid")});
  ASSERT_EQ(await_pidfile(path("r1.pid")), launcher);
  Record rec = record("r1");
  EXPECT_EQ(rec.slice, "ctlc-default.slice");
  EXPECT_EQ(unit_property(rec.unit, "Slice"), "ctlc-default.slice");
  EXPECT_EQ(ctl({"reap", "--grace", kShortGraceArg, "r1"}).exit_code, 0);
}

}  // namespace
}  // namespace nerve::itest
