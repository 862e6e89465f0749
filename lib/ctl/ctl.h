// nervectl: a table of verbs, each one bus call to nerved plus formatting (verbs.cpp). It holds no
// logic nerved has; the run-id check here is only a convenience, nerved checks again.
//
// Exit codes: 0 success; 1 nerved answered with an error (or reap: refused); 2 usage; 69 nerved or
// the bus cannot be reached; 75 reap: pending_retry; 125 launch: the command was not started.
// After a successful launch, nervectl is the command (exec in place), so its exit code is the command's.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sdbus {
class IConnection;
}

namespace nerve::ctl {

inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnavailable = 69;
inline constexpr int kExitRetry = 75;
inline constexpr int kExitNotLaunched = 125;

// A usage error: printed with the verb's usage line, exit 2.
struct UsageError {
  std::string message;
};

class Client;  // the generated proxy on a session bus connection (verbs.cpp)

struct Context {
  // Connects on first use. Throws sdbus::Error when the bus cannot be reached.
  Client& client();
  // Drops the proxy and closes the connection (before exec, so CMD inherits no bus fd).
  void disconnect();
  void set_call_timeout_usec(std::uint64_t usec);
  Context();
  ~Context();

  std::unique_ptr<Client> client_;
  std::uint64_t timeout_usec_ = 0;
};

struct Verb {
  const char* name;
  const char* usage;
  const char* summary;
  std::function<int(Context&, std::vector<std::string>&)> run;
};

const std::vector<Verb>& verbs();
int ctl_main(int argc, char** argv);

}  // namespace nerve::ctl
