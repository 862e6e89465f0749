// SPDX-License-Identifier: LGPL-2.1-or-later
// Who sent a bus call: its uid and pid, from one GetConnectionCredentials to dbus-daemon (which has
// them from the connection's socket). sdbus-c++'s getCredsUid() and getCredsPid() make one such call
// each, synchronously, and read /proc/PID/status besides (sd-bus's augmentation): two round trips that
// stall nerved's one thread and about thirty reads per Launch or Contain.
//
// BusCallers asks asynchronously, and keeps the answer per unique name: a unique name
// (":1.42") is never given to another connection while the bus runs, and the uid and pid of a
// connection are those of the socket's peer when it connected, so they cannot change. An engine's
// second and later calls then cost no round trip to dbus-daemon, and calls of a new client that
// arrive before the answer share its one question. A well-known name is never kept. The cache holds
// the last kKept names; an older one is asked again. A failed question is not kept.
#pragma once

#include "base/result.h"

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace sdbus {
class IConnection;
class IProxy;
}  // namespace sdbus

namespace nerve {

struct BusCaller {
  uid_t uid = static_cast<uid_t>(-1);
  pid_t pid = 0;  // 0 when the bus does not know it
};

class BusCallers {
 public:
  using Done = std::function<void(Result<BusCaller>)>;
  // How one sender's credentials are asked; 'done' is called once, later, on the event loop.
  using Ask = std::function<void(const std::string& sender, Done done)>;
  static constexpr std::size_t kKept = 1024;

  // Asks dbus-daemon on 'bus': GetConnectionCredentials, asynchronous, within dbus_daemon::kCallTimeout.
  // An error answer is passed on as it is (its D-Bus name and message: the caller is gone, for one).
  explicit BusCallers(sdbus::IConnection& bus);
  explicit BusCallers(Ask ask);
  ~BusCallers();

  // The caller 'sender' to 'done': at once when it is kept, else when the question is answered.
  void of(const std::string& sender, Done done);

 private:
  void answered(const std::string& sender, const Result<BusCaller>& caller);

  std::unique_ptr<sdbus::IProxy> dbus_;  // with the default Ask; its end cancels the questions in flight
  Ask ask_;
  std::unordered_map<std::string, BusCaller> known_;
  std::deque<std::string> order_;  // oldest first
  std::unordered_map<std::string, std::vector<Done>> waiting_;  // asked, not yet answered
};

}  // namespace nerve
