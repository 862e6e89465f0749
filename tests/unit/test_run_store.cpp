#include "run_store.h"

#include "durable_file.h"
#include "printers.h"
#include "temp_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace

TEST_F(ARunStore, MakesItsFolderWithMode0700) {
  struct stat st {};
  ASSERT_EQ(::stat(store.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(store.path(), tmp / "runs");
}

TEST_F(ARunStore, LoadsTheRecordItSaved) {
  store.save(record_of("r1"));
  auto r = store.load("r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->unit, record_of("r1").unit);
  EXPECT_EQ(r->state, RunState::Running);
}

TEST_F(ARunStore, LoadsTheReceiptItSaved) {
  store.save_receipt(receipt_of("r1"));
  auto r = store.load_receipt("r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, Outcome::Complete);
}

TEST_F(ARunStore, LoadsNothingForAnUnknownRun) {
  EXPECT_EQ(store.load("r1"), std::nullopt);
  EXPECT_EQ(store.load_receipt("r1"), std::nullopt);
}

TEST_F(ARunStore, LoadsNoReceiptForARunThatHasOnlyARecord) {
  store.save(record_of("r1"));
  EXPECT_EQ(store.load_receipt("r1"), std::nullopt);
}

TEST_F(ARunStore, KeepsRunFoldersWithMode0700AndFilesWithMode0600) {
  store.save(record_of("r1"));
  struct stat st {};
  ASSERT_EQ(::stat(in_runs("r1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(in_runs("r1/lifecycle.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(ARunStore, RefusesARecordThatNamesAnotherRun) {
  std::filesystem::create_directory(in_runs("r1"));
  write(in_runs("r1/lifecycle.json"), to_json_text(record_of("r2")));
  EXPECT_THROW(store.load("r1"), RecordCorrupt);
}

TEST_F(ARunStore, ThrowsRecordCorruptForAnUnreadableRecord) {
  std::filesystem::create_directory(in_runs("r1"));
  write(in_runs("r1/lifecycle.json"), "{\"version\": 1, \"run\": ");
  EXPECT_THROW(store.load("r1"), RecordCorrupt);
}

TEST_F(ARunStore, RefusesRunNamesThatAreNotRunIds) {
  for (const std::string& bad : std::vector<std::string>{"../x", ".hidden", "a/b", "", std::string(129, 'x')}) {
    EXPECT_THROW(store.save(record_of(bad)), FsError) << bad;
    EXPECT_THROW(store.load(bad), FsError) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "x"));
  EXPECT_THAT(store.runs(), IsEmpty());
}

TEST_F(ARunStore, DoesNotReadARecordThroughASymlinkedRunFolder) {
  ASSERT_EQ(::symlink(outside_folder_with_record_of("r1").c_str(), in_runs("r1").c_str()), 0);
  try {
    store.load("r1");
    FAIL() << "a record was read through a symlink";
  } catch (const FsError& e) {
    EXPECT_THAT(e.err(), AnyOf(ELOOP, ENOTDIR));
  }
}

TEST_F(ARunStore, DoesNotWriteThroughASymlinkedRunFolder) {
  std::filesystem::create_directory(tmp / "outside");
  ASSERT_EQ(::symlink((tmp / "outside").c_str(), in_runs("r1").c_str()), 0);
  EXPECT_THROW(store.save(record_of("r1")), FsError);
  EXPECT_THAT(std::filesystem::is_empty(tmp / "outside"), true);
}

TEST_F(ARunStore, DoesNotReadASymlinkedLifecycleJson) {
  outside_folder_with_record_of("r1");
  std::filesystem::create_directory(in_runs("r1"));
  ASSERT_EQ(::symlink((tmp / "outside/lifecycle.json").c_str(), in_runs("r1/lifecycle.json").c_str()), 0);
  EXPECT_THROW(store.load("r1"), FsError);
}

TEST_F(ARunStore, ThrowsFsErrorNamingTheRunFolderWhenAFileTakesItsPlace) {
  write(in_runs("r1"), "not a folder");
  try {
    store.save(record_of("r1"));
    FAIL() << "no error";
  } catch (const FsError& e) {
    EXPECT_EQ(e.err(), ENOTDIR);
    EXPECT_EQ(e.path(), in_runs("r1"));
    EXPECT_THAT(e.what(), HasSubstr(in_runs("r1")));
  }
}

TEST_F(ARunStore, ThrowsFsErrorNamingTheFileWhenARecordCannotBeReplaced) {
  std::filesystem::create_directories(in_runs("r1/lifecycle.json"));
  try {
    store.save(record_of("r1"));
    FAIL() << "no error";
  } catch (const FsError& e) {
    EXPECT_EQ(e.path(), in_runs("r1/lifecycle.json"));
  }
}

TEST_F(ARunStore, CannotBeOpenedUnderARegularFile) {
  write(tmp / "file", "");
  EXPECT_THROW(RunStore(tmp / "file/runs"), FsError);
}

TEST_F(ARunStore, ListsItsRunFoldersSorted) {
  for (const char* run : {"r2", "r10", "a:1"}) store.save(record_of(run));
  EXPECT_THAT(store.runs(), ElementsAre("a:1", "r10", "r2"));
}

TEST_F(ARunStore, SkipsSymlinksNonFoldersAndInvalidNamesAndReportsThem) {
  store.save(record_of("good"));
  ASSERT_EQ(::symlink(outside_folder_with_record_of("linked").c_str(), in_runs("linked").c_str()), 0);
  write(in_runs("plain"), "");
  std::filesystem::create_directory(in_runs("bad name"));
  std::vector<std::string> skipped;
  EXPECT_THAT(store.runs(&skipped), ElementsAre("good"));
  EXPECT_THAT(skipped, UnorderedElementsAre(in_runs("linked") + " is a symlink", in_runs("plain") + " is not a folder",
                                            HasSubstr(in_runs("bad name"))));
}

TEST_F(ARunStore, LeavesItsOwnDotFilesOutOfTheList) {
  std::filesystem::create_directory(in_runs(".quarantine"));
  std::vector<std::string> skipped;
  EXPECT_THAT(store.runs(&skipped), IsEmpty());
  EXPECT_THAT(skipped, IsEmpty());
}

TEST_F(ARunStore, MovesAnUnreadableRecordAndItsReceiptAsideAndSaysWhere) {
  store.save(record_of("r1"));
  store.save_receipt(receipt_of("r1"));
  const std::string moved = store.quarantine("r1");
  EXPECT_THAT(moved, ::testing::StartsWith(tmp / "runs/.quarantine/r1."));
  EXPECT_TRUE(std::filesystem::is_regular_file(moved));
  EXPECT_EQ(store.load("r1"), std::nullopt);
  EXPECT_EQ(store.load_receipt("r1"), std::nullopt);
}

TEST_F(ARunStore, RemovesTheFilesAndTheFolderOfARun) {
  store.save(record_of("r1"));
  store.save_receipt(receipt_of("r1"));
  store.remove("r1");
  EXPECT_FALSE(std::filesystem::exists(in_runs("r1")));
  EXPECT_THAT(store.runs(), IsEmpty());
}

TEST_F(ARunStore, TellsItsObserverOfEveryChange) {
  std::vector<std::string> changed;
  store.set_observer([&](const std::string& run) { changed.push_back(run); });
  store.save(record_of("r1"));
  store.save_receipt(receipt_of("r1"));
  store.quarantine("r1");
  store.remove("r1");
  EXPECT_THAT(changed, ElementsAre("r1", "r1", "r1", "r1"));
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
