// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ctl/bus_error.h"

#include <cstdio>
#include <cstdlib>

namespace nerve::ctl {

namespace {

// What to tell a person when the bus call itself failed, by the D-Bus error name.
std::string explain(const std::string& n, const std::string& message, int& code) {
  code = kExitError;
  if (n == "org.freedesktop.DBus.Error.ServiceUnknown" || n == "org.freedesktop.DBus.Error.NameHasNoOwner") {
    code = kExitUnavailable;
    return "nerved is not running (no owner of org.nerve.Lifecycle1 on the session bus). Start it with "
           "'systemctl --user start nerved' or run 'nerved &'.";
  }
  if (n == "org.freedesktop.DBus.Error.NoReply" || n == "org.freedesktop.DBus.Error.Timeout") {
    code = kExitUnavailable;
    return "nerved did not answer (" + message + "); it may have stopped or be overloaded.";
  }
  if (n.rfind("org.nerve.Lifecycle1.Error.", 0) == 0) return message + " [" + n + "]";
  if (n.rfind("org.freedesktop.DBus.Error.", 0) == 0 || n.rfind("System.Error.", 0) == 0) {
    code = kExitUnavailable;
    const char* addr = std::getenv("DBUS_SESSION_BUS_ADDRESS");
    return "cannot reach the session bus (DBUS_SESSION_BUS_ADDRESS=" + std::string(addr ? addr : "unset") +
           "): " + message + " [" + n + "]. nerve needs a user session with a session bus.";
  }
  return message + " [" + n + "]";
}

}  // namespace

int report_bus_error(const Verb& verb, const BusFailure& failure) {
  int code;
  std::string msg = explain(failure.name, failure.message, code);
  std::fprintf(stderr, "nervectl %s: %s\n", verb.name, msg.c_str());
  if (verb.operands.command) {
    std::fprintf(stderr, "nervectl %s: the command was not started.\n", verb.name);
    return kExitNotLaunched;
  }
  return code;
}

}  // namespace nerve::ctl
