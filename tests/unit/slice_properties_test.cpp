// SPDX-License-Identifier: LGPL-2.1-or-later
// SetSliceProperties' proof: what systemd answers is not taken for what the slice has; the values
// are read back and compared.
#include "doubles.h"
#include "base/errors.h"
#include "system/slice_properties.h"

#include <gmock/gmock.h>

using namespace nerve;
using nerve::test::MockSystemd;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Return;

namespace {

RunControls controls(const std::vector<std::pair<std::string, std::string>>& pairs) {
  auto c = parse_property_pairs(pairs);
  EXPECT_TRUE(c.ok());
  return c.ok() ? *c : RunControls{};
}

Result<void> set(MockSystemd& systemd, const RunControls& c) {
  std::optional<Result<void>> answer;
  set_slice_properties(systemd, "nerve.slice", c, [&](Result<void> r) { answer = r; });
  EXPECT_TRUE(answer.has_value()) << "no answer";
  return answer.value_or(Result<void>(Error{"none", "no answer"}));
}

constexpr std::uint64_t GiB = 1ull << 30;

}  // namespace

TEST(SliceProperties, ThatSystemdHasAfterwardsAreSet) {
  MockSystemd systemd;
  RunControls c = controls({{"MemoryMax", "1G"}, {"TasksMax", "100"}, {"AllowedCPUs", "0-1"}});
  EXPECT_CALL(systemd, set_unit_properties("nerve.slice", c.unit_properties));
  EXPECT_CALL(systemd, read_properties("nerve.slice", kSliceInterface))
      .WillOnce(Return(MockSystemd::PropertyMap{{"MemoryMax", std::uint64_t{GiB}},
                                                {"TasksMax", std::uint64_t{100}},
                                                {"AllowedCPUs", std::vector<std::uint8_t>{3, 0, 0, 0, 0, 0, 0, 0}},
                                                {"CPUWeight", std::uint64_t{100}}}));
  auto r = set(systemd, c);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
}

TEST(SliceProperties, ThatSystemdAcceptedButDoesNotHaveAreInvalidPropertyQuotingKeyAndValue) {
  MockSystemd systemd;
  RunControls c = controls({{"TasksMax", "100"}, {"MemoryMax", "1G"}});
  EXPECT_CALL(systemd, read_properties(_, _))
      .WillOnce(Return(MockSystemd::PropertyMap{{"MemoryMax", kInfinity}, {"TasksMax", std::uint64_t{100}}}));
  auto r = set(systemd, c);
  ASSERT_FALSE(r.ok()) << "a property that did not take was reported as set";
  EXPECT_EQ(r.error().name, error::InvalidProperty);
  EXPECT_THAT(r.error().message, HasSubstr("'MemoryMax=1G'"));
  EXPECT_THAT(r.error().message, HasSubstr("'infinity'"));
  EXPECT_THAT(r.error().message, HasSubstr("'nerve.slice'"));
}

TEST(SliceProperties, ThatTheSliceDoesNotHaveAtAllAreInvalidProperty) {
  MockSystemd systemd;
  RunControls c = controls({{"CPUQuota", "50%"}});
  EXPECT_CALL(systemd, read_properties(_, _)).WillOnce(Return(MockSystemd::PropertyMap{}));
  auto r = set(systemd, c);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("'CPUQuota=50%'"));
  EXPECT_THAT(r.error().message, HasSubstr("no such property"));
}

TEST(SliceProperties, RefusedBySystemdAreInvalidPropertyAndNotReadBack) {
  MockSystemd systemd;
  RunControls c = controls({{"TasksMax", "5"}, {"RuntimeMaxSec", "10"}});
  EXPECT_CALL(systemd, set_unit_properties(_, _))
      .WillOnce(Return(Result<void>(Error{"org.freedesktop.DBus.Error.PropertyReadOnly",
                                          "Cannot set property RuntimeMaxUSec, or unknown property."})));
  EXPECT_CALL(systemd, read_properties(_, _)).Times(0);
  auto r = set(systemd, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().name, error::InvalidProperty);
  EXPECT_THAT(r.error().message, HasSubstr("'RuntimeMaxSec=10'")) << "the one systemd named, as given";
  EXPECT_THAT(r.error().message, Not(HasSubstr("TasksMax=5"))) << r.error().message;
}

TEST(SliceProperties, ThatCannotBeReadBackAreNotReportedAsSet) {
  MockSystemd systemd;
  RunControls c = controls({{"TasksMax", "10"}});
  EXPECT_CALL(systemd, read_properties(_, _))
      .WillOnce(Return(Result<MockSystemd::PropertyMap>(Error{"org.freedesktop.DBus.Error.NoReply", "timeout"})));
  auto r = set(systemd, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().name, error::InvalidProperty);
}

TEST(SliceProperties, GivenAsAPercentageAreLeftToSystemdsAnswer) {
  MockSystemd systemd;
  RunControls c = controls({{"MemoryMax", "50%"}});
  EXPECT_CALL(systemd, read_properties(_, _)).WillOnce(Return(MockSystemd::PropertyMap{{"MemoryMax", std::uint64_t{GiB}}}));
  EXPECT_TRUE(set(systemd, c).ok());
}
