// nerved's command line (parsed with CLI11): what `nerved --help` lists, checked before anything starts.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

struct DaemonOptions {
  std::string runs_dir;  // absolute; default $XDG_STATE_HOME/nerve/runs
  int ready_fd = -1;     // write "READY\n" to it once the bus name is owned
  bool verbose = false;
  // Timeout of each query to the user manager (default 5 s); tests that stop the manager shorten it.
  std::chrono::milliseconds systemd_timeout{5000};
  // First delay before a pending_retry reap is tried again (default 1 s; it doubles from there).
  std::chrono::milliseconds retry_first{1000};
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
