// SPDX-License-Identifier: LGPL-2.1-or-later
// Durations as systemd holds them (usec_t): microseconds in a uint64, UINT64_MAX meaning "infinity".
//
// Every duration that enters nerve goes through this type: the command lines of nervectl and nerved,
// nerved.conf, the bus options (timeout_usec, grace_usec: every uint64 is a duration there), unit
// properties and records. Text is parsed by parse_duration, in systemd's syntax. A Duration leaves as
// a std::chrono duration or a time point only through to<>() and saturating_add, which saturate at
// the largest value the target holds and never wrap: a timeout of 20000 weeks or 2^63 us is after
// the end of a nanosecond clock (year 2262), so it falls due never, not at once.
#pragma once

#include "base/result.h"

#include <chrono>
#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace nerve {

class Duration {
 public:
  static constexpr std::uint64_t kInfinityUsec = std::numeric_limits<std::uint64_t>::max();

  constexpr Duration() = default;  // zero
  // A constant (Duration(10s)): checked when it is compiled, so it cannot be negative or too long.
  template <class Rep, class Period>
  consteval Duration(std::chrono::duration<Rep, Period> d) : usec_(checked_usec(d)) {}  // NOLINT: implicit

  // USEC microseconds, as systemd's usec_t: UINT64_MAX is infinity, every other value is finite.
  static constexpr Duration from_usec(std::uint64_t usec) {
    Duration d;
    d.usec_ = usec;
    return d;
  }
  static constexpr Duration infinity() { return from_usec(kInfinityUsec); }
  // A std::chrono duration (integral count), truncated to microseconds; nullopt when it is negative or
  // not below infinity.
  template <class Rep, class Period>
  static constexpr std::optional<Duration> from(std::chrono::duration<Rep, Period> d) {
    static_assert(std::is_integral_v<Rep>, "a Duration is made from an integral count");
    if (d.count() < 0) return std::nullopt;
    using PerUsec = std::ratio_divide<Period, std::micro>;  // microseconds in one tick of D
    auto usec = static_cast<unsigned __int128>(d.count()) * PerUsec::num / PerUsec::den;
    if (usec >= kInfinityUsec) return std::nullopt;
    return from_usec(static_cast<std::uint64_t>(usec));
  }

  constexpr std::uint64_t usec() const { return usec_; }
  constexpr bool is_zero() const { return usec_ == 0; }
  constexpr bool is_infinity() const { return usec_ == kInfinityUsec; }
  // Where a duration is a limit (a timeout, keep_finished), zero and infinity both mean "none".
  constexpr bool is_limit() const { return !is_zero() && !is_infinity(); }

  // As the std::chrono duration TO (integral count), truncated to its unit; infinity, and anything
  // longer than TO holds, is TO::max().
  template <class To>
  constexpr To to() const {
    using Rep = typename To::rep;
    static_assert(std::is_integral_v<Rep>, "a Duration converts to an integral count");
    if (is_infinity()) return To::max();
    using TicksPerUsec = std::ratio_divide<std::micro, typename To::period>;
    auto ticks = static_cast<unsigned __int128>(usec_) * TicksPerUsec::num / TicksPerUsec::den;
    if (ticks > static_cast<unsigned __int128>(To::max().count())) return To::max();
    return To(static_cast<Rep>(ticks));
  }

  friend constexpr auto operator<=>(Duration, Duration) = default;

 private:
  template <class Rep, class Period>
  static consteval std::uint64_t checked_usec(std::chrono::duration<Rep, Period> d) {
    auto checked = from(d);
    if (!checked) throw std::logic_error("a Duration constant is negative or too long");
    return checked->usec();
  }

  std::uint64_t usec_ = 0;
};

// T + D, saturating at the clock's time_point::max(): an infinite D, or one that ends past what the
// time point can hold, falls due at max(), never at a wrapped (earlier) time.
template <class Clock, class Dur>
constexpr std::chrono::time_point<Clock, Dur> saturating_add(std::chrono::time_point<Clock, Dur> t, Duration d) {
  using TimePoint = std::chrono::time_point<Clock, Dur>;
  Dur add = d.to<Dur>();
  if (add == Dur::max()) return TimePoint::max();
  Dur since = t.time_since_epoch();
  if (since > Dur::zero() && add > Dur::max() - since) return TimePoint::max();
  return t + add;
}

// The units of parse_duration's bare numbers.
inline constexpr std::uint64_t kUsecPerMsec = 1'000;
inline constexpr std::uint64_t kUsecPerSec = 1'000'000;

// A time span in systemd's syntax (systemd.time(7), as its parse_time): "90" (a bare number is in
// DEFAULT_UNIT_USEC, seconds unless said), "500ms", "1min 30s", "1h30m", "1.5h", "2 weeks", "3M"
// (months of 30.44 days), "1y" (365.25 days), "infinity". Units: us usec μs, ms msec, s sec second
// seconds, m min minute minutes, h hr hour hours, d day days, w week weeks, M month months, y year
// years. Error InvalidArgument when it is not a duration, negative, or not below infinity (about
// 584,542 years); the message says which, for a caller that names the option and quotes TEXT.
Result<Duration> parse_duration(std::string_view text, std::uint64_t default_unit_usec = kUsecPerSec);

// D in systemd's words for messages: "1h 30min", "500ms", "infinity", "0".
std::string format_duration(Duration d);

}  // namespace nerve
