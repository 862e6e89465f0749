// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "ctl/full/events.h"
#include "ctl/verb_handlers.h"

#include "ctl/output.h"

#include "base/fd.h"

#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>

#include <poll.h>
#include <sys/signalfd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <map>

namespace nerve::ctl {

namespace {

using nlohmann::json;

constexpr const char* kRule =
    "type='signal',sender='org.nerve.Lifecycle1',path_namespace='/org/nerve/Lifecycle1'";
constexpr const char* kRunPrefix = "/org/nerve/Lifecycle1/run/";

json value_of(const sdbus::Variant& v) {
  if (v.containsValueOfType<std::string>()) return v.get<std::string>();
  if (v.containsValueOfType<std::int32_t>()) return v.get<std::int32_t>();
  if (v.containsValueOfType<std::uint32_t>()) return v.get<std::uint32_t>();
  if (v.containsValueOfType<std::int64_t>()) return v.get<std::int64_t>();
  if (v.containsValueOfType<std::uint64_t>()) return v.get<std::uint64_t>();
  if (v.containsValueOfType<bool>()) return v.get<bool>();
  if (v.containsValueOfType<double>()) return v.get<double>();
  return "(" + v.peekValueType() + ")";
}

// One event as JSON: time, event (the signal's name), run, and the signal's own fields.
json event_of(sdbus::Message& m) {
  json e = {{"time", now_rfc3339()}, {"event", m.getMemberName()}, {"run", run_of_path(m.getPath())}};
  if (m.getMemberName() == "RunExited") {
    std::string run;
    std::int32_t code = 0, sig = 0;
    m >> run >> code >> sig;
    e["run"] = run;
    e["exit_code"] = code;
    e["signal"] = sig;
  } else if (m.getMemberName() == "PropertiesChanged") {
    std::string iface;
    std::map<std::string, sdbus::Variant> changed;
    m >> iface >> changed;
    e["interface"] = iface;
    e["changed"] = json::object();
    for (const auto& [name, value] : changed) e["changed"][name] = value_of(value);
  } else if (m.getMemberName() == "InterfacesAdded" || m.getMemberName() == "InterfacesRemoved") {
    sdbus::ObjectPath object;  // org.freedesktop.DBus.ObjectManager: the run object that came or went
    m >> object;
    e["run"] = run_of_path(object);
    e["path"] = std::string(object);
  } else {
    e["path"] = m.getPath();
  }
  return e;
}

// "TIME RUN exited code=N signal=M", "TIME RUN changed State=reaped ExitStatus=0", "TIME RUN appeared" /
// "TIME RUN gone" (ObjectManager), "TIME - NAME PATH" for any other signal.
std::string line_of(const json& e) {
  std::string run = e["run"].get<std::string>().empty() ? "-" : e["run"].get<std::string>();
  std::string line = e["time"].get<std::string>() + " " + run + " ";
  if (e["event"] == "RunExited")
    return line + "exited code=" + std::to_string(e["exit_code"].get<int>()) +
           " signal=" + std::to_string(e["signal"].get<int>());
  if (e["event"] == "PropertiesChanged") {
    line += "changed";
    for (const auto& [name, value] : e["changed"].items())
      line += " " + name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    return line;
  }
  if (e["event"] == "InterfacesAdded") return line + "appeared";
  if (e["event"] == "InterfacesRemoved") return line + "gone";
  return line + e["event"].get<std::string>() + " " + e["path"].get<std::string>();
}

void print_event(sdbus::Message& m, JsonMode mode) {
  try {
    json e = event_of(m);
    if (mode)
      std::printf("%s\n", e.dump().c_str());  // JSON lines: one object per line, whatever the mode
    else
      std::printf("%s\n", line_of(e).c_str());
  } catch (const sdbus::Error& err) {
    std::printf("%s (unreadable: %s)\n", m.getMemberName().c_str(), err.getMessage().c_str());
  }
  std::fflush(stdout);
}

// Processes the bus until SIGINT or SIGTERM arrives on SIGFD.
void follow(sdbus::IConnection& bus, int sigfd) {
  for (;;) {
    while (bus.processPendingRequest()) {
    }
    auto pd = bus.getEventLoopPollData();
    pollfd fds[2] = {{pd.fd, pd.events, 0}, {sigfd, POLLIN, 0}};
    if (::poll(fds, 2, pd.getPollTimeout()) < 0 && errno != EINTR) return;
    if (fds[1].revents & POLLIN) return;
  }
}

}  // namespace

std::string run_of_path(const std::string& path) {
  if (path.rfind(kRunPrefix, 0) != 0) return "";
  std::string escaped = path.substr(std::string(kRunPrefix).size()), run;
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '_' && i + 2 < escaped.size() && std::isxdigit(static_cast<unsigned char>(escaped[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(escaped[i + 2]))) {
      run += static_cast<char>(std::strtol(escaped.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      run += escaped[i];
    }
  }
  return run;
}

int events(Context&, const VerbArgs& a) {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  Fd sigfd(::signalfd(-1, &mask, SFD_CLOEXEC));
  if (sigfd.get() < 0) {
    std::perror("nervectl events: signalfd");
    return kExitError;
  }
  auto bus = sdbus::createSessionBusConnection();
  auto slot = bus->addMatch(kRule, [&](sdbus::Message& m) { print_event(m, a.json); });
  std::fprintf(stderr, "Following nerved's signals; stop with Ctrl-C.\n");
  follow(*bus, sigfd.get());
  return 0;
}

}  // namespace nerve::ctl
