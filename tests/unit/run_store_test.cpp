// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "record/run_store.h"

#include "record/run_records.h"

#include "doubles.h"
#include "base/durable_file.h"
#include "base/errors.h"
#include "base/timestamps.h"
#include "printers.h"
#include "temp_dir.h"

#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace nerve;
using nerve::test::TempDir;
using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

namespace {

Record record_of(const std::string& run) {
  Record r;
  r.run = run;
  r.unit = "nerve-" + run + "-0123456789abcdef.scope";
  r.nonce = "0123456789abcdef";
  r.state = RunState::Running;
  return r;
}

Receipt receipt_of(const std::string& run) {
  Receipt r;
  r.run = run;
  r.outcome = Outcome::Complete;
  return r;
}

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class ARunStore : public ::testing::Test {
 protected:
  TempDir tmp;
  RunStore store{tmp / "runs"};

  std::string in_runs(const std::string& name) const { return tmp / ("runs/" + name); }
  static void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  // A folder outside the runs folder holding a valid record of 'run'.
  std::string outside_folder_with_record_of(const std::string& run) {
    std::filesystem::create_directory(tmp / "outside");
    write(tmp / "outside/lifecycle.json", to_json_text(record_of(run)));
    return tmp / "outside";
  }
};

std::vector<std::string> list_folder_names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename());
  return out;
}

template <typename T>
void expect_error(const Result<T>& r, const char* name, const std::string& in_message) {
  ASSERT_FALSE(r) << "no error";
  EXPECT_EQ(r.error().name, name);
  EXPECT_THAT(r.error().message, HasSubstr(in_message));
}

}  // namespace

TEST_F(ARunStore, MakesItsFolderWithMode0700) {
  struct stat st {};
  ASSERT_EQ(::stat(store.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(store.path(), tmp / "runs");
}

TEST_F(ARunStore, LoadsTheRecordItSaved) {
  test::save(store, record_of("r1"));
  auto r = test::load(store, "r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->unit, record_of("r1").unit);
  EXPECT_EQ(r->state, RunState::Running);
}

TEST_F(ARunStore, LoadsTheReceiptItSaved) {
  test::save(store, receipt_of("r1"));
  auto r = test::load_receipt(store, "r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, Outcome::Complete);
}

TEST_F(ARunStore, LoadsNothingForAnUnknownRun) {
  EXPECT_EQ(test::load(store, "r1"), std::nullopt);
  EXPECT_EQ(test::load_receipt(store, "r1"), std::nullopt);
}

TEST_F(ARunStore, LoadsNoReceiptForARunThatHasOnlyARecord) {
  test::save(store, record_of("r1"));
  EXPECT_EQ(test::load_receipt(store, "r1"), std::nullopt);
}

TEST_F(ARunStore, KeepsRunFoldersWithMode0700AndFilesWithMode0600) {
  test::save(store, record_of("r1"));
  struct stat st {};
  ASSERT_EQ(::stat(in_runs("r1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(in_runs("r1/lifecycle.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(ARunStore, RefusesARecordThatNamesAnotherRun) {
  std::filesystem::create_directory(in_runs("r1"));
  write(in_runs("r1/lifecycle.json"), to_json_text(record_of("r2")));
  expect_error(store.load("r1"), store_error::Corrupt, "names run 'r2'");
}

TEST_F(ARunStore, AnswersCorruptForAnUnreadableRecord) {
  std::filesystem::create_directory(in_runs("r1"));
  write(in_runs("r1/lifecycle.json"), "{\"version\": 1, \"run\": ");
  expect_error(store.load("r1"), store_error::Corrupt, "not valid JSON");
}

TEST_F(ARunStore, RefusesRunNamesThatAreNotRunIds) {
  for (const std::string& bad : std::vector<std::string>{"../x", ".hidden", "a/b", "", std::string(129, 'x')}) {
    SCOPED_TRACE(bad);
    expect_error(store.save(record_of(bad)), store_error::Io, "refusing run folder name");
    expect_error(store.load(bad), store_error::Io, "refusing run folder name");
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "x"));
  EXPECT_THAT(store.runs().value(), IsEmpty());
}

TEST_F(ARunStore, DoesNotReadARecordThroughASymlinkedRunFolder) {
  ASSERT_EQ(::symlink(outside_folder_with_record_of("r1").c_str(), in_runs("r1").c_str()), 0);
  auto r = store.load("r1");
  ASSERT_FALSE(r) << "a record was read through a symlink";
  EXPECT_EQ(r.error().name, store_error::Io);
  EXPECT_THAT(r.error().message, AnyOf(HasSubstr(std::strerror(ELOOP)), HasSubstr(std::strerror(ENOTDIR))));
}

TEST_F(ARunStore, DoesNotWriteThroughASymlinkedRunFolder) {
  std::filesystem::create_directory(tmp / "outside");
  ASSERT_EQ(::symlink((tmp / "outside").c_str(), in_runs("r1").c_str()), 0);
  expect_error(store.save(record_of("r1")), store_error::Io, in_runs("r1"));
  EXPECT_THAT(std::filesystem::is_empty(tmp / "outside"), true);
}

TEST_F(ARunStore, DoesNotReadASymlinkedLifecycleJson) {
  outside_folder_with_record_of("r1");
  std::filesystem::create_directory(in_runs("r1"));
  ASSERT_EQ(::symlink((tmp / "outside/lifecycle.json").c_str(), in_runs("r1/lifecycle.json").c_str()), 0);
  expect_error(store.load("r1"), store_error::Io, in_runs("r1/lifecycle.json"));
}

TEST_F(ARunStore, AnswersAnIoErrorNamingTheRunFolderWhenAFileTakesItsPlace) {
  write(in_runs("r1"), "not a folder");
  expect_error(store.save(record_of("r1")), store_error::Io, in_runs("r1"));
  expect_error(store.save(record_of("r1")), store_error::Io, std::strerror(ENOTDIR));
}

TEST_F(ARunStore, AnswersAnIoErrorNamingTheFileWhenARecordCannotBeReplaced) {
  std::filesystem::create_directories(in_runs("r1/lifecycle.json"));
  expect_error(store.save(record_of("r1")), store_error::Io, in_runs("r1/lifecycle.json"));
}

TEST_F(ARunStore, CannotBeOpenedUnderARegularFile) {
  write(tmp / "file", "");
  EXPECT_THROW(RunStore(tmp / "file/runs"), FsError);
}

TEST_F(ARunStore, ListsItsRunFoldersSorted) {
  for (const char* run : {"r2", "r10", "a:1"}) test::save(store, record_of(run));
  EXPECT_THAT(store.runs().value(), ElementsAre("a:1", "r10", "r2"));
}

TEST_F(ARunStore, SkipsSymlinksNonFoldersAndInvalidNamesAndReportsThem) {
  test::save(store, record_of("good"));
  ASSERT_EQ(::symlink(outside_folder_with_record_of("linked").c_str(), in_runs("linked").c_str()), 0);
  write(in_runs("plain"), "");
  std::filesystem::create_directory(in_runs("bad name"));
  std::vector<std::string> skipped;
  EXPECT_THAT(store.runs(&skipped).value(), ElementsAre("good"));
  EXPECT_THAT(skipped, UnorderedElementsAre(in_runs("linked") + " is a symlink", in_runs("plain") + " is not a folder",
                                            HasSubstr(in_runs("bad name"))));
}

TEST_F(ARunStore, LeavesItsOwnDotFilesOutOfTheList) {
  std::filesystem::create_directory(in_runs(".quarantine"));
  std::vector<std::string> skipped;
  EXPECT_THAT(store.runs(&skipped).value(), IsEmpty());
  EXPECT_THAT(skipped, IsEmpty());
}

TEST_F(ARunStore, MovesAnUnreadableRecordAndItsReceiptAsideAndSaysWhere) {
  test::save(store, record_of("r1"));
  test::save(store, receipt_of("r1"));
  const std::string moved = store.quarantine("r1").value();
  EXPECT_THAT(moved, ::testing::StartsWith(tmp / "runs/.quarantine/r1."));
  EXPECT_TRUE(std::filesystem::is_regular_file(moved));
  EXPECT_EQ(test::load(store, "r1"), std::nullopt);
  EXPECT_EQ(test::load_receipt(store, "r1"), std::nullopt);
}

TEST_F(ARunStore, RemovesTheFilesAndTheFolderOfARun) {
  test::save(store, record_of("r1"));
  test::save(store, receipt_of("r1"));
  ASSERT_TRUE(store.remove("r1"));
  EXPECT_FALSE(std::filesystem::exists(in_runs("r1")));
  EXPECT_THAT(store.runs().value(), IsEmpty());
}

TEST_F(ARunStore, KeepsTheReceiptsOfSupersededAttemptsBesideTheRunsOwnByAttempt) {
  test::save(store, record_of("r1"));
  for (unsigned attempt : {10u, 2u, 1u}) {
    Receipt r = receipt_of("r1");
    r.attempt = attempt;
    r.cause = Cause::Relaunched;
    ASSERT_TRUE(store.save_superseded_receipt(r));
  }
  write(in_runs("r1/receipt.attempt-x.json"), "not one of them");
  auto earlier = store.superseded_receipts("r1").value();
  ASSERT_EQ(earlier.size(), 3u);
  EXPECT_EQ(earlier[0].attempt, 1u);
  EXPECT_EQ(earlier[2].attempt, 10u);
  EXPECT_EQ(earlier[1].cause, Cause::Relaunched);
  EXPECT_EQ(test::load_receipt(store, "r1"), std::nullopt) << "receipt.json is the run's own final receipt alone";
  EXPECT_THAT(store.superseded_receipts("r2").value(), IsEmpty()) << "a run without a folder has none";
}

TEST_F(ARunStore, RemovesAndQuarantinesTheSupersededReceiptsWithTheRun) {
  for (const char* run : {"r1", "r2"}) {
    test::save(store, record_of(run));
    Receipt r = receipt_of(run);
    r.attempt = 1;
    ASSERT_TRUE(store.save_superseded_receipt(r));
  }
  ASSERT_TRUE(store.remove("r1"));
  EXPECT_FALSE(std::filesystem::exists(in_runs("r1")));
  ASSERT_TRUE(store.quarantine("r2"));
  EXPECT_THAT(store.superseded_receipts("r2").value(), IsEmpty());
  auto aside = list_folder_names(tmp / "runs/.quarantine");
  EXPECT_EQ(std::count_if(aside.begin(), aside.end(),
                          [](const std::string& n) { return n.ends_with(".receipt.attempt-1.json"); }),
            1);
}

TEST_F(ARunStore, TellsItsObserverOfEveryChange) {
  std::vector<std::string> changed;
  store.set_observer([&](const std::string& run, const StoreChange&) { changed.push_back(run); });
  test::save(store, record_of("r1"));
  test::save(store, receipt_of("r1"));
  ASSERT_TRUE(store.quarantine("r1"));
  ASSERT_TRUE(store.remove("r1"));
  EXPECT_THAT(changed, ElementsAre("r1", "r1", "r1", "r1"));
}

TEST_F(ARunStore, TellsItsObserverWhatEachChangeWasBeforeAndAfter) {
  std::vector<StoreChange> seen;
  store.set_observer([&](const std::string&, const StoreChange& c) { seen.push_back(c); });
  Record r = record_of("r1");
  r.state = RunState::Reaping;
  test::save(store, r);
  Receipt receipt = receipt_of("r1");
  receipt.cause = Cause::Cancelled;
  test::save(store, receipt);
  r.state = RunState::Reaped;
  test::save(store, r);
  ASSERT_TRUE(store.remove("r1"));
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_FALSE(seen[0].before);
  ASSERT_TRUE(seen[0].after);
  EXPECT_EQ(seen[0].after->state, RunState::Reaping);
  EXPECT_EQ(seen[1].cause_before, std::nullopt);
  EXPECT_EQ(seen[1].cause_after, Cause::Cancelled);
  ASSERT_TRUE(seen[2].before && seen[2].after);
  EXPECT_EQ(seen[2].before->state, RunState::Reaping);
  EXPECT_EQ(seen[2].after->state, RunState::Reaped);
  EXPECT_EQ(seen[2].cause_after, Cause::Cancelled);
  ASSERT_TRUE(seen[3].before);
  EXPECT_FALSE(seen[3].after);
}

// A record the store wrote or read is answered from memory; the disk is not read again.
TEST_F(ARunStore, AnswersFromMemoryWhatItWroteWithoutReadingTheFileAgain) {
  test::save(store, record_of("r1"));
  write(in_runs("r1/lifecycle.json"), "not a record");
  auto r = test::load(store, "r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->unit, record_of("r1").unit);
  store.drop_memory();
  expect_error(store.load("r1"), store_error::Corrupt, "not valid JSON");
}

TEST_F(ARunStore, ReadsARunItDoesNotHoldFromTheDiskAndKeepsIt) {
  std::filesystem::create_directory(in_runs("r1"));
  write(in_runs("r1/lifecycle.json"), to_json_text(record_of("r1")));
  EXPECT_FALSE(store.holds("r1"));
  ASSERT_TRUE(test::load(store, "r1"));
  EXPECT_TRUE(store.holds("r1"));
  EXPECT_THAT(store.in_memory(), ElementsAre("r1"));
}

TEST_F(ARunStore, KeepsNoUnreadableRecordInMemory) {
  std::filesystem::create_directory(in_runs("r1"));
  write(in_runs("r1/lifecycle.json"), "{");
  expect_error(store.load("r1"), store_error::Corrupt, "not valid JSON");
  EXPECT_FALSE(store.holds("r1"));
  write(in_runs("r1/lifecycle.json"), to_json_text(record_of("r1")));
  EXPECT_TRUE(test::load(store, "r1"));
}

TEST_F(ARunStore, ReloadsEveryRunFolderIntoMemory) {
  for (const char* run : {"r2", "r10"}) test::save(store, record_of(run));
  std::filesystem::create_directory(in_runs("bad"));
  write(in_runs("bad/lifecycle.json"), "{");
  std::filesystem::create_directory(in_runs("behind"));
  write(in_runs("behind/lifecycle.json"), to_json_text(record_of("behind")));
  write(in_runs("r2/lifecycle.json"), to_json_text(record_of("r2")).replace(0, 1, "[ "));  // now unreadable
  EXPECT_THAT(store.reload().value(), ElementsAre("bad", "behind", "r10", "r2"));
  EXPECT_THAT(store.in_memory(), ElementsAre("behind", "r10"));
}

TEST_F(ARunStore, ForgetsARunItQuarantinedOrRemoved) {
  test::save(store, record_of("r1"));
  test::save(store, record_of("r2"));
  ASSERT_TRUE(store.quarantine("r1"));
  ASSERT_TRUE(store.remove("r2"));
  EXPECT_THAT(store.in_memory(), IsEmpty());
}

TEST_F(ARunStore, KeepsASummaryOfTheReceiptReadOnce) {
  test::save(store, record_of("r1"));
  EXPECT_EQ(store.receipt_summary("r1").file, ReceiptFile::Absent);
  Receipt receipt = receipt_of("r1");
  receipt.cause = Cause::Timeout;
  receipt.reaped_at = "2026-11-02T09:20:44.050Z";
  test::save(store, receipt);
  ReceiptSummary s = store.receipt_summary("r1");
  EXPECT_EQ(s.file, ReceiptFile::Present);
  EXPECT_EQ(s.outcome, Outcome::Complete);
  EXPECT_EQ(s.cause, Cause::Timeout);
  EXPECT_EQ(s.reaped_at, parse_rfc3339("2026-11-02T09:20:44.050Z"));
  write(in_runs("r1/receipt.json"), "{");
  EXPECT_EQ(store.receipt_summary("r1").file, ReceiptFile::Present) << "the receipt was read again";
}

TEST_F(ARunStore, ReadsTheReceiptOfARunFirstLoadedOnce) {
  std::filesystem::create_directory(in_runs("r1"));
  write(in_runs("r1/lifecycle.json"), to_json_text(record_of("r1")));
  write(in_runs("r1/receipt.json"), "{");
  ASSERT_TRUE(test::load(store, "r1"));
  EXPECT_EQ(store.receipt_summary("r1").file, ReceiptFile::Unreadable);
}

TEST_F(ARunStore, WritesLazilyWhatIsAsReadableAsADurableWrite) {
  Record r = record_of("r1");
  ASSERT_TRUE(store.save(r, Sync::Lazy));
  Receipt receipt = receipt_of("r1");
  ASSERT_TRUE(store.save_receipt(receipt, Sync::Lazy));
  store.drop_memory();
  EXPECT_EQ(test::load(store, "r1")->unit, r.unit);
  EXPECT_EQ(test::load_receipt(store, "r1")->outcome, Outcome::Complete);
  EXPECT_THAT(list_folder_names(in_runs("r1")), UnorderedElementsAre("lifecycle.json", "receipt.json"))
      << "no temporary file is left";
}

TEST(TheDefaultRunsFolder, IsUnderXdgStateHome) {
  ScopedEnv xdg("XDG_STATE_HOME", "/xdg/state");
  EXPECT_EQ(default_runs_dir(), "/xdg/state/nerve/runs");
}

TEST(TheDefaultRunsFolder, IsUnderHomeWhenXdgStateHomeIsNotAnAbsolutePath) {
  ScopedEnv xdg("XDG_STATE_HOME", "relative/state");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(default_runs_dir(), "/home/someone/.local/state/nerve/runs");
}

// docs/records.md, "Write order": only the intent and the fence wait for the disk.
TEST(ARecordTransition, IsDurableForTheIntentAndTheFenceOnly) {
  EXPECT_EQ(RunRecords::sync_for(RunState::Launching), Sync::Durable);
  EXPECT_EQ(RunRecords::sync_for(RunState::Reaping), Sync::Durable);
  EXPECT_EQ(RunRecords::sync_for(RunState::Running), Sync::Lazy);
  EXPECT_EQ(RunRecords::sync_for(RunState::Failed), Sync::Lazy);
  EXPECT_EQ(RunRecords::sync_for(RunState::Reaped), Sync::Lazy);
}

TEST_F(ARunStore, TellsALoadOfRunRecordsWhyItFailed) {
  RunRecords records{store};
  auto none = records.load_telling_why("r1");
  ASSERT_TRUE(none.record);
  EXPECT_EQ(*none.record, std::nullopt);
  EXPECT_EQ(none.failure, std::nullopt);

  test::save(store, record_of("r1"));
  auto found = records.load_telling_why("r1");
  ASSERT_TRUE(found.record && *found.record);
  EXPECT_EQ((*found.record)->run, "r1");
  EXPECT_EQ(found.failure, std::nullopt);

  std::filesystem::create_directory(in_runs("r2"));
  write(in_runs("r2/lifecycle.json"), "not json");
  auto corrupt = records.load_telling_why("r2");
  expect_error(corrupt.record, error::RecordFailed, "the record of run 'r2' is unreadable");
  EXPECT_EQ(corrupt.failure, LoadFailure::Corrupt);

  std::filesystem::create_directories(in_runs("r3/lifecycle.json"));  // a folder where the file should be
  auto io = records.load_telling_why("r3");
  expect_error(io.record, error::RecordFailed, "cannot be read");
  EXPECT_EQ(io.failure, LoadFailure::Io);
  expect_error(records.load("r3"), error::RecordFailed, "cannot be read");
}
