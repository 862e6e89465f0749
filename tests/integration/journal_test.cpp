// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved under systemd logs to the journal with the run's fields. journald does not run under the
// harness, so the test is the journal: it binds a datagram socket at /run/systemd/journal/socket
// (on the harness's private tmpfs /run/systemd) and starts nerved with stderr to a file whose
// dev:ino is JOURNAL_STREAM, as systemd does for a service.
#include "nerved_fixture.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;

const char* const kSocket = "/run/systemd/journal/socket";

class NervedUnderSystemd : public NervedTest {
 protected:
  void TearDown() override {
    stop_reading();
    if (sock_ >= 0) ::close(sock_);
    ::unlink(kSocket);
    NervedTest::TearDown();
  }
  // Reads the socket from now on, as journald would: a datagram socket holds only
  // net.unix.max_dgram_qlen (10 here) unread entries, after which nerved's next log line would wait.
  void start_reading() {
    reader_ = std::thread([this] {
      char buf[65536];
      pollfd p{sock_, POLLIN, 0};
      while (!stop_) {
        if (::poll(&p, 1, 50) <= 0) continue;
        ssize_t n = ::recv(sock_, buf, sizeof buf, 0);
        if (n <= 0) break;
        std::lock_guard lock(mu_);
        got_.emplace_back(buf, static_cast<std::size_t>(n));
      }
    });
  }
  void stop_reading() {
    stop_ = true;
    if (reader_.joinable()) reader_.join();
  }
  // The entries received so far: nerved sends a line before it answers the call that logged it, so
  // what is queued now is all there is.
  std::vector<std::string> entries() {
    stop_reading();
    char buf[65536];
    ssize_t n;
    while ((n = ::recv(sock_, buf, sizeof buf, MSG_DONTWAIT)) > 0) got_.emplace_back(buf, static_cast<std::size_t>(n));
    return got_;
  }
  int sock_ = -1;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> got_;
};

TEST_F(NervedUnderSystemd, LogsToTheJournalWithTheRunsUnitAndMessageIds) {
  if (::mkdir("/run/systemd/journal", 0755) < 0 && errno != EEXIST)
    GTEST_SKIP() << "cannot make /run/systemd/journal here (" << std::strerror(errno) << ")";
  sock_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(sock_, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, kSocket);
  ::unlink(kSocket);
  ASSERT_EQ(::bind(sock_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  ::chmod(kSocket, 0666);
  start_reading();

  stop_nerved();
  struct stat st {};
  ASSERT_EQ(::stat(nerved_log_.c_str(), &st), 0);
  std::string stream = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  ASSERT_NO_FATAL_FAILURE(start_nerved({{"JOURNAL_STREAM", stream}}));
  Output launched = ctl({"launch", "--grace", kShortGraceArg, "j1", "--", "true"});
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  Output reaped = ctl({"reap", "--grace", kShortGraceArg, "j1"});
  ASSERT_EQ(reaped.exit_code, 0) << reaped.out << reaped.err;
  Record r = record("j1");

  std::string contained, reap;
  for (const auto& e : entries()) {
    if (e.find("MESSAGE_ID=e78403b11ed74fcab95b19789a5780e9\n") != std::string::npos) contained = e;
    if (e.find("MESSAGE_ID=57db9560f0614451ac3607a8b56f472f\n") != std::string::npos) reap = e;
  }
  ASSERT_FALSE(contained.empty()) << "no launch entry among " << got_.size() << " entries";
  EXPECT_THAT(contained, HasSubstr("USER_UNIT=" + r.unit + "\n"));
  EXPECT_THAT(contained, HasSubstr("NERVE_RUN=j1\n"));
  EXPECT_THAT(contained, HasSubstr("NERVE_ATTEMPT=1\n"));
  EXPECT_THAT(contained, HasSubstr("NERVE_INVOCATION_ID=" + r.invocation_id + "\n"));
  EXPECT_THAT(contained, HasSubstr("PRIORITY=6\n"));
  EXPECT_THAT(contained, HasSubstr("SYSLOG_IDENTIFIER=nerved\n"));
  ASSERT_FALSE(reap.empty()) << "no reap entry";
  EXPECT_THAT(reap, HasSubstr("USER_UNIT=" + r.unit + "\n"));
  EXPECT_EQ(read_file(nerved_log_).value_or("").find("run j1"), std::string::npos)
      << "under systemd the lines go to the journal, not to stderr";
}

}  // namespace
}  // namespace nerve::itest
