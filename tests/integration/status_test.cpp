// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl status` and `nervectl list` on a live run, and after its reap (their formats and exit
// codes in detail: ctl_conventions_test.cpp).
#include "nerved_fixture.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <set>

namespace nerve::itest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class StatusAndList : public NervedTest {};

// The one entry of `list --json` (fields run, state, unit, processes, created_at, outcome), checked.
void expect_single_listed(const json& list, const std::string& state, const std::string& unit, std::size_t processes,
                          const std::string& outcome, const std::string& created_at) {
  ASSERT_EQ(list.size(), 1u) << list.dump();
  const json& r = list[0];
  EXPECT_EQ(r["run"], "r1");
  EXPECT_EQ(r["state"], state);
  EXPECT_EQ(r["unit"], unit);
  EXPECT_EQ(r["processes"], processes) << r.dump();
  EXPECT_EQ(r["created_at"], created_at);
  EXPECT_EQ(r["outcome"], outcome);
}

std::set<pid_t> pid_set(const json& pids) {
  std::set<pid_t> out;
  for (const auto& p : pids) out.insert(p.get<pid_t>());
  return out;
}

TEST_F(StatusAndList, ShowTheLivePidsOfARunningRunAndItsReceiptAfterTheReap) {
  std::string markers = path("markers");
  ASSERT_EQ(::mkdir(markers.c_str(), 0700), 0);
  ctl_background("launch", {"launch", "--grace", kShortGraceArg, "r1", "--", kEscaper, "--markers", markers});
  auto pids = await_markers(markers);
  ASSERT_EQ(pids.size(), 4u);
  std::set<pid_t> expected;
  for (const auto& [role, pid] : pids) expected.insert(pid);
  Record rec = record("r1");

  Output status = ctl({"status", "--json", "r1"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  json s = json::parse(status.out);
  EXPECT_EQ(s["record"]["state"], "running");
  EXPECT_EQ(s["record"]["unit"], rec.unit);
  EXPECT_EQ(s["record"]["invocation_id"], rec.invocation_id);
  EXPECT_TRUE(s["receipt"].is_null());
  EXPECT_EQ(s["live"]["known"], true);
  EXPECT_EQ(s["live"]["ours"], true);
  EXPECT_EQ(s["live"]["active_state"], "active");
  EXPECT_EQ(s["live"]["populated"], true);
  EXPECT_EQ(pid_set(s["live"]["pids"]), expected);

  Output human = ctl({"status", "r1"});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_THAT(human.out, HasSubstr("run r1 (attempt 1): running"));
  EXPECT_THAT(human.out, HasSubstr(rec.unit));
  for (pid_t p : expected) EXPECT_THAT(human.out, HasSubstr(std::to_string(p)));

  Output list = ctl({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.out << list.err;
  expect_single_listed(json::parse(list.out), "running", rec.unit, 4, "", rec.created_at);

  Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
  ASSERT_EQ(reap.exit_code, 0) << reap.out << reap.err;

  status = ctl({"status", "--json", "r1"});
  ASSERT_EQ(status.exit_code, 3) << "not running, as LSB: " << status.out << status.err;
  s = json::parse(status.out);
  EXPECT_EQ(s["record"]["state"], "reaped");
  ASSERT_TRUE(s["receipt"].is_object()) << status.out;
  EXPECT_EQ(s["receipt"]["outcome"], "complete");
  EXPECT_EQ(s["live"]["populated"], false);
  EXPECT_TRUE(s["live"]["pids"].empty()) << status.out;

  list = ctl({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.out << list.err;
  expect_single_listed(json::parse(list.out), "reaped", rec.unit, 0, "complete", rec.created_at);
}

TEST_F(StatusAndList, OfAnUnknownRunAndAnEmptyRunsFolder) {
  Output status = ctl({"status", "nope"});
  EXPECT_EQ(status.exit_code, 4) << "no such run, as LSB: " << status.out << status.err;
  EXPECT_THAT(status.err, HasSubstr("org.nerve.Lifecycle1.Error.NoSuchRun"));
  EXPECT_THAT(status.err, HasSubstr("'nope'"));
  Output list = ctl({"list", "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out), json::array());
  Output human = ctl({"list"});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_EQ(human.out, "No runs.\n");
}

}  // namespace
}  // namespace nerve::itest
