// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nerved/daemon_options.h"

#include "base/cli_parse.h"
#include "base/duration.h"
#include "nerved/daemon_config.h"
#include "base/errors.h"
#include "base/run_controls.h"
#include "generated/nerve_version.h"
#include "record/run_store.h"
#include "base/unit_properties.h"

#include <unistd.h>


namespace nerve {

namespace {

const char kDescription[] =
    "Keeps every run of a workflow in its own systemd user scope and reaps it completely.\n"
    "Owns org.nerve.Lifecycle1 on the session bus.\n";

std::string version_text() { return "nerved " NERVE_VERSION; }

// "Usage:", the description, then "Options:" with one option per line ("  --NAME [VALUE]  TEXT").
std::string help_text(const CLI::App* app) {
  std::string s = "Usage: nerved [OPTIONS]\n\n" + std::string(kDescription) + "\nOptions:\n";
  for (const CLI::Option* o : app->get_options()) {
    std::string left = o->get_name(false, true);
    std::string type = o->get_type_name();  // "FD:NONNEGATIVE": the value's name, then its check
    if (o->get_type_size() != 0) left += " " + type.substr(0, type.find(':'));
    s += "  " + left + std::string(left.size() < 22 ? 22 - left.size() : 1, ' ') + o->get_description() + "\n";
  }
  return s;
}

// The options given as text and checked after the parse.
struct RawTimes {
  std::string systemd_timeout, retry_first, metrics_interval;
};

void add_options(CLI::App& app, DaemonOptions& o, RawTimes& raw) {
  app.add_option("--runs-dir", o.runs_dir, "where run records live (default $XDG_STATE_HOME/nerve/runs)")
      ->type_name("DIR");
  app.add_option("--ready-fd", o.ready_fd, "write \"READY\\n\" to FD and close it once the bus name is owned")
      ->type_name("FD")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--config", o.config_file, "read FILE instead of $XDG_CONFIG_HOME/nerve/nerved.conf")
      ->type_name("FILE");
  app.add_flag("--verbose", o.verbose, "log debug lines (as --log-level debug)");
  app.add_option("--log-level", o.log_level, "trace, debug, info (default), warning or error")
      ->type_name("LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warning", "error"}));
  app.add_option("--systemd-timeout", raw.systemd_timeout,
                 "timeout of each query to the user manager, in ms or with a unit (default 5000)")
      ->type_name("MS");
  app.add_option("--retry-first", raw.retry_first,
                 "first delay before a pending reap is tried again, in ms or with a unit (default 1000)")
      ->type_name("MS");
  app.add_option("--systemd-bus", o.systemd_bus,
                 "reach the user manager through the session bus (default), its private socket, or auto (the "
                 "private socket when it takes the connection); private and auto wait for the manager's "
                 "handshake when they connect")
      ->type_name("WAY")
      ->check(CLI::IsMember({"auto", "private", "session"}));
  app.add_option("--backend", o.backend,
                 "what holds a run: systemd (a scope of the user manager), cgroup (a folder of a delegated cgroup2 "
                 "subtree, no user manager needed) or auto (default: systemd when a user manager answers, else cgroup "
                 "where nerved may take its own cgroup, else nerved does not start and says which fix applies)")
      ->type_name("KIND")
      ->check(CLI::IsMember({"auto", "systemd", "cgroup"}));
  app.add_option("--cgroup-root", o.cgroup_root,
                 "the cgroup backend's subtree, as /proc/self/cgroup names a cgroup (default: nerved's own cgroup)")
      ->type_name("CGROUP");
  app.add_flag("--cgroup-delegated", o.cgroup_delegated,
               "take --cgroup-root under a tree systemd manages although systemd did not mark it delegated");
  app.add_option("--metrics-file", o.metrics_file,
                 "keep nerved's metrics in FILE (absolute; NAME.prom in node_exporter's textfile folder)")
      ->type_name("FILE");
  app.add_option("--metrics-interval", raw.metrics_interval,
                 "write the metrics file at most this often after changes, in ms or with a unit (default 5s)")
      ->type_name("MS");
  app.add_option("--default-slice", o.default_slice, "the slice of a run that names none (default nerve.slice)")
      ->type_name("NAME")
      ->check([](const std::string& s) {
        auto ok = check_slice_name(s);
        return ok ? std::string() : ok.error().message;
      });
}

// --systemd-timeout and --retry-first: milliseconds from 1 to 600000, a bare number in ms as these
// options always took, or a duration with a unit ("5s"); the error names the option and quotes TEXT.
std::optional<std::string> set_milliseconds(const char* option, const std::string& text, std::chrono::milliseconds& out) {
  auto d = parse_duration(text, kUsecPerMsec);
  if (!d || *d < Duration(std::chrono::milliseconds(1)) || *d > Duration(std::chrono::seconds(600)))
    return std::string(option) + " takes milliseconds from 1 to 600000 (or a duration such as 5s), not " +
           quote_value(text);
  out = d->to<std::chrono::milliseconds>();
  return std::nullopt;
}

DaemonCommandLine usage_error(const std::string& message) {
  DaemonCommandLine c;
  c.exit_code = 2;
  c.err = "nerved: " + message + "\nRun 'nerved --help' for the options.\n";
  return c;
}

// Reads the configuration file and takes its values where no flag gave one.
std::optional<std::string> apply_config(const CLI::App& app, DaemonOptions& o) {
  bool named = app.count("--config") != 0;
  std::string path = named ? o.config_file : default_config_path();
  auto config = read_daemon_config(path, named);
  if (!config) return config.error().message;
  if (config->runs_dir && app.count("--runs-dir") == 0) o.runs_dir = *config->runs_dir;
  if (config->default_grace) o.default_grace_usec = config->default_grace->usec();
  if (config->default_slice && app.count("--default-slice") == 0) o.default_slice = *config->default_slice;
  if (config->default_properties) o.default_properties = *config->default_properties;
  if (config->keep_finished) o.keep_finished = *config->keep_finished;
  if (config->metrics_file && app.count("--metrics-file") == 0) o.metrics_file = *config->metrics_file;
  if (config->backend && app.count("--backend") == 0) o.backend = *config->backend;
  if (config->cgroup_root && app.count("--cgroup-root") == 0) o.cgroup_root = *config->cgroup_root;
  if (config->metrics_interval) o.metrics_interval = config->metrics_interval->to<std::chrono::milliseconds>();
  o.config_file = named || ::access(path.c_str(), F_OK) == 0 ? path : "";
  return std::nullopt;
}

}  // namespace

DaemonCommandLine parse_daemon_options(const std::vector<std::string>& args) {
  DaemonOptions o;
  RawTimes raw;
  CLI::App app(kDescription, "nerved");
  app.set_help_flag("-h,--help", "print this help and exit");
  app.set_version_flag("--version", version_text(), "print the version and exit");
  app.formatter_fn([](const CLI::App* a, std::string, CLI::AppFormatMode) { return help_text(a); });
  add_options(app, o, raw);
  DaemonCommandLine c;
  if (auto exit = parse_cli(app, args, version_text())) {
    if (exit->code != 0) return usage_error(exit->message);
    c.out = exit->out;
    return c;
  }
  if (auto bad = apply_config(app, o)) {
    DaemonCommandLine e;
    e.exit_code = 2;
    e.err = "nerved: " + *bad + "\n";
    return e;
  }
  if (o.verbose && app.count("--log-level") == 0) o.log_level = "debug";
  if (o.runs_dir.empty()) o.runs_dir = default_runs_dir();
  if (o.runs_dir.front() != '/')
    return usage_error("--runs-dir must be an absolute path, not " + quote_value(o.runs_dir));
  if (app.count("--systemd-timeout") != 0)
    if (auto bad = set_milliseconds("--systemd-timeout", raw.systemd_timeout, o.systemd_timeout)) return usage_error(*bad);
  if (app.count("--retry-first") != 0)
    if (auto bad = set_milliseconds("--retry-first", raw.retry_first, o.retry_first)) return usage_error(*bad);
  if (app.count("--metrics-interval") != 0)
    if (auto bad = set_milliseconds("--metrics-interval", raw.metrics_interval, o.metrics_interval)) return usage_error(*bad);
  if (!o.metrics_file.empty() && (o.metrics_file.front() != '/' || o.metrics_file.back() == '/'))
    return usage_error("--metrics-file must be the absolute path of a file, not " + quote_value(o.metrics_file));
  if (!o.cgroup_root.empty() && o.backend == "systemd")
    return usage_error("--cgroup-root is for the cgroup backend, not --backend systemd");
  c.options = o;
  return c;
}

}  // namespace nerve
