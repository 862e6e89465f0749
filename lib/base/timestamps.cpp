// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace nerve {

namespace {

std::string format(const struct timespec& ts) {
  struct tm tm {};
  ::gmtime_r(&ts.tv_sec, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof out, "%s.%03ldZ", buf, ts.tv_nsec / 1000000);
  return out;
}

}  // namespace

std::string now_rfc3339() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return format(ts);
}

std::string rfc3339(std::chrono::system_clock::time_point at) {
  using namespace std::chrono;
  // Floor to whole seconds, so a time before 1970 keeps a fraction in [0, 1 s) as gmtime_r needs.
  auto secs = floor<seconds>(at);
  struct timespec ts {};
  ts.tv_sec = static_cast<std::time_t>(secs.time_since_epoch().count());
  ts.tv_nsec = static_cast<long>(duration_cast<nanoseconds>(at - secs).count());
  return format(ts);
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  std::string s(text);
  struct tm tm {};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6 || consumed != 19)
    return std::nullopt;
  std::size_t i = 19;
  long millis = 0, scale = 1000;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
      if (scale > 1) millis += (s[i] - '0') * (scale /= 10);
  if (i + 1 != s.size() || s[i] != 'Z') return std::nullopt;
  // Each field in its range; timegm would otherwise carry "02-30" into March and "24:00" into the
  // next day, and the text would name a time it does not say. (60 seconds is a leap second.)
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour < 0 ||
      tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60)
    return std::nullopt;
  const struct tm asked = tm;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t t = ::timegm(&tm);
  if (tm.tm_mday != asked.tm_mday) return std::nullopt;  // 02-30 (timegm's error, -1, is below 0)
  // system_clock counts nanoseconds in 64 bits: 1677 to 2262. nerve writes no time before 1970, and
  // from 1970 on an age (now - then) fits the clock as well; anything else is not a time it wrote.
  using namespace std::chrono;
  constexpr std::time_t last = duration_cast<seconds>(system_clock::duration::max()).count() - 1;
  if (t < 0 || t > last) return std::nullopt;
  return system_clock::from_time_t(t) + milliseconds(millis);
}

}  // namespace nerve
