#include "daemon.h"

#include "cgroup.h"
#include "cgroup_watch.h"
#include "cgroups.h"
#include "daemon_options.h"
#include "event_loop.h"
#include "host.h"
#include "lifecycle.h"
#include "manager_object.h"
#include "owners.h"
#include "process_launcher.h"
#include "resource_limits.h"
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

int daemon_main(int argc, char** argv) {
  DaemonCommandLine line = parse_daemon_options(std::vector<std::string>(argv + 1, argv + argc));
  std::fputs(line.out.c_str(), stdout);
  std::fputs(line.err.c_str(), stderr);
  if (!line.options) return line.exit_code;
  const DaemonOptions& opt = *line.options;
  auto logger = spdlog::stderr_color_mt("nerved");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern(opt.verbose ? "nerved[%P] %H:%M:%S.%f: %l: %v" : "nerved[%P]: %l: %v");
  spdlog::set_level(opt.verbose ? spdlog::level::debug : spdlog::level::info);

  spdlog::info("{}", raise_fd_limit());
  try {
    // Signals become events on the loop: TERM and INT end nerved cleanly (runs keep running).
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    Fd sigfd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));

    RunStore store(opt.runs_dir);
    std::string boot_id = read_boot_id();
    std::string unavailable;
    auto root = cgroup_root();
    if (!root)
      unavailable = "no cgroup2 hierarchy is mounted on this machine (see /proc/self/mountinfo); nerve needs "
                    "cgroup v2 to contain runs, and starts no command without it";

    auto bus = sdbus::createSessionBusConnection();
    EventLoop loop;
    CgroupWatcher watcher(loop);
    RealCgroups cgroups(root.value_or("/sys/fs/cgroup"), watcher);
    SdbusSystemd systemd(*bus);
    OwnerWatcher owners(loop, *bus);
    Lifecycle lifecycle(Deps{systemd, cgroups, loop, store, owners, boot_id, unavailable});
    ProcessLauncher launcher(loop, lifecycle);
    ManagerObject object(*bus, lifecycle, launcher);
    RunObjects run_objects(*bus, store, launcher);
    store.set_observer([&](const std::string& run) { run_objects.changed(run); });
    run_objects.add_all();
    launcher.on_exit([&](const std::string& run, int code, int sig) {
      object.emitRunExited(run, code, sig);
      run_objects.changed(run);
    });
    loop.attach_bus(*bus);
    loop.watch_fd(sigfd.get(), EPOLLIN, [&](std::uint32_t) {
      signalfd_siginfo si{};
      while (::read(sigfd.get(), &si, sizeof si) == sizeof si) {
        spdlog::info("signal {}: stopping; runs keep running and are found again at the next start",
                     strsignal(static_cast<int>(si.ssi_signo)));
        loop.stop();
      }
    });
    // Own the name first: a second nerved started by mistake must exit before it touches any record
    // (issue 8, item 5). Calls that arrive now wait on the bus until the loop runs, and by then every
    // unfinished run is queued, so no launch of a run is answered before its record is looked at.
    try {
      bus->requestName(kBusName);
    } catch (const sdbus::Error& e) {
      spdlog::error("cannot own {} on the session bus: {} (is another nerved running?)", kBusName, e.getMessage());
      return 1;
    }
    lifecycle.reconcile([](std::vector<ReconcileLine> lines) {
      std::size_t runs = 0, acted = 0, skipped = 0;
      for (auto& l : lines) {
        if (l.action == "skipped" && l.run.empty()) {
          ++skipped;
          continue;
        }
        ++runs;
        acted += l.action != "final";
      }
      spdlog::info("startup reconciliation done: {} run(s) looked at, {} needed something, {} folder entries skipped",
                   runs, acted, skipped);
    });
    std::string version_error;
    std::string version = systemd.version(&version_error);
    spdlog::info("ready: {} on the session bus, runs in {}, boot {}, cgroup2 at {}, systemd {}", kBusName,
                 store.path(), boot_id, root.value_or("(none)"),
                 version.empty() ? "unreachable (" + version_error + ")" : version);
    if (!unavailable.empty()) spdlog::error("{}", unavailable);
    if (opt.ready_fd >= 0) {
      (void)!::write(opt.ready_fd, "READY\n", 6);
      ::close(opt.ready_fd);
    }
    loop.run();
    bus->releaseName(kBusName);
    return 0;
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
