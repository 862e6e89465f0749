#include "ctl.h"

#include <sdbus-c++/Error.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace nerve::ctl {

namespace {

void print_help(FILE* out) {
  std::fprintf(out, "Usage: nervectl VERB [OPTIONS] ...\n\n"
                    "Starts workflow runs inside systemd user scopes and reaps them completely, through nerved.\n\n");
  for (const auto& v : verbs()) std::fprintf(out, "  %-44s %s\n", v.usage, v.summary);
  std::fprintf(out, "\nExit codes: 0 ok, 1 error from nerved (reap: refused), 2 usage, 69 nerved or the bus\n"
                    "unreachable, 75 reap pending retry, 125 launch: the command was not started.\n");
}

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
  if (argc < 2) {
    print_help(stderr);
    return kExitUsage;
  }
  std::string name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    print_help(stdout);
    return 0;
  }
  for (const auto& v : verbs()) {
    if (name != v.name) continue;
    std::vector<std::string> args(argv + 2, argv + argc);
    Context ctx;
    try {
      return v.run(ctx, args);
    } catch (const UsageError& e) {
      std::fprintf(stderr, "nervectl %s: %s\nUsage: nervectl %s\n", v.name, e.message.c_str(), v.usage);
      return kExitUsage;
    } catch (const sdbus::Error& e) {
      int code;
      std::string msg = explain(e, code);
      std::fprintf(stderr, "nervectl %s: %s\n", v.name, msg.c_str());
      if (name == "launch") {
        std::fprintf(stderr, "nervectl launch: the command was not started.\n");
        return kExitNotLaunched;
      }
      return code;
    }
  }
  std::fprintf(stderr, "nervectl: unknown verb '%s'\n\n", name.c_str());
  print_help(stderr);
  return kExitUsage;
}

}  // namespace nerve::ctl
