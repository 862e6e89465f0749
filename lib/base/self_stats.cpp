// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/self_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace nerve {

namespace {

std::optional<std::string> slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::uint64_t> count_fds() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return std::nullopt;
  std::uint64_t n = 0;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n > 0 ? n - 1 : 0;  // the folder's own fd, open while it is read
}

std::optional<std::uint64_t> number(std::string_view word) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<StatTicks> parse_stat_ticks(std::string_view stat) {
  // Fields after the ")" that closes the name: state is field 3, utime 14, stime 15, starttime 22.
  std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = stat.substr(close + 1);
  std::optional<std::uint64_t> utime, stime, start;
  for (int field = 3; field <= 22; ++field) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    std::size_t end = rest.find(' ');
    std::string_view word = rest.substr(0, end);
    if (field == 14) utime = number(word);
    if (field == 15) stime = number(word);
    if (field == 22) start = number(word);
    if (end == std::string_view::npos) rest = {};
    else rest.remove_prefix(end);
  }
  if (!utime || !stime || !start) return std::nullopt;
  return StatTicks{*utime + *stime, *start};
}

std::optional<std::uint64_t> parse_btime(std::string_view proc_stat) {
  std::size_t at = proc_stat.find("\nbtime ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = proc_stat.substr(at + 7);
  return number(rest.substr(0, rest.find('\n')));
}

SelfStats read_self_stats() {
  SelfStats s;
  s.open_fds = count_fds();
  if (rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0) s.max_fds = rl.rlim_cur;
  if (auto statm = slurp("/proc/self/statm")) {
    std::istringstream in(*statm);
    std::uint64_t size = 0, resident = 0;
    if (in >> size >> resident) s.resident_bytes = resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  }
  double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  auto stat = slurp("/proc/self/stat");
  auto ticks = stat ? parse_stat_ticks(*stat) : std::nullopt;
  if (ticks && tick > 0) {
    s.cpu_seconds = static_cast<double>(ticks->cpu) / tick;
    auto proc_stat = slurp("/proc/stat");
    if (auto btime = proc_stat ? parse_btime(*proc_stat) : std::nullopt)
      s.start_time_seconds = static_cast<double>(*btime) + static_cast<double>(ticks->start) / tick;
  }
  return s;
}

}  // namespace nerve
