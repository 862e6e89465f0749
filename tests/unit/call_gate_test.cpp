// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bus/call_gate.h"

#include "doubles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace nerve;
using ::testing::ElementsAre;

namespace {

class ACallGate : public ::testing::Test {
 protected:
  test::ManualTimers timers;
  CallGate gate{timers, 3};
  std::vector<std::string> served;

  void queue(const std::string& sender, const std::string& call) {
    gate.queue(sender, [this, call] { served.push_back(call); });
  }
  void turn() { timers.advance(Clock::duration::zero()); }
};

}  // namespace

TEST_F(ACallGate, AdmitsUpToItsLimitPerSenderAndAgainOnceATicketGoes) {
  auto a1 = gate.admit(":1.1"), a2 = gate.admit(":1.1"), a3 = gate.admit(":1.1");
  EXPECT_TRUE(a1 && a2 && a3);
  EXPECT_EQ(gate.admit(":1.1"), nullptr);
  EXPECT_NE(gate.admit(":1.2"), nullptr) << "another sender has its own limit";
  a2.reset();
  EXPECT_EQ(gate.in_flight(":1.1"), 2u);
  EXPECT_NE(gate.admit(":1.1"), nullptr);
}

TEST_F(ACallGate, ServesQueuedCallsOnALaterTurnOneSenderAfterTheOther) {
  for (int i = 0; i < 5; ++i) queue(":1.flood", "f" + std::to_string(i));
  queue(":1.other", "o0");
  EXPECT_TRUE(served.empty()) << "queued work waits for a turn of the loop";
  turn();
  EXPECT_THAT(served, ElementsAre("f0", "o0", "f1", "f2", "f3", "f4"));
}

TEST_F(ACallGate, ServesAtMostABatchPerTurnSoTheLoopGoesOnBetween) {
  for (std::size_t i = 0; i < CallGate::kServedPerTurn + 5; ++i) queue(":1.flood", "f");
  std::size_t seen_between = 0;  // a timer of the loop, due after the gate's first turn
  timers.add_timer(Clock::duration::zero(), [&] { seen_between = served.size(); });
  turn();
  EXPECT_EQ(seen_between, CallGate::kServedPerTurn);
  EXPECT_EQ(served.size(), CallGate::kServedPerTurn + 5);
}

TEST_F(ACallGate, ACallThatThrowsIsLoggedAndTheOthersAreServed) {
  gate.queue(":1.1", [] { throw std::runtime_error("boom"); });
  queue(":1.2", "x");
  turn();
  EXPECT_THAT(served, ElementsAre("x"));
}
