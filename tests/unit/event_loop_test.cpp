// SPDX-License-Identifier: LGPL-2.1-or-later
// EventLoop: a ready event is delivered only to the watch it was reported for, never to a later
// watch that got the same fd number.
#include "system/event_loop.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <stdexcept>

namespace nerve {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) throw std::runtime_error("pipe2");
    r = p[0];
    w = p[1];
  }
};

// Two fds are ready in one epoll_wait. The first callback closes the second fd and a new fd gets
// its number and a new callback: the second fd's event of that same turn is stale and must not
// reach the new callback (its fd is not ready at all).
TEST(EventLoop, AStaleEventForAReusedFdNumberIsNotDeliveredToTheNewWatch) {
  EventLoop loop;
  Pipe a, b;
  int new_calls = 0;
  ASSERT_EQ(::write(a.w, "x", 1), 1);
  ASSERT_EQ(::write(b.w, "x", 1), 1);
  int reused = -1, reused_w = -1;
  loop.watch_fd(a.r, EPOLLIN, [&](std::uint32_t) {
    loop.unwatch_fd(a.r);
    loop.unwatch_fd(b.r);
    ::close(b.r);
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);  // gets b.r's number: the lowest free one
    reused = p[0];
    reused_w = p[1];  // kept open and never written: the new fd is never ready
    loop.watch_fd(reused, EPOLLIN, [&](std::uint32_t) { ++new_calls; });
    loop.add_timer(std::chrono::milliseconds(50), [&] { loop.stop(); });
  });
  loop.watch_fd(b.r, EPOLLIN, [&](std::uint32_t) { ADD_FAILURE() << "b's callback after it was unwatched"; });
  loop.run();
  ASSERT_EQ(reused, b.r) << "the new fd did not reuse the number; the test proves nothing";
  EXPECT_EQ(new_calls, 0) << "the stale event of the closed fd reached the new callback";
  loop.unwatch_fd(reused);
  ::close(reused);
  ::close(reused_w);
  ::close(a.r);
  ::close(a.w);
  ::close(b.w);
}

}  // namespace
}  // namespace nerve
