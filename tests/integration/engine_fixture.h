// SPDX-License-Identifier: LGPL-2.1-or-later
// The fixture of the engine API tests (engine_api_test.cpp, and the stress test of many short
// Launches in tests/soak/): the test is its own engine. It talks to nerved with sdbus-c++ on its own
// connection and processes that connection's events in a bounded loop of its own (poll on the
// connection's fd).
#pragma once

#include "nerved_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace nerve::itest {

inline constexpr const char* kService = "org.nerve.Lifecycle1";
inline constexpr const char* kManagerPath = "/org/nerve/Lifecycle1";
inline constexpr const char* kManager = "org.nerve.Lifecycle1.Manager";
inline constexpr const char* kRunIface = "org.nerve.Lifecycle1.Run";
inline constexpr std::uint64_t kGraceUsec = kShortGraceUsec;  // every Launch here: short grace

using Options = std::map<std::string, sdbus::Variant>;

// The object path of run RUN (docs/dbus-api.md, "Run object paths"), from libsystemd's own
// sd_bus_path_encode, independently of nerved's bus_label.h.
inline std::string run_path(const std::string& run) {
  char* path = nullptr;
  if (::sd_bus_path_encode((std::string(kManagerPath) + "/run").c_str(), run.c_str(), &path) < 0 || !path) return "";
  std::string out = path;
  std::free(path);
  return out;
}

// The options of an ordinary Launch here: short grace, reaped when its command exits.
inline Options launch_options() {
  Options o;
  o["grace_usec"] = sdbus::Variant(kGraceUsec);
  o["reap_on_exit"] = sdbus::Variant(true);
  return o;
}

// The environment of a launched command.
inline std::vector<std::string> plain_env() { return {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C"}; }

// A RunExited signal as the engine heard it.
struct Exited {
  std::string run;
  int exit_code;
  int signal;
  std::string cause;
};

// The test as an engine: its own sdbus-c++ connection to nerved, RunExited and a run's
// PropertiesChanged heard in its own bounded loop (pump_until), Launch/Reap/Cancel made on it.
class AnEngine : public NervedTest {
 protected:
  void TearDown() override {
    // The engine's connection owns its runs; it goes before the fixture kills what is left.
    run_proxies_.clear();
    manager_.reset();
    bus_.reset();
    NervedTest::TearDown();
  }

  // The test's own connection and a proxy of the manager, subscribed to RunExited.
  void connect() {
    bus_ = sdbus::createSessionBusConnection();
    manager_ = sdbus::createProxy(*bus_, kService, kManagerPath);
    manager_->uponSignal("RunExited").onInterface(kManager).call([this](const std::string& run, int32_t code, int32_t sig, const std::string& cause) {
      exited_.push_back({run, code, sig, cause});
    });
    manager_->finishRegistration();
  }

  // Subscribes to PropertiesChanged of RUN's object (which need not exist yet); State values are
  // appended to states_[run].
  sdbus::IProxy& watch_run(const std::string& run) {
    auto proxy = sdbus::createProxy(*bus_, kService, run_path(run));
    proxy->uponSignal("PropertiesChanged")
        .onInterface("org.freedesktop.DBus.Properties")
        .call([this, run](const std::string& iface, const std::map<std::string, sdbus::Variant>& changed,
                          const std::vector<std::string>&) {
          if (iface != kRunIface) return;
          auto it = changed.find("State");
          if (it != changed.end()) states_[run].push_back(it->second.get<std::string>());
        });
    proxy->finishRegistration();
    run_proxies_[run] = std::move(proxy);
    return *run_proxies_[run];
  }

  // Processes the connection's events until DONE() or TIMEOUT; DONE() at the end.
  bool pump_until(const std::function<bool()>& done, milliseconds timeout = kEventTimeout) {
    auto deadline = Clock::now() + timeout;
    for (;;) {
      while (bus_->processPendingRequest()) {
      }
      if (done()) return true;
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return done();
      auto poll_data = bus_->getEventLoopPollData();
      pollfd p{poll_data.fd, poll_data.events, 0};
      ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
    }
  }

  std::optional<Exited> exited_of(const std::string& run) const {
    for (const auto& e : exited_)
      if (e.run == run) return e;
    return std::nullopt;
  }

  bool saw_state(const std::string& run, const std::string& state) {
    const auto& s = states_[run];
    return std::find(s.begin(), s.end(), state) != s.end();
  }

  template <typename T>
  T run_property(const std::string& run, const std::string& name) {
    return run_proxies_.at(run)->getProperty(name).onInterface(kRunIface).get<T>();
  }

  // Launch on the test's connection with stdin /dev/null and OUT_FD as stdout and stderr. The fd
  // copies made for the message are closed before it returns (so the caller's pipe can reach EOF).
  std::pair<std::string, pid_t> launch(const std::string& run, const std::vector<std::string>& argv, int out_fd,
                                       Options options = launch_options()) {
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) throw std::runtime_error("open /dev/null");
    sdbus::ObjectPath object;
    std::uint32_t pid = 0;
    {
      std::vector<sdbus::UnixFd> stdio;
      stdio.emplace_back(devnull, sdbus::adopt_fd);
      stdio.emplace_back(out_fd);  // dup
      stdio.emplace_back(out_fd);  // dup
      manager_->callMethod("Launch")
          .onInterface(kManager)
          .withArguments(run, argv, plain_env(), tmp_, stdio, options)
          .storeResultsTo(object, pid);
    }
    return {object, static_cast<pid_t>(pid)};
  }

  std::tuple<std::string, std::string> reap(const std::string& run, std::uint64_t grace_usec = 0) {
    std::string outcome, receipt_text;
    manager_->callMethod("Reap").onInterface(kManager).withArguments(run, grace_usec).storeResultsTo(outcome,
                                                                                                      receipt_text);
    return {outcome, receipt_text};
  }

  std::tuple<std::string, std::string> cancel(const std::string& run, int sig, std::uint64_t grace_usec = 0) {
    std::string outcome, receipt_text;
    manager_->callMethod("Cancel")
        .onInterface(kManager)
        .withArguments(run, static_cast<std::int32_t>(sig), grace_usec)
        .storeResultsTo(outcome, receipt_text);
    return {outcome, receipt_text};
  }


  // The pids in RUN's cgroup now, tracked for TearDown (escapers: they must be gone by then).
  void track_run_processes(const std::string& run) {
    std::istringstream procs(read_file(cgroup_folder(record(run).leaf) + "/cgroup.procs").value_or(""));
    for (pid_t pid; procs >> pid;) track(pid, true);
  }

  std::unique_ptr<sdbus::IConnection> bus_;
  std::unique_ptr<sdbus::IProxy> manager_;
  std::map<std::string, std::unique_ptr<sdbus::IProxy>> run_proxies_;
  std::vector<Exited> exited_;
  std::map<std::string, std::vector<std::string>> states_;
};

}  // namespace nerve::itest
