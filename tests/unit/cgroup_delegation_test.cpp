// SPDX-License-Identifier: LGPL-2.1-or-later
// cgroup_subtree: which subtree the cgroup backend may take. The facts are given; the folders are a
// plain temporary folder standing in for the cgroup2 mount (the rules read only modes and marks).
#include "base/cgroup_delegation.h"

#include <gtest/gtest.h>

#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nerve {
namespace {

namespace fs = std::filesystem;

class ASubtree : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_ = (fs::temp_directory_path() / ("nerve-subtree-" + std::to_string(::getpid()))).string();
    fs::create_directories(mount_);
  }
  void TearDown() override { fs::remove_all(mount_); }

  // A cgroup folder CGROUP ("/a/b") under the stand-in mount, with its control files.
  void folder(const std::string& cgroup) {
    fs::path dir = fs::path(mount_) / cgroup.substr(1);
    fs::create_directories(dir);
    for (const char* f : {"cgroup.procs", "cgroup.subtree_control", "cgroup.threads"})
      std::ofstream(dir / f);
  }
  SubtreeFacts facts(const std::string& own, bool initial = false) const {
    return SubtreeFacts{.mount = mount_, .read_only = false, .own_cgroup = own, .initial_namespace = initial};
  }
  std::string refusal(const Result<Subtree>& r) const { return r ? std::string("taken: ") + r->root : r.error().message; }

  std::string mount_;
};

TEST_F(ASubtree, IsNervedsOwnCgroupInAPrivateNamespace) {
  folder("/");
  auto r = choose_subtree(facts("/"), "", false);
  ASSERT_TRUE(r) << refusal(r);
  EXPECT_EQ(r->root, "/");
}

TEST_F(ASubtree, IsNeverTheWholeMachineUnasked) {
  auto r = choose_subtree(facts("/", true), "", false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().name, kNoSubtree);
  EXPECT_NE(r.error().message.find("--cgroup-root /nerve"), std::string::npos) << r.error().message;
}

TEST_F(ASubtree, IsTheSameRootAgainForANervedAlreadyInItsSupervisorLeaf) {
  folder("/nerve");
  folder("/nerve/supervisor");
  auto r = choose_subtree(facts("/nerve/supervisor"), "", false);
  ASSERT_TRUE(r) << refusal(r);
  EXPECT_EQ(r->root, "/nerve");
}

TEST_F(ASubtree, IsANamedFolderGivenAsACgroupOrAsAPathUnderTheMount) {
  folder("/nerve");
  auto by_cgroup = choose_subtree(facts("/", true), "/nerve", false);
  auto by_path = choose_subtree(facts("/", true), mount_ + "/nerve/", false);
  ASSERT_TRUE(by_cgroup) << refusal(by_cgroup);
  ASSERT_TRUE(by_path) << refusal(by_path);
  EXPECT_EQ(by_cgroup->root, "/nerve");
  EXPECT_EQ(by_path->root, "/nerve");
}

TEST_F(ASubtree, IsRefusedOnAReadOnlyMountWithTheFixes) {
  auto f = facts("/");
  f.read_only = true;
  auto r = choose_subtree(f, "", false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("read-only"), std::string::npos);
  // What nerved and doctor say then: the fix for this kind of host first, the others after.
  std::string said = no_backend("no user manager answers", r.error().message, HostKind::Docker);
  EXPECT_NE(said.find("read-only"), std::string::npos) << said;
  auto here = said.find("The fix on this host (a Docker container): run the container with docker run --privileged");
  EXPECT_NE(here, std::string::npos) << said;
  EXPECT_GT(said.find("enable-linger"), here) << said;
}

// The host is told apart by its clues, the most specific first: a pod is in a container, a container
// on a host; each kind has its one fix.
TEST(AHostKind, IsTheMostSpecificClueAndHasItsOneFix) {
  EXPECT_EQ(host_kind({.kubernetes = true, .docker = true, .systemd_booted = true}), HostKind::Kubernetes);
  EXPECT_EQ(host_kind({.podman = true, .systemd_booted = true}), HostKind::Podman);
  EXPECT_EQ(host_kind({.docker = true}), HostKind::Docker);
  EXPECT_EQ(host_kind({.wsl = true, .systemd_booted = true}), HostKind::Wsl);
  EXPECT_EQ(host_kind({.systemd_booted = true, .openrc = true}), HostKind::SystemdHost);
  EXPECT_EQ(host_kind({.openrc = true}), HostKind::OpenRc);
  EXPECT_EQ(host_kind({}), HostKind::Other);
  EXPECT_NE(host_fix(HostKind::Kubernetes).find("cgroup_writable"), std::string::npos);
  EXPECT_NE(host_fix(HostKind::Podman).find("--systemd=always"), std::string::npos);
  EXPECT_NE(host_fix(HostKind::SystemdHost).find("enable-linger"), std::string::npos);
  for (auto kind : {HostKind::Wsl, HostKind::OpenRc, HostKind::Other})
    EXPECT_NE(host_fix(kind).find("--cgroup-root /nerve"), std::string::npos) << host_name(kind);
}

TEST_F(ASubtree, IsRefusedWithoutACgroup2Mount) {
  auto f = facts("/");
  f.mount.clear();
  EXPECT_FALSE(choose_subtree(f, "", false));
}

TEST_F(ASubtree, IsRefusedWhenTheFolderDoesNotExistQuotingIt) {
  auto r = choose_subtree(facts("/"), "/absent", false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/absent"), std::string::npos) << r.error().message;
}

TEST_F(ASubtree, IsRefusedWhenNeitherACgroupNorAPathUnderTheMount) {
  auto r = choose_subtree(facts("/"), "relative/x", false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("'relative/x'"), std::string::npos) << r.error().message;
}

TEST_F(ASubtree, UnderASystemdUnitNeedsItsDelegationMarkOrTheFlag) {
  folder("/system.slice/ci-runner.service/nerve");
  auto unmarked = choose_subtree(facts("/", true), "/system.slice/ci-runner.service/nerve", false);
  ASSERT_FALSE(unmarked);
  EXPECT_NE(unmarked.error().message.find("Delegate=yes"), std::string::npos) << unmarked.error().message;
  EXPECT_TRUE(choose_subtree(facts("/", true), "/system.slice/ci-runner.service/nerve", true));

  std::string unit = mount_ + "/system.slice/ci-runner.service";
  if (::setxattr(unit.c_str(), "user.delegate", "1", 1, 0) != 0)
    GTEST_SKIP() << "this file system takes no user.* extended attribute, so systemd's mark cannot be set here";
  auto marked = choose_subtree(facts("/", true), "/system.slice/ci-runner.service/nerve", false);
  EXPECT_TRUE(marked) << refusal(marked);
}

TEST(ASystemdUnit, IsTheDeepestUnitNameOnThePath) {
  EXPECT_EQ(systemd_unit_of("/user.slice/user-1000.slice/user@1000.service/app.slice/x"),
            "/user.slice/user-1000.slice/user@1000.service/app.slice");
  EXPECT_EQ(systemd_unit_of("/nerve/runs"), "");
  EXPECT_EQ(systemd_unit_of("/init.scope"), "/init.scope");
}

}  // namespace
}  // namespace nerve
