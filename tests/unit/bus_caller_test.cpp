// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/errors.h"
#include "bus/bus_caller.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

using namespace nerve;

namespace {
// Questions to the bus that the test answers when it wants.
struct FakeBus {
  std::vector<std::pair<std::string, BusCallers::Done>> asked;
  BusCallers::Ask ask() {
    return [this](const std::string& sender, BusCallers::Done done) { asked.emplace_back(sender, std::move(done)); };
  }
  void answer(std::size_t i, Result<BusCaller> caller) { asked.at(i).second(std::move(caller)); }
};

struct Got {
  std::vector<Result<BusCaller>> answers;
  BusCallers::Done done() {
    return [this](Result<BusCaller> c) { answers.push_back(std::move(c)); };
  }
};

BusCaller caller(uid_t uid, pid_t pid) { return BusCaller{uid, pid}; }
}  // namespace

TEST(BusCallers, AnswerOnlyWhenTheBusHasAnswered) {
  FakeBus bus;
  BusCallers callers(bus.ask());
  Got got;
  callers.of(":1.7", got.done());
  ASSERT_EQ(bus.asked.size(), 1u);
  EXPECT_EQ(bus.asked[0].first, ":1.7");
  EXPECT_TRUE(got.answers.empty()) << "answered before the bus did";
  bus.answer(0, caller(1000, 42));
  ASSERT_EQ(got.answers.size(), 1u);
  ASSERT_TRUE(got.answers[0].ok());
  EXPECT_EQ(got.answers[0]->uid, 1000u);
  EXPECT_EQ(got.answers[0]->pid, 42);
}

TEST(BusCallers, KeepAUniqueNameSoItsLaterCallsAskNothing) {
  FakeBus bus;
  BusCallers callers(bus.ask());
  Got got;
  callers.of(":1.7", got.done());
  bus.answer(0, caller(1000, 42));
  callers.of(":1.7", got.done());
  EXPECT_EQ(bus.asked.size(), 1u);
  ASSERT_EQ(got.answers.size(), 2u) << "a kept caller is answered at once";
  EXPECT_EQ(got.answers[1]->pid, 42);
}

TEST(BusCallers, AskOnceForCallsThatArriveBeforeTheAnswer) {
  FakeBus bus;
  BusCallers callers(bus.ask());
  Got got;
  callers.of(":1.7", got.done());
  callers.of(":1.7", got.done());
  callers.of(":1.7", got.done());
  EXPECT_EQ(bus.asked.size(), 1u);
  bus.answer(0, caller(1000, 42));
  ASSERT_EQ(got.answers.size(), 3u);
  for (auto& a : got.answers) EXPECT_EQ(a->pid, 42);
}

TEST(BusCallers, NeverKeepAWellKnownName) {
  FakeBus bus;
  BusCallers callers(bus.ask());
  Got got;
  callers.of("org.example.Engine", got.done());
  bus.answer(0, caller(1000, 42));
  callers.of("org.example.Engine", got.done());
  EXPECT_EQ(bus.asked.size(), 2u) << "a well-known name can pass to another connection";
}

TEST(BusCallers, PassAnErrorOnToEveryWaitingCallAndKeepNothing) {
  FakeBus bus;
  BusCallers callers(bus.ask());
  Got got;
  callers.of(":1.9", got.done());
  callers.of(":1.9", got.done());
  bus.answer(0, Error{"org.freedesktop.DBus.Error.NameHasNoOwner", "Could not get credentials of :1.9"});
  ASSERT_EQ(got.answers.size(), 2u);
  for (auto& a : got.answers) {
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().name, "org.freedesktop.DBus.Error.NameHasNoOwner");
  }
  callers.of(":1.9", got.done());
  EXPECT_EQ(bus.asked.size(), 2u) << "a failed question is asked again";
}

TEST(BusCallers, KeepTheLastKeptNamesAndAskAnOlderOneAgain) {
  FakeBus bus;
  BusCallers callers(bus.ask());
  Got got;
  for (std::size_t i = 0; i <= BusCallers::kKept; ++i) {
    callers.of(":1." + std::to_string(i), got.done());
    bus.answer(bus.asked.size() - 1, caller(1000, static_cast<pid_t>(i + 1)));
  }
  std::size_t asked = bus.asked.size();
  callers.of(":1." + std::to_string(BusCallers::kKept), got.done());
  EXPECT_EQ(bus.asked.size(), asked) << "the newest is kept";
  callers.of(":1.0", got.done());
  EXPECT_EQ(bus.asked.size(), asked + 1) << "the oldest went when the cache was full";
}

TEST(BusCallers, AnAnswerGivenAtOnceByTheBusIsPassedOn) {
  BusCallers callers([](const std::string&, BusCallers::Done done) { done(caller(0, 1)); });
  Got got;
  callers.of(":1.1", got.done());
  ASSERT_EQ(got.answers.size(), 1u);
  EXPECT_EQ(got.answers[0]->pid, 1);
}
