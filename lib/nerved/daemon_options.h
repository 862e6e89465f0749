// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's command line (parsed with CLI11): what `nerved --help` lists, checked before anything starts.
#pragma once

#include "base/conventions.h"
#include "base/defaults.h"
#include "base/duration.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

struct DaemonOptions {
  std::string runs_dir;  // absolute; default $XDG_STATE_HOME/nerve/runs
  int ready_fd = -1;     // write "READY\n" to it once the bus name is owned
  bool verbose = false;
  std::string log_level = "info";  // trace, debug, info, warning, error (--verbose: debug)
  // The configuration file that was read (daemon_config.h); empty when there was none.
  std::string config_file;
  // From the configuration file (flags win where there is one).
  std::uint64_t default_grace_usec = kDefaultGraceUsec;  // grace of a reap when the call gives none
  std::string default_properties;                  // "KEY=VALUE ...", checked by parse_unit_property
  // How long a reaped run's record is kept before it is forgotten automatically; 0 or infinity: forever.
  Duration keep_finished = std::chrono::hours(24 * 7);
  // Timeout of each query to the user manager (default 5 s); tests that stop the manager shorten it.
  std::chrono::milliseconds systemd_timeout{5000};
  // First delay before a pending_retry reap is tried again (default 1 s; it doubles from there).
  std::chrono::milliseconds retry_first{1000};
  // How nerved reaches the systemd user manager (systemd_link.h): "auto" (its private socket when it
  // takes the connection, else the session bus), "private" or "session".
  std::string systemd_bus = "session";  // see --systemd-bus: private/auto can wait on a stopped manager
  // What a run's scope is (docs/operations.md "Backends"): "systemd" (a transient scope of the user
  // manager), "cgroup" (a folder of a delegated cgroup2 subtree, cgroup_backend.h) or "auto" (systemd
  // when a user manager answers, else cgroup where nerved may take its own cgroup: backend_choice.h).
  std::string backend = "auto";
  // The cgroup backend's subtree, as /proc/PID/cgroup names a cgroup ("/nerve"), or the folder's path
  // under the cgroup2 mount; "" = nerved's own cgroup.
  std::string cgroup_root;
  // --cgroup-delegated: take cgroup_root under a tree systemd manages without its user.delegate mark.
  bool cgroup_delegated = false;
  // The slice of a run that names none (run_controls.h).
  std::string default_slice = "nerve.slice";
  // The metrics file kept for node_exporter's textfile collector (metrics_file.h); "" for none.
  std::string metrics_file;
  // Its writes after changes come at most this often.
  std::chrono::milliseconds metrics_interval = kMetricsInterval;
};

struct DaemonCommandLine {
  std::optional<DaemonOptions> options;  // set when nerved is to run
  int exit_code = 0;                     // otherwise: 0 after --help or --version, 2 on a usage error
  std::string out;                       // for stdout (help, version)
  std::string err;                       // for stderr (the usage error and the usage)
};

// ARGS is argv without the program name.
DaemonCommandLine parse_daemon_options(const std::vector<std::string>& args);

}  // namespace nerve
