// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's configuration file: $XDG_CONFIG_HOME/nerve/nerved.conf (or ~/.config/nerve/nerved.conf),
// or the file named by --config. Options given on the command line win over it.
//
// Format: one `key = value` per line; blank lines and lines starting with '#' are ignored; spaces
// around the key and the value are dropped; no quoting, no sections. Keys (man nerved(8)):
//   runs_dir           absolute path of the runs folder
//   default_grace      grace of a reap when the call gives none ("10s", "500ms", "1min"; at most 1h)
//   default_slice      slice a run's scope is put in when the call names none (NAME.slice)
//   default_properties unit properties every run starts with ("MemoryMax=1G TasksMax=100")
//   keep_finished      how long a reaped run's record is kept before it is forgotten ("7d"; 0 or
//                      infinity: forever)
//   metrics_file       absolute path of the metrics file nerved keeps (metrics_file.h)
//   metrics_interval   its writes after changes at most this often ("5s"; 1ms to 10min)
//   backend            auto, systemd or cgroup (nerved --backend)
//   cgroup_root        the cgroup backend's subtree (nerved --cgroup-root)
// Durations are systemd's time spans (duration.h; a bare number is seconds).
// An unknown key, a line without '=' or a bad value is an error naming the file, the line and the key.
#pragma once

#include "base/duration.h"
#include "base/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nerve {

struct DaemonConfig {
  std::optional<std::string> runs_dir;
  std::optional<Duration> default_grace;
  std::optional<std::string> default_slice;
  std::optional<std::string> default_properties;
  std::optional<Duration> keep_finished;
  std::optional<std::string> metrics_file;
  std::optional<Duration> metrics_interval;
  std::optional<std::string> backend;
  std::optional<std::string> cgroup_root;
};

// Error name of a bad configuration file; the message is "FILE:LINE: key KEY: what is wrong".
inline constexpr const char* kConfigError = "nerve.Config.Invalid";

// Parses the text of the file 'file' (used only in messages).
Result<DaemonConfig> parse_daemon_config(std::string_view text, const std::string& file);

// $XDG_CONFIG_HOME/nerve/nerved.conf, or ~/.config/nerve/nerved.conf.
std::string default_config_path();

// Reads and parses 'path'. A missing file is an empty configuration unless 'required' (--config).
Result<DaemonConfig> read_daemon_config(const std::string& path, bool required);

}  // namespace nerve
