// One method call of nervectl's front to nerved (org.nerve.Lifecycle1.Manager) with sd-bus
// (libsystemd) on a session bus connection of its own, for the verbs the front runs itself (launch,
// reap, cancel, freeze, thaw, forget; front.h). No sdbus-c++ and no round trip before the call: sd-bus sends the authentication in
// one write and, once dbus-daemon accepts it, the Hello it requires and this call back to back, so the
// call costs one round trip after the authentication's, where a connection set up first costs two.
#pragma once

#include "ctl/bus_error.h"

#include <cstdint>

struct sd_bus;
struct sd_bus_message;

namespace nerve::ctl {

class LeanCall {
 public:
  // Opens the connection and makes the call of METHOD; TIMEOUT_USEC bounds the wait for its reply.
  LeanCall(const char* method, std::uint64_t timeout_usec);
  ~LeanCall();
  LeanCall(const LeanCall&) = delete;
  LeanCall& operator=(const LeanCall&) = delete;

  // The call, to append its arguments to (sd_bus_message_append); nullptr once failed.
  sd_bus_message* args() { return failed_ ? nullptr : call_; }
  // Fails the call when R, what an append returned, is negative.
  void check(int r);
  // Sends the call, waits for its reply and reads it by TYPES ("" for none; sd_bus_message_read:
  // strings stay valid as long as this object). false when the call failed: failure() says why.
  bool read(const char* types, ...);
  const BusFailure& failure() const { return failure_; }
  // Closes the connection (before an exec: the command inherits no bus fd).
  void close();

 private:
  void fail_errno(int r, const char* what);
  bool wait_for_reply();

  sd_bus* bus_ = nullptr;
  sd_bus_message* call_ = nullptr;
  sd_bus_message* reply_ = nullptr;
  std::uint64_t timeout_usec_;
  bool failed_ = false;
  BusFailure failure_;
};

}  // namespace nerve::ctl
