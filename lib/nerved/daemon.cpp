// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nerved/daemon.h"

#include "nerved/backend.h"
#include "nerved/daemon_options.h"
#include "nerved/metrics_file.h"
#include "generated/nerve_version.h"
#include "system/event_loop.h"
#include "base/host.h"
#include "system/journal.h"
#include "run/lifecycle.h"
#include "bus/manager_object.h"
#include "system/holders.h"
#include "system/owners.h"
#include "run/process_launcher.h"
#include "run/pruner.h"
#include "run/run_metrics.h"
#include "system/real_cgroups.h"
#include "system/resource_limits.h"
#include "bus/run_objects.h"
#include "record/run_store.h"
#include "system/systemd.h"

#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <pwd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

namespace nerve {

namespace {

// "A=1 B=2" as {"A=1", "B=2"}: nerved.conf's default_properties.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// TERM, INT and HUP become events on the loop (they end nerved cleanly; runs keep running).
Fd signals_as_fd() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return Fd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
}

std::string why_unavailable(const std::optional<std::string>& cgroup2) {
  if (cgroup2) return "";
  return "no cgroup2 hierarchy is mounted on this machine (see /proc/self/mountinfo); nerve needs cgroup v2 to "
         "contain runs, and starts no command without it";
}

// The label every metric carries: user="NAME" (the uid when it has no name).
Labels metrics_labels() {
  uid_t uid = ::geteuid();
  const passwd* pw = ::getpwuid(uid);
  return {{"user", pw && pw->pw_name ? pw->pw_name : std::to_string(uid)}};
}

void log_reconciliation(const std::vector<ReconcileLine>& lines) {
  std::size_t runs = 0, acted = 0, skipped = 0;
  for (const auto& l : lines) {
    if (l.action == ReconcileAction::Skipped && l.run.empty()) {
      ++skipped;
      continue;
    }
    ++runs;
    acted += l.action != ReconcileAction::Final;
  }
  spdlog::info("startup reconciliation done: {} run(s) looked at, {} needed something, {} folder entries skipped",
               runs, acted, skipped);
}

// Everything nerved is made of, built in this order and torn down in the reverse one.
struct Nerved {
  explicit Nerved(const DaemonOptions& opt)
      : store(opt.runs_dir),
        boot_id(read_boot_id()),
        cgroup2(cgroup_root()),
        metrics(store, metrics_labels(), NERVE_VERSION),
        bus(sdbus::createSessionBusConnection()),
        cgroups(cgroup2.value_or("/sys/fs/cgroup"), loop),
        backend(make_backend(opt, *bus, loop, cgroups)),
        unavailable(why_unavailable(cgroup2)),
        systemd(*backend.systemd),
        owners(loop, *bus),
        holders(loop),
        lifecycle(Deps{systemd, cgroups, loop, store, owners, boot_id, unavailable, &holders, backend.kind},
                  LifecycleOptions{.retry_first = opt.retry_first}),
        launcher(loop, lifecycle),
        object(*bus, loop, lifecycle, launcher, systemd,
               ManagerSettings{.runs_dir = store.path(),
                               .boot_id = boot_id,
                               .default_slice = opt.default_slice,
                               .default_grace_usec = opt.default_grace_usec,
                               .default_properties = words(opt.default_properties),
                               .backend = to_string(backend.kind),
                               .backend_detail = backend.detail}),
        run_objects(*bus, store, launcher, cgroups),
        pruner(loop, store, lifecycle, opt.keep_finished) {
    if (!opt.metrics_file.empty())
      metrics_file.emplace(loop, opt.metrics_file, opt.metrics_interval,
                           [this] { return metrics.text(ExpositionFormat::Prometheus); });
    store.set_observer([this](const std::string& run, const StoreChange& c) {
      run_objects.changed(run, c);
      if (c.receipt) metrics.receipt_written(*c.receipt);
      if (metrics_file) metrics_file->changed();
    });
    object.serve_metrics(metrics, [this] {
      if (metrics_file) metrics_file->changed();
    });
    object.on_frozen_changed([this](const std::string& run) { run_objects.frozen_changed(run); });
    launcher.on_exit([this](const std::string& run, int code, int sig) {
      object.emitRunExited(run, code, sig, to_string(lifecycle.exit_cause(run)));
      run_objects.exit_changed(run);
    });
    loop.attach_bus(*bus);
  }

  void stop_on_signals(int sigfd) {
    loop.watch_fd(sigfd, EPOLLIN, [this, sigfd](std::uint32_t) {
      signalfd_siginfo si{};
      while (::read(sigfd, &si, sizeof si) == sizeof si) {
        spdlog::info("signal {}: stopping; runs keep running and are found again at the next start",
                     strsignal(static_cast<int>(si.ssi_signo)));
        loop.stop();
      }
    });
  }

  // Reconciles, owns the bus name, says it is ready, and serves until a signal. The exit code.
  int serve(int ready_fd) {
    // Own the name first: a second nerved started by mistake must exit before it touches any record.
    // Calls that arrive now wait on the bus until the loop runs, and by then every
    // unfinished run is queued, so no launch of a run is answered before its record is looked at.
    try {
      bus->requestName(kBusName);
    } catch (const sdbus::Error& e) {
      spdlog::error("cannot own {} on the session bus: {} (is another nerved running?)", kBusName, e.getMessage());
      return 1;
    }
    lifecycle.reconcile([this](std::vector<ReconcileLine> lines) {
      log_reconciliation(lines);
      RunStore::trim();  // what reading every record left behind
      pruner.start();
    });
    spdlog::info("ready: {} on the session bus, runs in {}, boot {}, cgroup2 at {}", kBusName, store.path(), boot_id,
                 cgroup2.value_or("(none)"));
    spdlog::info("backend: {}", backend.detail);
    systemd.version([name = to_string(backend.kind)](Result<std::string> version) {
      if (name != "systemd")
        spdlog::info("{}", version ? *version : version.error().message);
      else if (version)
        spdlog::info("systemd user manager: version {}", *version);
      else
        spdlog::error("systemd user manager: unreachable ({})", version.error().message);
    });
    if (!unavailable.empty()) spdlog::error("{}", unavailable);
    if (metrics_file) {
      metrics_file->start();
      spdlog::info("metrics file: {} (for node_exporter's textfile collector)", metrics_file->path());
    }
    if (ready_fd >= 0) {
      (void)!::write(ready_fd, "READY\n", 6);
      ::close(ready_fd);
    }
    loop.run();
    bus->releaseName(kBusName);
    return 0;
  }

  RunStore store;
  std::string boot_id;
  std::optional<std::string> cgroup2;
  // Before everything that may count in it: a call answered while the parts below are torn down.
  RunMetrics metrics;
  std::unique_ptr<sdbus::IConnection> bus;
  EventLoop loop;
  std::optional<MetricsFile> metrics_file;  // on the loop; removes the file when nerved stops
  RealCgroups cgroups;
  Backend backend;          // what holds the runs: the user manager, or a cgroup subtree (backend.h)
  std::string unavailable;  // why no run can be contained ("" when they can)
  Systemd& systemd;
  OwnerWatcher owners;
  RealHolders holders;
  Lifecycle lifecycle;
  ProcessLauncher launcher;
  ManagerObject object;
  RunObjects run_objects;
  Pruner pruner;
};

}  // namespace

int daemon_main(int argc, char** argv) {
  DaemonCommandLine line = parse_daemon_options(std::vector<std::string>(argv + 1, argv + argc));
  std::fputs(line.out.c_str(), stdout);
  std::fputs(line.err.c_str(), stderr);
  if (!line.options) return line.exit_code;
  const DaemonOptions& opt = *line.options;
  // Under systemd (stderr is the journal stream it gave us) the journal, with fields; else stderr.
  bool journal = is_journal_stream(STDERR_FILENO, std::getenv("JOURNAL_STREAM"));
  auto logger = journal ? std::make_shared<spdlog::logger>("nerved", make_journal_sink())
                        : spdlog::stderr_color_mt("nerved");
  spdlog::set_default_logger(logger);
  spdlog::level::level_enum level = spdlog::level::from_str(opt.log_level == "warning" ? "warn" : opt.log_level);
  bool detailed = level <= spdlog::level::debug;
  spdlog::set_pattern(detailed ? "nerved[%P] %H:%M:%S.%f: %l: %v" : "nerved[%P]: %l: %v");
  spdlog::set_level(level);
  if (!opt.config_file.empty()) spdlog::info("configuration: {}", opt.config_file);
  spdlog::info("{}", raise_fd_limit());

  try {
    Fd sigfd = signals_as_fd();
    Nerved nerved(opt);
    nerved.stop_on_signals(sigfd.get());
    return nerved.serve(opt.ready_fd);
  } catch (const sdbus::Error& e) {
    spdlog::error("{}: {}", e.getName(), e.getMessage());
    if (e.getName().find("NoReply") == std::string::npos && std::getenv("DBUS_SESSION_BUS_ADDRESS") == nullptr)
      spdlog::error("DBUS_SESSION_BUS_ADDRESS is not set: nerved needs a session bus");
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}

}  // namespace nerve
