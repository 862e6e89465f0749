// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/usage.h"

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <string>

namespace nerve {

namespace {

// The whole of a small kernel file below 'dir', or nullopt when it is missing or unreadable.
std::optional<std::string> read_small(int dir, const char* name) {
  int fd = ::openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

// A number as a cgroup file writes it: digits, then a newline or blanks; nullopt for anything else.
std::optional<std::uint64_t> cgroup_number(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// The figures and their json names, in one table for both directions.
const std::pair<const char*, std::optional<std::uint64_t> Usage::*> kFields[] = {
    {"cpu_usage_usec", &Usage::cpu_usage_usec},       {"cpu_user_usec", &Usage::cpu_user_usec},
    {"cpu_system_usec", &Usage::cpu_system_usec},     {"memory_peak_bytes", &Usage::memory_peak_bytes},
    {"tasks_peak", &Usage::tasks_peak},               {"io_read_bytes", &Usage::io_read_bytes},
    {"io_write_bytes", &Usage::io_write_bytes},       {"oom_kills", &Usage::oom_kills},
};

}  // namespace

std::optional<std::uint64_t> flat_key(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ')
      return cgroup_number(line.substr(key.size() + 1));
  }
  return std::nullopt;
}

void parse_io_stat(std::string_view text, Usage& out) {
  std::uint64_t read = 0, written = 0;
  while (!text.empty()) {
    auto sp = text.find_first_of(" \n");
    std::string_view word = text.substr(0, sp);
    text = sp == std::string_view::npos ? std::string_view() : text.substr(sp + 1);
    auto eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    auto v = cgroup_number(word.substr(eq + 1));
    if (!v) continue;
    if (word.substr(0, eq) == "rbytes") read += *v;
    if (word.substr(0, eq) == "wbytes") written += *v;
  }
  out.io_read_bytes = read;
  out.io_write_bytes = written;
}

Usage read_usage(int dir) {
  Usage u;
  if (auto cpu = read_small(dir, "cpu.stat")) {
    u.cpu_usage_usec = flat_key(*cpu, "usage_usec");
    u.cpu_user_usec = flat_key(*cpu, "user_usec");
    u.cpu_system_usec = flat_key(*cpu, "system_usec");
  }
  if (auto peak = read_small(dir, "memory.peak")) u.memory_peak_bytes = cgroup_number(*peak);
  if (auto events = read_small(dir, "memory.events")) u.oom_kills = flat_key(*events, "oom_kill");
  if (auto peak = read_small(dir, "pids.peak")) u.tasks_peak = cgroup_number(*peak);
  if (auto io = read_small(dir, "io.stat")) parse_io_stat(*io, u);
  return u;
}

void to_json(nlohmann::json& j, const Usage& u) {
  j = nlohmann::json::object();
  for (const auto& [name, field] : kFields) j[name] = (u.*field) ? nlohmann::json(*(u.*field)) : nlohmann::json();
}

void from_json(const nlohmann::json& j, Usage& u) {
  for (const auto& [name, field] : kFields) {
    auto it = j.find(name);
    u.*field = it != j.end() && it->is_number_unsigned() ? std::optional<std::uint64_t>(it->get<std::uint64_t>())
                                                         : std::nullopt;
  }
}

}  // namespace nerve
