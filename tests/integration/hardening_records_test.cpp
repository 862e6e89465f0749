// SPDX-License-Identifier: LGPL-2.1-or-later
// Records nerve would never write, and files where a record should be. No
// such file ends nerved or blocks its loop: a query answers a named error quoting the run, a reap or
// the startup reconciliation moves the record aside (quarantine), and every other call is served.
#include "hardening_support.h"
#include "backend_view.h"

#include "base/host.h"

#include <gmock/gmock.h>
#include <sys/sysmacros.h>

#include <filesystem>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class HardeningRecords : public Hardening {
 protected:
  // A record whose cgroup climbs out of the cgroup tree to a regular file, with that file's inode as
  // cgroup_id, so that every check by id passes: what a corrupt or hostile record can hold.
  Record escaping_record(const std::string& run, RunState state) {
    Record r = plausible_record(run, boot_id());
    r.cgroup = "/../../../../../../../../etc/hostname";
    struct stat st {};
    EXPECT_EQ(::stat(cgroup_folder(r.cgroup).c_str(), &st), 0) << cgroup_folder(r.cgroup);
    r.cgroup_id = st.st_ino;
    r.state = state;
    return r;
  }

  // nerved still answers, and still is the process the fixture started.
  void expect_serving() {
    EXPECT_TRUE(alive(nerved_pid_)) << "nerved ended:\n" << log();
    Timed list = timed_call("ListRuns", "", 3000ms);
    EXPECT_EQ(list.error, "") << list.message;
  }

  bool quarantined(const std::string& run) {
    for (const auto& name : list_folder(runs_ + "/.quarantine"))
      if (name.rfind(run + ".", 0) == 0 && name.find("lifecycle.json") != std::string::npos) return true;
    return false;
  }
};

// Records nerve never writes: a GetRun of a record whose cgroup has '..' components ended nerved (an
// FsError thrown out of the handler). Now the record is refused when read, as corrupt.
TEST_F(HardeningRecords, GetRunOfACgroupWithDotDotIsANamedErrorAndNervedLives) {
  write_record_text("dots", to_json_text(escaping_record("dots", RunState::Running)));
  Timed t = timed_call("GetRun", "dots", 5000ms);
  EXPECT_EQ(t.error, "org.nerve.Lifecycle1.Error.RecordFailed") << t.message << t.text;
  EXPECT_THAT(t.message, HasSubstr("'dots'"));
  EXPECT_THAT(t.message, HasSubstr("cgroup"));
  expect_serving();
}

// Records nerve never writes: in state reaping the same record made every start of nerved exit (a
// crash loop under Restart=on-failure). Now the startup reconciliation quarantines it and nerved
// comes up.
TEST_F(HardeningRecords, StartupQuarantinesAReapingRecordWithDotDotAndComesUp) {
  stop_nerved();
  write_record_text("dots", to_json_text(escaping_record("dots", RunState::Reaping)));
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  EXPECT_TRUE(eventually([&] { return quarantined("dots"); }, 5000ms)) << log();
  expect_serving();
}

// Records nerve never writes: fields are checked against what nerve itself writes. A unit that is not
// nerve-<run>-<nonce>.scope (here the manager's own init.scope) is never looked up or stopped: a Reap
// answers RecordFailed and the record is quarantined.
TEST_F(HardeningRecords, AReapOfARecordNamingAForeignUnitQuarantinesItAndTouchesNothing) {
  Record r = plausible_record("foreign", boot_id());
  r.unit = "init.scope";
  r.cgroup = "/init.scope";
  // On the cgroup backend, a process of its own in a folder /init.scope: what must not be touched.
  pid_t foreign = 0;
  if (cgroup_backend()) {
    foreign = spawn(command(foreign_scope_command("init.scope", "", {"sleep", "300"})));
    track(foreign, true);
    ASSERT_TRUE(eventually([&] { return proc_cgroup(foreign).value_or("") == "/init.scope"; }, kEventTimeout));
  }
  write_record_text("foreign", to_json_text(r));
  Timed t = timed_call("Reap", "foreign", 5000ms);
  EXPECT_EQ(t.error, "org.nerve.Lifecycle1.Error.RecordFailed") << t.message;
  EXPECT_THAT(t.message, HasSubstr("init.scope"));
  EXPECT_TRUE(quarantined("foreign"));
  EXPECT_EQ(unit_property("init.scope", "ActiveState"), "active");
  if (foreign) {
    EXPECT_TRUE(alive(foreign)) << describe_process(foreign);
    ::kill(foreign, SIGKILL);
    EXPECT_TRUE(wait_gone(foreign, kEventTimeout));
    EXPECT_EQ(stop_out_of_band("init.scope"), "");  // its folder too
  }
  expect_serving();
}

// Each malformed field alone makes the record corrupt for a query (and never ends nerved).
TEST_F(HardeningRecords, EachFieldNerveWouldNeverWriteIsRefused) {
  struct Bad {
    const char* what;
    std::function<void(Record&)> spoil;
  };
  std::vector<Bad> cases = {
      {"unit", [](Record& r) { r.unit = "nerve-x-0123456789abcdef.service"; }},
      {"nonce", [](Record& r) { r.nonce = "../x"; }},
      {"invocation_id", [](Record& r) { r.invocation_id = "xyz"; }},
      {"cgroup", [](Record& r) { r.cgroup = "app.slice/" + r.unit; }},
      {"cgroup", [](Record& r) { r.cgroup = "/app.slice//" + r.unit; }},
      {"cgroup", [](Record& r) { r.cgroup = "/app.slice/./" + r.unit; }},
      {"boot_id", [](Record& r) { r.boot_id = "not-a-boot-id"; }},
      {"owner", [](Record& r) {
         r.owner.kind = OwnerKind::Bus;
         r.owner.name = "not-a-unique-name";
       }},
  };
  int i = 0;
  for (const auto& c : cases) {
    std::string run = "bad" + std::to_string(i++);
    Record r = plausible_record(run, boot_id());
    c.spoil(r);
    write_record_text(run, to_json_text(r));
    Timed t = timed_call("GetRun", run, 5000ms);
    EXPECT_EQ(t.error, "org.nerve.Lifecycle1.Error.RecordFailed") << c.what << ": " << t.message << t.text;
    EXPECT_THAT(t.message, HasSubstr(c.what)) << run;
  }
  expect_serving();
}

// Files where a record should be: a FIFO named lifecycle.json was opened blocking before the
// regular-file check; the whole daemon waited for a writer. Now the query answers at once and nothing
// else waits.
TEST_F(HardeningRecords, AFifoNamedLifecycleJsonIsAnErrorForItsRunOnlyAtRuntime) {
  ASSERT_EQ(::mkdir((runs_ + "/fifo").c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo((runs_ + "/fifo/lifecycle.json").c_str(), 0600), 0);
  Timed t = timed_call("GetRun", "fifo", 5000ms);
  EXPECT_EQ(t.error, "org.nerve.Lifecycle1.Error.RecordFailed") << t.message;
  EXPECT_LT(t.took, 2000ms);
  EXPECT_THAT(t.message, HasSubstr("not a regular file"));
  Timed reap = timed_call("Reap", "fifo", 5000ms);
  EXPECT_EQ(reap.error, "org.nerve.Lifecycle1.Error.RecordFailed") << reap.message;
  expect_serving();
}

TEST_F(HardeningRecords, AFifoNamedLifecycleJsonOrReceiptJsonDoesNotHoldUpTheStart) {
  stop_nerved();
  ASSERT_EQ(::mkdir((runs_ + "/fifo").c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo((runs_ + "/fifo/lifecycle.json").c_str(), 0600), 0);
  Record r = plausible_record("rfifo", boot_id());
  r.state = RunState::Reaped;
  write_record_text("rfifo", to_json_text(r));
  ASSERT_EQ(::mkfifo((runs_ + "/rfifo/receipt.json").c_str(), 0600), 0);
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  Timed t = timed_call("GetRun", "rfifo", 5000ms);
  EXPECT_EQ(t.error, "") << t.message;
  EXPECT_THAT(t.text, HasSubstr("receipt_error"));
  expect_serving();
}

// A reaped run is forgotten keep_finished (7 days by default) after it ended, judged against the
// clock when nerved starts: the record's age is made relative to now, so the test holds on any date
// (and under clock.AYearAhead). A receipt-less record ages by its updated_at.
TEST_F(HardeningRecords, AReapedRecordIsForgottenAtStartupByItsAgeFromNow) {
  stop_nerved();
  auto now = std::chrono::system_clock::now();
  const std::pair<const char*, std::chrono::hours> ages[] = {{"older", std::chrono::hours(24 * 8)},
                                                             {"younger", std::chrono::hours(24 * 6)}};
  for (const auto& [run, age] : ages) {
    Record r = plausible_record(run, boot_id());
    r.state = RunState::Reaped;
    r.created_at = r.updated_at = rfc3339(now - age);
    write_record_text(run, to_json_text(r));
  }
  ASSERT_NO_FATAL_FAILURE(start_nerved());
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(runs_ + "/older"); }, milliseconds{10'000}))
      << "a run reaped 8 days ago is kept:\n" << log();
  EXPECT_EQ(timed_call("GetRun", "older", 5000ms).error, "org.nerve.Lifecycle1.Error.NoSuchRun");
  Timed young = timed_call("GetRun", "younger", 5000ms);
  EXPECT_EQ(young.error, "") << "a run reaped 6 days ago is forgotten: " << young.message;
  expect_serving();
}

// Files where a record should be: a device node (here /dev/zero's numbers) is never read.
TEST_F(HardeningRecords, ADeviceNodeNamedLifecycleJsonIsAnErrorForItsRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod of a device node needs root (CAP_MKNOD); the root pass runs this, the FIFO tests run everywhere";
  ASSERT_EQ(::mkdir((runs_ + "/dev").c_str(), 0700), 0);
  ASSERT_EQ(::mknod((runs_ + "/dev/lifecycle.json").c_str(), S_IFCHR | 0600, makedev(1, 5)), 0) << std::strerror(errno);
  Timed t = timed_call("GetRun", "dev", 5000ms);
  EXPECT_EQ(t.error, "org.nerve.Lifecycle1.Error.RecordFailed") << t.message;
  EXPECT_THAT(t.message, HasSubstr("not a regular file"));
  expect_serving();
}

}  // namespace
}  // namespace nerve::itest
