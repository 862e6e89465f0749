// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/run_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <new>

using namespace nerve;
using ::testing::ElementsAre;

namespace {

// Submits ops that note their start and keep their release function for the test to call.
class ARunQueue : public ::testing::Test {
 protected:
  RunQueue queue;
  std::vector<std::string> started;
  std::map<std::string, std::function<void()>> release;

  void submit(const std::string& run, const std::string& op) {
    queue.submit(run, [this, op](std::function<void()> done) {
      started.push_back(op);
      release[op] = std::move(done);
    });
  }
};

}  // namespace

TEST_F(ARunQueue, StartsTheFirstOpOfARunAtOnce) {
  submit("r1", "a");
  EXPECT_THAT(started, ElementsAre("a"));
  EXPECT_TRUE(queue.busy("r1"));
}

TEST_F(ARunQueue, RunsTheOpsOfOneRunOneAtATimeInOrder) {
  submit("r1", "a");
  submit("r1", "b");
  submit("r1", "c");
  EXPECT_THAT(started, ElementsAre("a"));
  release["a"]();
  EXPECT_THAT(started, ElementsAre("a", "b"));
  release["b"]();
  EXPECT_THAT(started, ElementsAre("a", "b", "c"));
}

TEST_F(ARunQueue, RunsTheOpsOfDifferentRunsIndependently) {
  submit("r1", "a");
  submit("r2", "b");
  EXPECT_THAT(started, ElementsAre("a", "b"));
  release["b"]();
  EXPECT_TRUE(queue.busy("r1"));
  EXPECT_FALSE(queue.busy("r2"));
}

TEST_F(ARunQueue, IgnoresASecondReleaseOfTheSameOp) {
  submit("r1", "a");
  submit("r1", "b");
  submit("r1", "c");
  release["a"]();
  release["a"]();
  EXPECT_THAT(started, ElementsAre("a", "b"));
  EXPECT_TRUE(queue.busy("r1"));
}

TEST_F(ARunQueue, IgnoresAReleaseThatComesAfterTheRunWasIdleAndBusyAgain) {
  submit("r1", "a");
  release["a"]();
  submit("r1", "b");
  submit("r1", "c");
  release["a"]();
  EXPECT_THAT(started, ElementsAre("a", "b"));
}

TEST_F(ARunQueue, IsIdleOnceEveryOpIsReleased) {
  submit("r1", "a");
  submit("r1", "b");
  release["a"]();
  release["b"]();
  EXPECT_FALSE(queue.busy("r1"));
}

TEST_F(ARunQueue, StartsTheNextOpAtOnceWhenAnOpReleasesWhileItRuns) {
  std::vector<std::string> order;
  queue.submit("r1", [&](std::function<void()> done) {
    order.push_back("a");
    done();
  });
  queue.submit("r1", [&](std::function<void()> done) {
    order.push_back("b");
    done();
  });
  EXPECT_THAT(order, ElementsAre("a", "b"));
  EXPECT_FALSE(queue.busy("r1"));
}

TEST_F(ARunQueue, ReleasesASerialOpsSlotBeforeItPassesItsAnswerOn) {
  std::vector<std::string> order;
  std::function<void(int)> finish;
  queue.serial<int>("r1", [&](std::function<void(int)> f) { finish = std::move(f); },
                    [&](int answer) { order.push_back("answer " + std::to_string(answer) + (queue.busy("r1") ? " busy" : " idle")); });
  EXPECT_TRUE(queue.busy("r1"));
  finish(7);
  EXPECT_THAT(order, ElementsAre("answer 7 idle"));
}

TEST_F(ARunQueue, ReleasesASerialOpsSlotWhenTheOpDropsItsFinishUncalled) {
  queue.serial<int>("r1", [](std::function<void(int)>) {}, [](int) { FAIL() << "no answer was given"; });
  submit("r1", "next");
  EXPECT_THAT(started, ElementsAre("next"));
}

// A release that outlives its queue must not act on whatever is in the queue's place by then. The
// queue in its place here is a new one in the same storage, with the same run busy: a release that
// touched it would end that run's op and start the next, which the test sees (rather than a crash).
TEST_F(ARunQueue, IgnoresAReleaseAfterTheQueueIsGone) {
  alignas(RunQueue) unsigned char storage[sizeof(RunQueue)];
  std::function<void()> late;
  auto* gone = new (storage) RunQueue;
  gone->submit("r1", [&](std::function<void()> release) { late = std::move(release); });
  gone->~RunQueue();

  auto* in_its_place = new (storage) RunQueue;
  bool next_started = false;
  in_its_place->submit("r1", [](std::function<void()>) {});
  in_its_place->submit("r1", [&](std::function<void()>) { next_started = true; });
  late();
  EXPECT_TRUE(in_its_place->busy("r1"));
  EXPECT_FALSE(next_started) << "the gone queue's release ended an op of the queue in its place";
  in_its_place->~RunQueue();
}
