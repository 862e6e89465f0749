// Who sent the bus call being processed: its uid and pid, from one GetConnectionCredentials to
// dbus-daemon (which has them from the connection's socket). sdbus-c++'s getCredsUid() and
// getCredsPid() make one such call each and read /proc/PID/status besides (sd-bus's augmentation):
// two synchronous round trips and about thirty reads per Launch or Contain.
#pragma once

#include <sys/types.h>

#include <string>

namespace sdbus {
class IConnection;
}

namespace nerve {

struct BusCaller {
  uid_t uid = static_cast<uid_t>(-1);
  pid_t pid = 0;  // 0 when the bus does not know it
};

// Throws sdbus::Error when the bus cannot say (the caller is gone, for one).
BusCaller bus_caller(sdbus::IConnection& bus, const std::string& sender);

}  // namespace nerve
