// SPDX-License-Identifier: LGPL-2.1-or-later
// A host with neither backend: no user manager on the session bus and a read-only cgroup2 mount (as
// default Docker and Kubernetes give). nerved does not start, and says why and the one fix for this
// kind of host; `nervectl doctor` fails its backend check with the same fix. Never a silent downgrade.
//
// Made from the harness's --no-manager pass (a session bus without a user manager): a mount
// namespace of the test's own where /sys/fs/cgroup is a read-only bind of itself (a per-mount flag:
// the cgroup2 superblock, which the whole machine shares, is not touched). Skipped, visibly, under a
// user manager (auto would pick it).
#include "nerved_fixture.h"
#include "backend_view.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>

namespace nerve::itest {
namespace {

using ::testing::HasSubstr;

class NoBackend : public NervedTest {
 protected:
  void SetUp() override {
    if (!cgroup_backend()) GTEST_SKIP() << "needs a session bus without a user manager: runs in the --no-manager pass";
    NervedTest::SetUp();
  }
  // ARGV run in a new mount namespace whose cgroup2 mount is read-only (as root, or as root of a user
  // namespace of its own for any other account).
  Output with_read_only_cgroups(const std::vector<std::string>& argv) {
    std::string mount = std::getenv("NERVE_CGROUP_ROOT") ? std::getenv("NERVE_CGROUP_ROOT") : "/sys/fs/cgroup";
    std::string script = "mount --bind " + mount + " " + mount + " && mount -o remount,bind,ro " + mount +
                         " && exec \"$@\"";
    std::vector<std::string> full = {"unshare", "--mount", "--propagation", "private"};
    if (::geteuid() != 0) full.insert(full.begin() + 1, "--map-root-user");
    for (const auto& a : std::vector<std::string>{"/bin/sh", "-c", script, "sh"}) full.push_back(a);
    full.insert(full.end(), argv.begin(), argv.end());
    SpawnSpec spec = command(full);
    return run(spec, milliseconds{30'000});
  }
};

TEST_F(NoBackend, NervedDoesNotStartAndSaysWhyAndTheFix) {
  Output o = with_read_only_cgroups({kNerved, "--runs-dir", path("ro-runs")});
  if (o.exit_code != 1 && o.err.find("unshare") != std::string::npos)
    GTEST_SKIP() << "cannot make a mount namespace here: " << o.err;
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_FALSE(o.timed_out) << "nerved started and ran: " << o.err;
  EXPECT_THAT(o.err, HasSubstr("no run can be contained here"));
  EXPECT_THAT(o.err, HasSubstr("no user manager answers"));
  EXPECT_THAT(o.err, HasSubstr("is read-only"));
  EXPECT_THAT(o.err, HasSubstr("The fix on this host ("));
  EXPECT_THAT(o.err, HasSubstr("enable-linger"));  // and the others after it
}

TEST_F(NoBackend, DoctorFailsItsBackendCheckWithTheFixForThisHost) {
  Output o = with_read_only_cgroups({kNervectl, "doctor", "--json"});
  if (o.err.find("unshare") != std::string::npos) GTEST_SKIP() << "cannot make a mount namespace here: " << o.err;
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  auto checks = nlohmann::json::parse(o.out);
  auto backend = std::find_if(checks.begin(), checks.end(), [](const auto& c) { return c["check"] == "backend"; });
  ASSERT_NE(backend, checks.end()) << o.out;
  EXPECT_EQ((*backend)["status"], "fail") << o.out;
  EXPECT_THAT(std::string((*backend)["detail"]), HasSubstr("is read-only"));
  EXPECT_THAT(std::string((*backend)["hint"]), HasSubstr("on this host ("));
}

}  // namespace
}  // namespace nerve::itest
