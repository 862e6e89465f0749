// SPDX-License-Identifier: LGPL-2.1-or-later
// sealing_from_mountinfo: whether a mount table allows sealed runs (a cgroup2 mount with nsdelegate).
#include "process/sealing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace nerve {
namespace {

using ::testing::HasSubstr;

// A hybrid host like the CI machine: v1 controllers, cgroup2 at /sys/fs/cgroup/unified, no nsdelegate.
constexpr const char* kHybrid =
    "22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
    "31 22 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

// A pure cgroup2 host booted by systemd (optional fields before the separator).
constexpr const char* kSystemd =
    "24 1 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

TEST(SealingFromMountinfo, IsAvailableWithNsdelegateAmongTheSuperOptions) {
  SealingStatus s = sealing_from_mountinfo(kSystemd);
  EXPECT_TRUE(s.available) << s.detail;
  EXPECT_THAT(s.detail, HasSubstr("/sys/fs/cgroup"));
  EXPECT_THAT(s.detail, HasSubstr("nsdelegate"));
}

TEST(SealingFromMountinfo, IsUnavailableWithoutNsdelegateAndSaysWhereAndWhatIsNeeded) {
  SealingStatus s = sealing_from_mountinfo(kHybrid);
  EXPECT_FALSE(s.available);
  EXPECT_THAT(s.detail, HasSubstr("cgroup2 at /sys/fs/cgroup/unified is mounted without nsdelegate"));
  EXPECT_THAT(s.detail, HasSubstr("options rw)"));
  EXPECT_THAT(s.detail, HasSubstr("booted by systemd"));
}

TEST(SealingFromMountinfo, IsUnavailableWithoutAnyCgroup2Mount) {
  SealingStatus s = sealing_from_mountinfo(
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory,nsdelegate\n");
  EXPECT_FALSE(s.available) << "a cgroup v1 mount is not cgroup2, whatever its options";
  EXPECT_THAT(s.detail, HasSubstr("no cgroup2 mount"));
}

TEST(SealingFromMountinfo, ReadsOnlyTheSuperOptionsNotTheMountOptionsOrTheSource) {
  // nsdelegate as a per-mount option, as the source name, and as part of a longer option: none counts.
  SealingStatus s = sealing_from_mountinfo(
      "41 31 0:38 / /sys/fs/cgroup rw,nsdelegate - cgroup2 nsdelegate rw,nsdelegatex,xnsdelegate\n");
  EXPECT_FALSE(s.available) << s.detail;
}

TEST(SealingFromMountinfo, IgnoresMalformedLinesAndFindsTheCgroup2MountAfterThem) {
  std::string text = std::string("garbage without separator\n- \n\n") + kSystemd;
  EXPECT_TRUE(sealing_from_mountinfo(text).available);
}

TEST(SealingFromMountinfo, AnyCgroup2MountWithNsdelegateTellsSinceTheyShareOneSuperblock) {
  std::string text = std::string(kHybrid) +
                     "90 41 0:38 /nerve-test-1 /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
  EXPECT_TRUE(sealing_from_mountinfo(text).available);
}

TEST(SealIds, MapExactlyTheGivenIdToItself) {
  SealIds ids = seal_ids(1000, 65534);
  EXPECT_STREQ(ids.uid_map, "1000 1000 1\n");
  EXPECT_STREQ(ids.gid_map, "65534 65534 1\n");
  EXPECT_STREQ(seal_ids(0, 4294967294u).gid_map, "4294967294 4294967294 1\n");
}

}  // namespace
}  // namespace nerve
