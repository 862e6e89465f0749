// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/durable_file.h"

#include "temp_dir.h"

#include <fcntl.h>
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

namespace {

class ADurableFile : public ::testing::Test {
 protected:
  TempDir tmp;
  Fd dir = open_dir_path(tmp.path(), IfMissing::Fail);

  static mode_t mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path())) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string content_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
};

}  // namespace

TEST_F(ADurableFile, IsWrittenWithMode0600) {
  write_file_atomic(dir.get(), "f", "hello", tmp / "f");
  EXPECT_EQ(content_of(tmp / "f"), "hello");
  EXPECT_EQ(mode_of(tmp / "f"), 0600u);
}

TEST_F(ADurableFile, LeavesNoTemporaryFileBehind) {
  write_file_atomic(dir.get(), "f", "one", tmp / "f");
  write_file_atomic(dir.get(), "f", "two", tmp / "f");
  EXPECT_THAT(entries(), ElementsAre("f"));
}

TEST_F(ADurableFile, ReplacesTheWholeOldContent) {
  write_file_atomic(dir.get(), "f", "a much longer first content", tmp / "f");
  write_file_atomic(dir.get(), "f", "short", tmp / "f");
  EXPECT_EQ(content_of(tmp / "f"), "short");
}

TEST_F(ADurableFile, IsReadBackWhole) {
  const std::string big(100'000, 'x');
  write_file_atomic(dir.get(), "f", big, tmp / "f");
  EXPECT_EQ(read_file_at(dir.get(), "f", tmp / "f"), big);
}

TEST_F(ADurableFile, ReadsAsNothingWhenMissing) { EXPECT_EQ(read_file_at(dir.get(), "nope", tmp / "nope"), std::nullopt); }

TEST_F(ADurableFile, IsNotReadThroughASymlink) {
  write(tmp / "target", "secret");
  ASSERT_EQ(::symlink("target", (tmp / "f").c_str()), 0);
  EXPECT_THROW(read_file_at(dir.get(), "f", tmp / "f"), FsError);
}

TEST_F(ADurableFile, IsNotReadFromAFolder) {
  ASSERT_EQ(::mkdir((tmp / "d").c_str(), 0700), 0);
  EXPECT_THROW(read_file_at(dir.get(), "d", tmp / "d"), FsError);
}

TEST_F(ADurableFile, ThatCannotReplaceAFolderThrowsFsErrorNamingThePathAndLeavesNoTemporaryFile) {
  ASSERT_EQ(::mkdir((tmp / "f").c_str(), 0700), 0);
  try {
    write_file_atomic(dir.get(), "f", "data", tmp / "f");
    FAIL() << "no error";
  } catch (const FsError& e) {
    EXPECT_EQ(e.path(), tmp / "f");
    EXPECT_THAT(e.what(), HasSubstr("'" + tmp / "f" + "'"));
  }
  EXPECT_THAT(entries(), ElementsAre("f"));
}

TEST_F(ADurableFile, IsRemovedAndAMissingOneIsNoError) {
  write_file_atomic(dir.get(), "f", "x", tmp / "f");
  remove_file_at(dir.get(), "f", tmp / "f");
  EXPECT_FALSE(std::filesystem::exists(tmp / "f"));
  EXPECT_NO_THROW(remove_file_at(dir.get(), "f", tmp / "f"));
}

TEST_F(ADurableFile, FolderIsCreatedWithMode0700) {
  open_dir_at(dir.get(), "d", IfMissing::Create, tmp / "d");
  EXPECT_EQ(mode_of(tmp / "d"), 0700u);
}

TEST_F(ADurableFile, FolderIsMadeOnlyWhenMissingAndCreateIsAsked) {
  try {
    open_dir_at(dir.get(), "d", IfMissing::Fail, tmp / "d");
    FAIL() << "a missing folder was opened";
  } catch (const FsError& e) {
    EXPECT_EQ(e.err(), ENOENT);
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "d"));
  EXPECT_EQ(open_dir_at(dir.get(), "d", IfMissing::Create, tmp / "d").folder, Folder::Created);
  EXPECT_EQ(open_dir_at(dir.get(), "d", IfMissing::Create, tmp / "d").folder, Folder::Found);
  EXPECT_EQ(open_dir_at(dir.get(), "d", IfMissing::Fail, tmp / "d").folder, Folder::Found);
}

TEST_F(ADurableFile, FolderPathIsNotMadeWithoutCreate) {
  EXPECT_THROW(open_dir_path(tmp / "a/b", IfMissing::Fail), FsError);
  EXPECT_FALSE(std::filesystem::exists(tmp / "a"));
}

TEST_F(ADurableFile, FolderThatExistsIsOpenedAsItIs) {
  ASSERT_EQ(::mkdir((tmp / "d").c_str(), 0700), 0);
  ASSERT_EQ(::chmod((tmp / "d").c_str(), 0755), 0);
  auto [d, folder] = open_dir_at(dir.get(), "d", IfMissing::Create, tmp / "d");
  EXPECT_TRUE(d);
  EXPECT_EQ(folder, Folder::Found);
  EXPECT_EQ(mode_of(tmp / "d"), 0755u);
}

TEST_F(ADurableFile, FolderThatIsASymlinkIsRefused) {
  ASSERT_EQ(::mkdir((tmp / "elsewhere").c_str(), 0700), 0);
  ASSERT_EQ(::symlink("elsewhere", (tmp / "run1").c_str()), 0);
  for (IfMissing if_missing : {IfMissing::Fail, IfMissing::Create}) {
    try {
      open_dir_at(dir.get(), "run1", if_missing, tmp / "run1");
      FAIL() << "a symlink was opened as a folder";
    } catch (const FsError& e) {
      EXPECT_THAT(e.err(), AnyOf(ELOOP, ENOTDIR));
      EXPECT_EQ(e.path(), tmp / "run1");
    }
  }
}

TEST_F(ADurableFile, FolderPathThroughARegularFileThrowsFsErrorNamingIt) {
  write(tmp / "file", "");
  try {
    open_dir_path(tmp / "file/runs", IfMissing::Create);
    FAIL() << "no error";
  } catch (const FsError& e) {
    EXPECT_EQ(e.err(), ENOTDIR);
    EXPECT_EQ(e.path(), tmp / "file");
  }
}

TEST_F(ADurableFile, FolderPathIsMadeWithEveryMissingFolder) {
  Fd d = open_dir_path(tmp / "a/b/c", IfMissing::Create);
  EXPECT_TRUE(d);
  EXPECT_EQ(mode_of(tmp / "a/b"), 0700u);
  EXPECT_EQ(mode_of(tmp / "a/b/c"), 0700u);
}

TEST_F(ADurableFile, FolderPathMustBeAbsolute) { EXPECT_THROW(open_dir_path("relative/runs", IfMissing::Create), FsError); }

TEST(AnFsError, NamesThePathAndTheCause) {
  FsError e("cannot create", "/x/y", ENOSPC);
  EXPECT_STREQ(e.what(), "cannot create '/x/y': No space left on device");
  EXPECT_EQ(e.path(), "/x/y");
  EXPECT_EQ(e.err(), ENOSPC);
}
