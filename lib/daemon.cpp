#include "daemon.h"

#include "event_loop.h"
#include "host.h"
#include "lifecycle.h"
#include "manager_object.h"
#include "owners.h"
#include "process_launcher.h"
#include "real_cgroups.h"
#include "run_objects.h"
#include "run_store.h"
#include "systemd.h"

#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

namespace nerve {

namespace {

struct Options {
  std::string runs_dir;
  int ready_fd = -1;
  bool verbose = false;
};

void usage(FILE* out) {
  std::fprintf(out,
               "Usage: nerved [--runs-dir DIR] [--ready-fd FD] [--verbose]\n"
               "\n"
               "Keeps every run of a workflow in its own systemd user scope and reaps it completely.\n"
               "Owns org.nerve.Lifecycle1 on the session bus.\n"
               "\n"
               "  --runs-dir DIR  where run records live (default $XDG_STATE_HOME/nerve/runs)\n"
               "  --ready-fd FD   write \"READY\\n\" to FD and close it once the bus name is owned\n"
               "  --verbose       log debug lines\n");
}

bool parse(int argc, char** argv, Options& o, int& exit_code) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nerved: %s needs a value\n", name);
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "--runs-dir") {
      const char* v = value("--runs-dir");
      if (!v) return exit_code = 2, false;
      o.runs_dir = v;
    } else if (a == "--ready-fd") {
      const char* v = value("--ready-fd");
      if (!v) return exit_code = 2, false;
      o.ready_fd = std::atoi(v);
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return exit_code = 0, false;
    } else {
      std::fprintf(stderr, "nerved: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return exit_code = 2, false;
    }
  }
  if (o.runs_dir.empty()) o.runs_dir = default_runs_dir();
  if (o.runs_dir.front() != '/') {
    std::fprintf(stderr, "nerved: --runs-dir must be an absolute path, not '%s'\n", o.runs_dir.c_str());
    return exit_code = 2, false;
  }
  return true;
}

}  // namespace

namespace {

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
  explicit Nerved(const std::string& runs_dir)
      : store(runs_dir),
        boot_id(read_boot_id()),
        cgroup2(cgroup_root()),
        unavailable(why_unavailable(cgroup2)),
        bus(sdbus::createSessionBusConnection()),
        cgroups(cgroup2.value_or("/sys/fs/cgroup"), loop),
        systemd(*bus, loop),
        owners(loop, *bus),
        lifecycle(Deps{systemd, cgroups, loop, store, owners, boot_id, unavailable}),
        launcher(loop, lifecycle),
        object(*bus, lifecycle, launcher, store.path(), boot_id),
        run_objects(*bus, store, launcher) {
    store.set_observer([this](const std::string& run) { run_objects.changed(run); });
    run_objects.add_all();
    launcher.on_exit([this](const std::string& run, int code, int sig) {
      object.emitRunExited(run, code, sig);
      run_objects.changed(run);
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
    // Reconcile before owning the name: every unfinished run is queued first, so no launch of it can
    // be answered before its record is looked at (the calls of one run are serialised).
    lifecycle.reconcile(log_reconciliation);
    try {
      bus->requestName(kBusName);
    } catch (const sdbus::Error& e) {
      spdlog::error("cannot own {} on the session bus: {} (is another nerved running?)", kBusName, e.getMessage());
      return 1;
    }
    spdlog::info("ready: {} on the session bus, runs in {}, boot {}, cgroup2 at {}", kBusName, store.path(), boot_id,
                 cgroup2.value_or("(none)"));
    systemd.version([](Result<std::string> version) {
      if (version)
        spdlog::info("systemd user manager: version {}", *version);
      else
        spdlog::error("systemd user manager: unreachable ({})", version.error().message);
    });
    if (!unavailable.empty()) spdlog::error("{}", unavailable);
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
  std::string unavailable;
  std::unique_ptr<sdbus::IConnection> bus;
  EventLoop loop;
  RealCgroups cgroups;
  SdbusSystemd systemd;
  OwnerWatcher owners;
  Lifecycle lifecycle;
  ProcessLauncher launcher;
  ManagerObject object;
  RunObjects run_objects;
};

}  // namespace

int daemon_main(int argc, char** argv) {
  Options opt;
  int code = 0;
  if (!parse(argc, argv, opt, code)) return code;
  auto logger = spdlog::stderr_color_mt("nerved");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern(opt.verbose ? "nerved[%P] %H:%M:%S.%f: %l: %v" : "nerved[%P]: %l: %v");
  spdlog::set_level(opt.verbose ? spdlog::level::debug : spdlog::level::info);

  try {
    Fd sigfd = signals_as_fd();
    Nerved nerved(opt.runs_dir);
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
