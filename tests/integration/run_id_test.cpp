// SPDX-License-Identifier: LGPL-2.1-or-later
// Bad run ids: refused by nervectl as a usage error, and by nerved itself when a client skips that
// check, with the value quoted, and without a file made anywhere.
#include "nerved_fixture.h"

#include <gmock/gmock.h>
#include <sdbus-c++/sdbus-c++.h>

#include <filesystem>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;

struct BadId {
  std::string id;
  std::string quoted;  // as the messages must show it
};

const std::vector<BadId>& bad_ids() {
  static const std::vector<BadId> ids = {
      {"", "''"},
      {"../x", "'../x'"},
      {"a/b", "'a/b'"},
      {std::string(200, 'a'), "'" + std::string(200, 'a') + "'"},
      {".hidden", "'.hidden'"},
      {"a\nb", "'a\\nb'"},
  };
  return ids;
}

class AnInvalidRunId : public NervedTest {};

TEST_F(AnInvalidRunId, IsAUsageErrorOfNervectlForEveryVerb) {
  std::string touched = path("touched");
  auto tmp_before = list_folder(tmp_);
  for (const auto& bad : bad_ids()) {
    SCOPED_TRACE("run id " + bad.quoted);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"launch", bad.id, "--", kEscaper, "--touch", touched},
             {"launch", "--grace", kShortGraceArg, bad.id, "--", kEscaper, "--touch", touched},
             {"reap", bad.id},
             {"status", bad.id},
         }) {
      SCOPED_TRACE("nervectl " + args[0]);
      Output o = ctl(args);
      EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
      EXPECT_THAT(o.err, HasSubstr("invalid run id " + bad.quoted));
      EXPECT_THAT(o.err, HasSubstr("Usage: nervectl " + args[0]));
    }
  }
  EXPECT_FALSE(std::filesystem::exists(touched)) << "a command ran under an invalid run id";
  EXPECT_THAT(list_folder(runs_), ::testing::IsEmpty());
  EXPECT_THAT(list_folder(state_), ::testing::ElementsAre("runs"));
  EXPECT_EQ(list_folder(tmp_), tmp_before);
}

TEST_F(AnInvalidRunId, IsRefusedByNervedOverTheBusAndNothingIsCreated) {
  auto tmp_before = list_folder(tmp_);
  auto top_before = list_folder("/tmp");
  for (const auto& bad : bad_ids()) {
    SCOPED_TRACE("run id " + bad.quoted);
    for (const char* method : {"Contain", "Reap", "GetRun", "Forget"}) {
      SCOPED_TRACE(method);
      BusReply r = call_nerved(method, bad.id);
      EXPECT_EQ(r.failure, "");
      EXPECT_EQ(r.error_name, "org.nerve.Lifecycle1.Error.InvalidRunId") << r.error_message;
      EXPECT_THAT(r.error_message, HasSubstr(bad.quoted));
    }
  }
  EXPECT_TRUE(alive(nerved_pid_)) << "nerved did not survive the bad run ids";
  EXPECT_EQ(call_nerved("ListRuns", "").error_name, "") << "nerved no longer answers";
  EXPECT_THAT(list_folder(runs_), ::testing::IsEmpty());
  EXPECT_THAT(list_folder(state_), ::testing::ElementsAre("runs")) << "something was made next to the runs folder";
  EXPECT_EQ(list_folder(tmp_), tmp_before);
  // "../x" from the runs folder is state/x; "x" and "a" must not appear in /tmp either.
  auto top_after = list_folder("/tmp");
  for (const char* name : {"x", "a", "b"}) {
    bool before = std::count(top_before.begin(), top_before.end(), name) > 0;
    bool after = std::count(top_after.begin(), top_after.end(), name) > 0;
    EXPECT_EQ(after, before) << "/tmp/" << name;
  }
}

// The other arguments of Contain are checked by nerved too, before anything is made.
TEST_F(AnInvalidRunId, IsNotTheOnlyBadArgumentNervedRefusesOverTheBus) {
  using Options = std::map<std::string, sdbus::Variant>;
  const char* iface = "org.nerve.Lifecycle1.Manager";
  struct Case {
    const char* what;
    std::uint64_t grace_usec;  // sdbus needs the exact type: t
    Options options;
    const char* must_mention;
  };
  const std::vector<Case> cases = {
      {"a grace over one hour", 3600ull * 1'000'000 + 1, {}, "3600000001"},
      {"an unknown option", 0, {{"frobnicate", sdbus::Variant(true)}}, "'frobnicate'"},
      {"keep that is not a boolean", 0, {{"keep", sdbus::Variant(std::string("yes"))}}, "keep"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    BusReply r = call_nerved([&](sdbus::IProxy& proxy) {
      proxy.callMethod("Contain").onInterface(iface).withArguments(std::string("r1"), c.grace_usec, c.options);
    });
    EXPECT_EQ(r.failure, "");
    EXPECT_EQ(r.error_name, "org.nerve.Lifecycle1.Error.InvalidArgument") << r.error_message;
    EXPECT_THAT(r.error_message, HasSubstr(c.must_mention));
  }
  BusReply reap = call_nerved([&](sdbus::IProxy& proxy) {
    proxy.callMethod("Reap").onInterface(iface).withArguments(std::string("r1"), std::uint64_t{3600ull * 1'000'000 + 1});
  });
  EXPECT_EQ(reap.error_name, "org.nerve.Lifecycle1.Error.InvalidArgument") << reap.error_message;
  EXPECT_THAT(list_folder(runs_), ::testing::IsEmpty()) << "a refused Contain left a record";
}

}  // namespace
}  // namespace nerve::itest
