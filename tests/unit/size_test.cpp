// SPDX-License-Identifier: LGPL-2.1-or-later
// Sizes and percentages: systemd's syntax (base 1024, at most two decimals of a percent), the
// boundaries (0, 1, max-1, max, 2^63, 2^64), negative and huge values refused, never wrapped.
#include "base/size.h"

#include <gtest/gtest.h>

#include <limits>

namespace nerve {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::uint64_t bytes(std::string_view text) {
  auto s = parse_size(text);
  EXPECT_TRUE(s.ok()) << text << ": " << (s.ok() ? "" : s.error().message);
  return s.ok() ? s->bytes() : 0;
}

std::string size_refused(std::string_view text) {
  auto s = parse_size(text);
  EXPECT_FALSE(s.ok()) << "'" << text << "' was accepted as " << (s.ok() ? s->bytes() : 0);
  return s.ok() ? "" : s.error().message;
}

std::uint64_t permyriad(std::string_view text) {
  auto p = parse_permyriad(text);
  EXPECT_TRUE(p.ok()) << text << ": " << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : 0;
}

std::string share_refused(std::string_view text) {
  auto p = parse_permyriad(text);
  EXPECT_FALSE(p.ok()) << "'" << text << "' was accepted as " << (p.ok() ? *p : 0) << " permyriad";
  return p.ok() ? "" : p.error().message;
}

TEST(ParseSize, TakesBase1024Suffixes) {
  EXPECT_EQ(bytes("512"), 512u);
  EXPECT_EQ(bytes("512B"), 512u);
  EXPECT_EQ(bytes("4K"), 4096u);
  EXPECT_EQ(bytes("1.5K"), 1536u);
  EXPECT_EQ(bytes("1.5G"), 3ull << 29);
  EXPECT_EQ(bytes("1G 512M"), (1ull << 30) + (512ull << 20));
  EXPECT_EQ(bytes("2T"), 2ull << 40);
  EXPECT_EQ(bytes("1E"), 1ull << 60);
  EXPECT_TRUE(parse_size("infinity")->is_infinity());
}

TEST(ParseSize, AtTheBoundariesOfUint64) {
  EXPECT_EQ(bytes("0"), 0u);
  EXPECT_EQ(bytes("1"), 1u);
  EXPECT_EQ(bytes(std::to_string(kMax - 1)), kMax - 1);
  EXPECT_TRUE(parse_size(std::to_string(kMax))->is_infinity()) << "2^64-1 bytes is CGROUP_LIMIT_MAX";
  EXPECT_EQ(bytes("8E"), std::uint64_t{1} << 63);
  EXPECT_EQ(bytes("15E 1023P"), kMax - (1ull << 50) + 1);
  EXPECT_NE(size_refused("18446744073709551616").find("out of range"), std::string::npos) << "2^64";
  EXPECT_NE(size_refused("16E").find("out of range"), std::string::npos);
  EXPECT_NE(size_refused("15E 1024P").find("out of range"), std::string::npos) << "past 2^64 by addition";
  EXPECT_NE(size_refused("99999999999999999999G").find("out of range"), std::string::npos);
}

TEST(ParseSize, RefusesNegativeAndMalformed) {
  EXPECT_NE(size_refused("-1").find("negative"), std::string::npos);
  EXPECT_NE(size_refused("-1G").find("negative"), std::string::npos);
  for (const char* bad : {"", "lots", "1KB", "1k", "1Z", "1e3", "1.2.3G"})
    EXPECT_NE(size_refused(bad).find("expected a size"), std::string::npos) << bad;
}

TEST(ParsePermyriad, TakesPercentPermilleAndPermyriad) {
  EXPECT_EQ(permyriad("0%"), 0u);
  EXPECT_EQ(permyriad("1%"), 100u);
  EXPECT_EQ(permyriad("50%"), 5000u);
  EXPECT_EQ(permyriad("12.5%"), 1250u);
  EXPECT_EQ(permyriad("12.34%"), 1234u);
  EXPECT_EQ(permyriad("100%"), 10000u);
  EXPECT_EQ(permyriad("200%"), 20000u);
  EXPECT_EQ(permyriad("5\xe2\x80\xb0"), 50u);    // ‰
  EXPECT_EQ(permyriad("5.5\xe2\x80\xb0"), 55u);  // ‰
  EXPECT_EQ(permyriad("7\xe2\x80\xb1"), 7u);     // ‱
}

TEST(ParsePermyriad, AtItsBoundaries) {
  EXPECT_EQ(permyriad("21474836.47%"), kMaxPermyriad);
  EXPECT_EQ(permyriad("21474836.46%"), kMaxPermyriad - 1);
  for (const char* huge : {"21474836.48%", "184467440738%", "9223372036854775808%", "18446744073709551615%",
                           "99999999999999999999999%", "2147483648\xe2\x80\xb1"})
    EXPECT_NE(share_refused(huge).find("out of range"), std::string::npos) << huge;
}

TEST(ParsePermyriad, RefusesNegativeMalformedAndTooManyDecimals) {
  EXPECT_NE(share_refused("-5%").find("negative"), std::string::npos);
  for (const char* bad : {"%", "50", "50 %", "x%", "12.345%", "1.%", ".5%", "5.55\xe2\x80\xb0", "1.5\xe2\x80\xb1", "1e2%"})
    EXPECT_NE(share_refused(bad).find("expected a percentage"), std::string::npos) << bad;
}

}  // namespace
}  // namespace nerve
