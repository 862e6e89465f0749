#include "ctl.h"

#include "args.h"

#include <sdbus-c++/Error.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace nerve::ctl {

namespace {

// What to tell a person when the bus call itself failed, by the D-Bus error name.
std::string explain(const sdbus::Error& e, int& code) {
  const std::string& n = e.getName();
  code = kExitError;
  if (n == "org.freedesktop.DBus.Error.ServiceUnknown" || n == "org.freedesktop.DBus.Error.NameHasNoOwner") {
    code = kExitUnavailable;
    return "nerved is not running (no owner of org.nerve.Lifecycle1 on the session bus). Start it with "
           "'systemctl --user start nerved' or run 'nerved &'.";
  }
  if (n == "org.freedesktop.DBus.Error.NoReply" || n == "org.freedesktop.DBus.Error.Timeout") {
    code = kExitUnavailable;
    return "nerved did not answer (" + e.getMessage() + "); it may have stopped or be overloaded.";
  }
  if (n.rfind("org.nerve.Lifecycle1.Error.", 0) == 0) return e.getMessage() + " [" + n + "]";
  if (n.rfind("org.freedesktop.DBus.Error.", 0) == 0 || n.rfind("System.Error.", 0) == 0) {
    code = kExitUnavailable;
    const char* addr = std::getenv("DBUS_SESSION_BUS_ADDRESS");
    return "cannot reach the session bus (DBUS_SESSION_BUS_ADDRESS=" + std::string(addr ? addr : "unset") +
           "): " + e.getMessage() + " [" + n + "]. nerve needs a user session with a session bus.";
  }
  return e.getMessage() + " [" + n + "]";
}

}  // namespace

int ctl_main(int argc, char** argv) {
  Parsed p = parse_args(std::vector<std::string>(argv + 1, argv + argc));
  std::fputs(p.out.c_str(), stdout);
  std::fputs(p.err.c_str(), stderr);
  if (!p.verb) return p.exit_code;
  Context ctx;
  try {
    return p.verb->run(ctx, p.args);
  } catch (const sdbus::Error& e) {
    int code;
    std::string msg = explain(e, code);
    std::fprintf(stderr, "nervectl %s: %s\n", p.verb->name, msg.c_str());
    if (p.verb->operands == Operands::RunAndCommand) {
      std::fprintf(stderr, "nervectl %s: the command was not started.\n", p.verb->name);
      return kExitNotLaunched;
    }
    return code;
  }
}

}  // namespace nerve::ctl
