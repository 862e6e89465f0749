// SPDX-License-Identifier: LGPL-2.1-or-later
// The journal sink: fields of a plain line and of a line about a run (log_run), priorities from
// levels, MESSAGE_ID, and JOURNAL_STREAM matched against a file descriptor. The sink is tested
// against an injected writer: journald does not run under the test harness.
#include "system/journal.h"
#include "run/run_log.h"
#include "temp_dir.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nerve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(JournalFields, APlainLineHasMessagePriorityAndIdentifier) {
  EXPECT_THAT(journal_fields(spdlog::level::warn, "disk full", nullptr),
              ElementsAre("MESSAGE=disk full", "PRIORITY=4", "SYSLOG_IDENTIFIER=nerved"));
}

TEST(JournalFields, PrioritiesFollowSyslog) {
  EXPECT_EQ(journal_priority(spdlog::level::trace), 7);
  EXPECT_EQ(journal_priority(spdlog::level::debug), 7);
  EXPECT_EQ(journal_priority(spdlog::level::info), 6);
  EXPECT_EQ(journal_priority(spdlog::level::warn), 4);
  EXPECT_EQ(journal_priority(spdlog::level::err), 3);
  EXPECT_EQ(journal_priority(spdlog::level::critical), 2);
}

TEST(JournalFields, ALineAboutARunCarriesItsFieldsAndMessageId) {
  RunFields f{"r1", 2, "nerve-r1-0123456789abcdef.scope", "aaaa", message_id::Reap};
  EXPECT_THAT(journal_fields(spdlog::level::info, "reap complete", &f),
              ElementsAre("MESSAGE=reap complete", "PRIORITY=6", "SYSLOG_IDENTIFIER=nerved", "NERVE_RUN=r1",
                          "NERVE_ATTEMPT=2", "NERVE_INVOCATION_ID=aaaa", "USER_UNIT=nerve-r1-0123456789abcdef.scope",
                          "MESSAGE_ID=57db9560f0614451ac3607a8b56f472f"));
  RunFields only_run;
  only_run.run = "r2";
  EXPECT_THAT(journal_fields(spdlog::level::info, "x", &only_run),
              ElementsAre("MESSAGE=x", "PRIORITY=6", "SYSLOG_IDENTIFIER=nerved", "NERVE_RUN=r2"));
}

TEST(JournalSink, LogRunPassesTheRunsFieldsAndPlainLinesPassNone) {
  std::vector<std::vector<std::string>> sent;
  auto logger = std::make_shared<spdlog::logger>(
      "journal-test", make_journal_sink([&](const std::vector<std::string>& f) {
        sent.push_back(f);
        return 0;
      }));
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  Record r;
  r.run = "build.7";
  r.attempt = 1;
  r.unit = "nerve-build.7-0123456789abcdef.scope";
  r.invocation_id = "bbbb";
  log_run(spdlog::level::info, r, "pid 5 contained", message_id::Launch);
  spdlog::error("plain");
  spdlog::set_default_logger(previous);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_THAT(sent[0], ::testing::Contains("USER_UNIT=nerve-build.7-0123456789abcdef.scope"));
  EXPECT_THAT(sent[0], ::testing::Contains("MESSAGE_ID=e78403b11ed74fcab95b19789a5780e9"));
  EXPECT_THAT(sent[0], ::testing::Contains("NERVE_RUN=build.7"));
  EXPECT_THAT(sent[1], ElementsAre("MESSAGE=plain", "PRIORITY=3", "SYSLOG_IDENTIFIER=nerved"));
}

TEST(JournalStream, MatchesOnlyTheDeviceAndInodeOfTheDescriptor) {
  test::TempDir tmp;
  int fd = ::open((tmp / "f").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  std::string other = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1);
  EXPECT_TRUE(is_journal_stream(fd, mine.c_str()));
  EXPECT_FALSE(is_journal_stream(fd, other.c_str()));
  EXPECT_FALSE(is_journal_stream(fd, nullptr));
  EXPECT_FALSE(is_journal_stream(fd, ""));
  EXPECT_FALSE(is_journal_stream(fd, (mine + "x").c_str()));
  ::close(fd);
}

}  // namespace
}  // namespace nerve
