// Who sent the bus call being processed: its uid and pid, from one GetConnectionCredentials to
// dbus-daemon (which has them from the connection's socket). sdbus-c++'s getCredsUid() and
// getCredsPid() make one such call each and read /proc/PID/status besides (sd-bus's augmentation):
// two synchronous round trips and about thirty reads per Launch or Contain.
//
// BusCallers keeps the answer per unique name: a unique name (":1.42") is never given to
// another connection while the bus runs, and the uid and pid of a connection are those of the
// socket's peer when it connected, so they cannot change. An engine's second and later calls then
// cost no round trip to dbus-daemon (a synchronous one, which stalls nerved's one thread). A
// well-known name is never kept. The cache holds the last kKept names; an older one is asked again.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>

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

class BusCallers {
 public:
  static constexpr std::size_t kKept = 1024;
  explicit BusCallers(sdbus::IConnection& bus) : bus_(bus) {}
  // bus_caller(), asked once per unique name while it is among the last kKept.
  BusCaller of(const std::string& sender);

 private:
  sdbus::IConnection& bus_;
  std::unordered_map<std::string, BusCaller> known_;
  std::deque<std::string> order_;  // oldest first
};

}  // namespace nerve
