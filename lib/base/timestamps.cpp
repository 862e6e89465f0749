#include "base/timestamps.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace nerve {

std::string now_rfc3339() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm {};
  ::gmtime_r(&ts.tv_sec, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof out, "%s.%03ldZ", buf, ts.tv_nsec / 1000000);
  return out;
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
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t t = ::timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t) + std::chrono::milliseconds(millis);
}

}  // namespace nerve
