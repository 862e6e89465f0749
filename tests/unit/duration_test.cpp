// SPDX-License-Identifier: LGPL-2.1-or-later
// Durations: systemd's syntax, the boundaries of usec_t (0, 1, max-1, max = infinity, 2^63), refusals
// that say why, and conversions to std::chrono and time points that saturate instead of wrapping.
#include "base/duration.h"

#include <gtest/gtest.h>

#include <limits>

namespace nerve {
namespace {

using namespace std::chrono_literals;
using SysTime = std::chrono::system_clock::time_point;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t k2To63 = std::uint64_t{1} << 63;

std::uint64_t usec(std::string_view text, std::uint64_t unit = kUsecPerSec) {
  auto d = parse_duration(text, unit);
  EXPECT_TRUE(d.ok()) << text << ": " << (d.ok() ? "" : d.error().message);
  return d.ok() ? d->usec() : 0;
}

std::string refused(std::string_view text) {
  auto d = parse_duration(text);
  EXPECT_FALSE(d.ok()) << "'" << text << "' was accepted as " << (d.ok() ? d->usec() : 0) << " us";
  return d.ok() ? "" : d.error().message;
}

TEST(ParseDuration, TakesSystemdTimeSpans) {
  EXPECT_EQ(usec("90"), 90'000'000u);
  EXPECT_EQ(usec("500ms"), 500'000u);
  EXPECT_EQ(usec("1min 30s"), 90'000'000u);
  EXPECT_EQ(usec("1h30min"), 5'400'000'000u);
  EXPECT_EQ(usec("1h 30min"), 5'400'000'000u);
  EXPECT_EQ(usec("1.5h"), 5'400'000'000u);
  EXPECT_EQ(usec("2 weeks"), 14ull * 86400 * 1'000'000);
  EXPECT_EQ(usec("  10s  "), 10'000'000u);
  EXPECT_EQ(usec("1M"), 2'629'800'000'000u) << "M is a month (30.44 days), m a minute";
  EXPECT_EQ(usec("1m"), 60'000'000u);
  EXPECT_EQ(usec("1y"), 31'557'600'000'000u);
  EXPECT_EQ(usec("7d"), 7ull * 86400 * 1'000'000);
  EXPECT_EQ(usec("3us"), 3u);
  EXPECT_EQ(usec("3\xce\xbcs"), 3u);
  EXPECT_EQ(usec("0.000001"), 1u);
  EXPECT_EQ(usec(".5s"), 500'000u);
}

TEST(ParseDuration, ABareNumberIsInTheUnitTheCallerSays) {
  EXPECT_EQ(usec("5000", kUsecPerMsec), 5'000'000u);
  EXPECT_EQ(usec("5s", kUsecPerMsec), 5'000'000u);
}

TEST(ParseDuration, AtTheBoundariesOfUsecT) {
  EXPECT_EQ(usec("0"), 0u);
  EXPECT_EQ(usec("1us"), 1u);
  EXPECT_EQ(usec(std::to_string(kMax - 1) + "us"), kMax - 1) << "max-1 is the longest finite duration";
  EXPECT_NE(refused(std::to_string(kMax) + "us").find("out of range"), std::string::npos)
      << "max is infinity, which is spelt 'infinity'";
  EXPECT_EQ(usec(std::to_string(k2To63) + "us"), k2To63);
  EXPECT_NE(refused("18446744073709551616us").find("out of range"), std::string::npos) << "2^64";
  EXPECT_EQ(usec("20000w"), std::uint64_t{20000} * 604800 * 1'000'000);
  EXPECT_NE(refused("40000000w").find("out of range"), std::string::npos) << "past 2^64 us by multiplication";
  EXPECT_NE(refused("584542y 1y").find("out of range"), std::string::npos) << "past 2^64 us by addition";
  EXPECT_TRUE(parse_duration("infinity")->is_infinity());
  EXPECT_TRUE(parse_duration(" infinity ")->is_infinity());
}

TEST(ParseDuration, RefusesNegativeAndMalformedSayingWhich) {
  EXPECT_NE(refused("-1").find("negative"), std::string::npos);
  EXPECT_NE(refused("-5s").find("negative"), std::string::npos);
  EXPECT_NE(refused("1s -5s").find("negative"), std::string::npos);
  for (const char* bad : {"", " ", "soon", "10x", "5 parsecs", "1e3", "nan", "inf", "+5", "1..5s", ".", "s", "1sx", "1.s", "3. s"})
    EXPECT_NE(refused(bad).find("expected a duration"), std::string::npos) << bad;
  EXPECT_EQ(parse_duration("x").error().name, "org.nerve.Lifecycle1.Error.InvalidArgument");
}

TEST(ADuration, IsInfinityOnlyAtTheTopOfUsecT) {
  EXPECT_TRUE(Duration::from_usec(kMax).is_infinity());
  EXPECT_FALSE(Duration::from_usec(kMax - 1).is_infinity());
  EXPECT_TRUE(Duration{}.is_zero());
  EXPECT_FALSE(Duration{}.is_limit());
  EXPECT_FALSE(Duration::infinity().is_limit());
  EXPECT_TRUE(Duration::from_usec(1).is_limit());
  EXPECT_LT(Duration::from_usec(kMax - 1), Duration::infinity());
  static_assert(Duration(10s).usec() == 10'000'000);
}

TEST(ADuration, ComesFromChronoOnlyWhenItFits) {
  EXPECT_EQ(Duration::from(1500ms)->usec(), 1'500'000u);
  EXPECT_EQ(Duration::from(1999ns)->usec(), 1u) << "truncated to microseconds";
  EXPECT_FALSE(Duration::from(-1s));
  EXPECT_FALSE(Duration::from(std::chrono::hours::max())) << "more than 2^64 us";
  EXPECT_EQ(Duration::from(std::chrono::microseconds::max())->usec(), k2To63 - 1);
}

TEST(ADuration, ConvertsToChronoSaturating) {
  EXPECT_EQ(Duration::from_usec(0).to<std::chrono::nanoseconds>(), 0ns);
  EXPECT_EQ(Duration::from_usec(1).to<std::chrono::nanoseconds>(), 1000ns);
  EXPECT_EQ(Duration::from_usec(1500).to<std::chrono::milliseconds>(), 1ms);
  EXPECT_EQ(Duration::from_usec(k2To63).to<std::chrono::microseconds>(), std::chrono::microseconds::max());
  EXPECT_EQ(Duration::from_usec(k2To63 - 1).to<std::chrono::microseconds>().count(), std::int64_t(k2To63 - 1));
  EXPECT_EQ(Duration::from_usec(kMax - 1).to<std::chrono::microseconds>(), std::chrono::microseconds::max());
  EXPECT_EQ(Duration::infinity().to<std::chrono::seconds>(), std::chrono::seconds::max());
  // 20000 weeks is 1.2e19 ns: more than an int64 of nanoseconds holds.
  EXPECT_EQ(parse_duration("20000w")->to<std::chrono::nanoseconds>(), std::chrono::nanoseconds::max());
  EXPECT_EQ(parse_duration("20000w")->to<std::chrono::seconds>(), std::chrono::seconds(20000ll * 604800));
}

TEST(SaturatingAdd, NeverWrapsToAnEarlierTime) {
  SysTime t = SysTime{} + std::chrono::hours(24 * 365 * 56);  // 2026
  EXPECT_EQ(saturating_add(t, Duration{}), t);
  EXPECT_EQ(saturating_add(t, Duration::from_usec(1)), t + 1us);
  EXPECT_EQ(saturating_add(t, Duration(1h)), t + 1h);
  for (std::uint64_t far : {std::uint64_t{20000} * 604800 * 1'000'000, k2To63, kMax - 1, kMax}) {
    EXPECT_EQ(saturating_add(t, Duration::from_usec(far)), SysTime::max()) << far;
    EXPECT_GT(saturating_add(t, Duration::from_usec(far)), t) << far;
  }
  EXPECT_EQ(saturating_add(SysTime::max(), Duration::from_usec(1)), SysTime::max());
  SysTime before_1970 = SysTime{} - 1h;
  EXPECT_EQ(saturating_add(before_1970, Duration(2h)), SysTime{} + 1h);
  EXPECT_EQ(saturating_add(before_1970, Duration::infinity()), SysTime::max());
}

TEST(FormatDuration, SpeaksSystemdsUnits) {
  EXPECT_EQ(format_duration(Duration{}), "0");
  EXPECT_EQ(format_duration(Duration::infinity()), "infinity");
  EXPECT_EQ(format_duration(Duration(90s)), "1min 30s");
  EXPECT_EQ(format_duration(Duration(1500ms)), "1s 500ms");
  EXPECT_EQ(format_duration(Duration::from_usec(1)), "1us");
}

}  // namespace
}  // namespace nerve
