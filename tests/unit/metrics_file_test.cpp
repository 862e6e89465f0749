// SPDX-License-Identifier: LGPL-2.1-or-later
#include "doubles.h"
#include "temp_dir.h"
#include "base/defaults.h"
#include "nerved/metrics_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nerve;
using namespace nerve::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

class AMetricsFile : public ::testing::Test {
 protected:
  TempDir tmp;
  ManualTimers timers;
  int made = 0;  // texts made so far: the file's content is "text N"
  std::unique_ptr<MetricsFile> file = std::make_unique<MetricsFile>(
      timers, tmp / "nerve.prom", seconds(5), [this] { return "text " + std::to_string(++made) + "\n"; });

  std::string content() {
    std::ifstream in(tmp / "nerve.prom");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

}  // namespace

TEST_F(AMetricsFile, IsWrittenAtStartWithMode0644AndNoTemporaryFileLeft) {
  file->start();
  EXPECT_EQ(content(), "text 1\n");
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "nerve.prom").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(AMetricsFile, WritesAChangeAtOnceWhenTheLastWriteIsOldEnough) {
  file->start();
  timers.advance(seconds(6));
  file->changed();
  timers.advance(milliseconds(0));
  EXPECT_EQ(content(), "text 2\n");
}

TEST_F(AMetricsFile, WritesABurstOfChangesOnceWhenTheIntervalHasPassed) {
  file->start();
  for (int i = 0; i < 100; ++i) file->changed();
  timers.advance(milliseconds(4999));
  EXPECT_EQ(content(), "text 1\n");
  timers.advance(milliseconds(1));
  EXPECT_EQ(content(), "text 2\n");
  EXPECT_EQ(file->writes(), 2u);
}

TEST_F(AMetricsFile, IsRewrittenWhenNothingChangesSoItStaysFresh) {
  file->start();
  timers.advance(kMetricsRefresh);
  EXPECT_EQ(content(), "text 2\n");
}

TEST_F(AMetricsFile, TriesAgainAfterAFailedWrite) {
  std::filesystem::remove_all(tmp.path());
  file->start();
  EXPECT_EQ(file->writes(), 0u);
  std::filesystem::create_directory(tmp.path());
  file->changed();
  timers.advance(seconds(5));
  EXPECT_EQ(file->writes(), 1u);
  EXPECT_FALSE(content().empty());
}

TEST_F(AMetricsFile, IsRemovedWhenNervedStops) {
  file->start();
  file.reset();
  EXPECT_FALSE(std::filesystem::exists(tmp / "nerve.prom"));
}
