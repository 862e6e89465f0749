// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nerved/daemon_config.h"

#include "base/conventions.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/unit_properties.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace nerve {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Sets one key of the configuration; the error text says what is wrong with the value.
using Setter = std::function<Result<void>(DaemonConfig&, const std::string&)>;

Result<void> bad(const std::string& value, const std::string& what) {
  return Error{kConfigError, "bad value " + quote_value(value) + ": " + what};
}

// A duration from MIN to MAX (both included), in systemd's syntax.
Result<void> set_duration(std::optional<Duration>& field, const std::string& value, Duration min, Duration max,
                          const char* range) {
  auto d = parse_duration(value);
  if (!d) return bad(value, d.error().message);
  if (*d < min || *d > max) return bad(value, range);
  field = *d;
  return {};
}

Result<void> set_properties(DaemonConfig& c, const std::string& value) {
  std::istringstream words(value);
  for (std::string word; words >> word;)
    if (auto p = parse_unit_property(word); !p) return bad(value, p.error().message);
  c.default_properties = value;
  return {};
}

Result<void> set_slice(DaemonConfig& c, const std::string& value) {
  const std::string suffix = ".slice";
  bool named = value.size() > suffix.size() && value.compare(value.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (!named || value.find_first_of("/ \t") != std::string::npos) return bad(value, "expected NAME.slice");
  c.default_slice = value;
  return {};
}

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"runs_dir",
       [](DaemonConfig& c, const std::string& v) -> Result<void> {
         if (v.empty() || v.front() != '/') return bad(v, "expected an absolute path");
         c.runs_dir = v;
         return {};
       }},
      {"default_grace",
       [](DaemonConfig& c, const std::string& v) {
         return set_duration(c.default_grace, v, Duration::from_usec(1), Duration::from_usec(kMaxGraceUsec),
                             "expected a grace between 1us and 1h");
       }},
      {"default_slice", set_slice},
      {"default_properties", set_properties},
      {"metrics_file",
       [](DaemonConfig& c, const std::string& v) -> Result<void> {
         if (v.empty() || v.front() != '/' || v.back() == '/') return bad(v, "expected the absolute path of a file");
         c.metrics_file = v;
         return {};
       }},
      {"metrics_interval",
       [](DaemonConfig& c, const std::string& v) {
         return set_duration(c.metrics_interval, v, Duration(std::chrono::milliseconds(1)),
                             Duration(std::chrono::minutes(10)), "expected an interval between 1ms and 10min");
       }},
      {"backend",
       [](DaemonConfig& c, const std::string& v) -> Result<void> {
         if (v != "auto" && v != "systemd" && v != "cgroup") return bad(v, "expected auto, systemd or cgroup");
         c.backend = v;
         return {};
       }},
      {"cgroup_root",
       [](DaemonConfig& c, const std::string& v) -> Result<void> {
         if (v.empty() || v.find_first_of(" \t") != std::string::npos) return bad(v, "expected a cgroup path");
         c.cgroup_root = v;
         return {};
       }},
      {"keep_finished",
       [](DaemonConfig& c, const std::string& v) {
         return set_duration(c.keep_finished, v, Duration{}, Duration::infinity(), "");
       }},
  };
  return table;
}

Error at(const std::string& file, int line, const std::string& what) {
  return Error{kConfigError, file + ":" + std::to_string(line) + ": " + what};
}

}  // namespace

Result<DaemonConfig> parse_daemon_config(std::string_view text, const std::string& file) {
  DaemonConfig c;
  int number = 0;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) return at(file, number, "expected 'key = value', got " + quote_value(line));
    std::string key(trim(line.substr(0, eq)));
    std::string value(trim(line.substr(eq + 1)));
    auto setter = setters().find(key);
    if (setter == setters().end()) return at(file, number, "unknown key " + quote_value(key));
    if (auto set = setter->second(c, value); !set) return at(file, number, "key " + key + ": " + set.error().message);
  }
  return c;
}

std::string default_config_path() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/nerve/nerved.conf";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.config/nerve/nerved.conf";
}

Result<DaemonConfig> read_daemon_config(const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in) {
    int err = errno;
    if (err == ENOENT && !required) return DaemonConfig{};
    return Error{kConfigError, path + ": cannot read the configuration file: " + std::strerror(err)};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_daemon_config(text.str(), path);
}

}  // namespace nerve
