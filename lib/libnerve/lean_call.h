// SPDX-License-Identifier: LGPL-2.1-or-later
// One method call of libnerve to nerved (org.nerve.Lifecycle1.Manager) with sd-bus (libsystemd) on a
// session bus connection of its own, for every call that takes a run id (nerve.h: contain, reap,
// cancel, freeze, thaw, forget, status; so for each verb nervectl's front runs itself). No sdbus-c++ and no round trip before the call: sd-bus
// sends the authentication in one write and, once dbus-daemon accepts it, the Hello it requires and
// this call back to back, so the call costs one round trip after the authentication's, where a
// connection set up first costs two.
//
// The wait for the reply is bounded by a deadline of the call's own, from when it was made: the loop
// sleeps in sd_bus_wait until the reply comes or the deadline passes, and then fails the call with
// org.freedesktop.DBus.Error.Timeout naming the bound (nervectl: exit 69, "nerved did not answer").
// A Reap or Cancel that gives no grace waits the run's own grace, which nerved knows: such a call
// asks the run object's GraceUSec along with it (no round trip of its own) and, once it is answered,
// waits reap_call_timeout_usec of that grace; until then, the bound of a call that waits for no reap.
// A launch that gives no grace may relaunch, whose reap of the earlier attempt takes nerved's default
// grace (nerved.conf): its call is bounded by the built-in default grace first and, only if that bound
// runs out, asks the manager's DefaultGraceUSec and waits that grace plus the margin instead. The
// common launch, answered well within the bound, makes no query.
#pragma once


#include "libnerve/include/nerve.h"

#include <cstdint>
#include <string>

struct sd_bus;
struct sd_bus_message;

namespace nerve::lib {

// Why a call failed, as D-Bus names it (the bus's error, nerved's org.nerve.Lifecycle1.Error.*, or
// the errno of a connection that could not be made, e.g. System.Error.ECONNREFUSED), with the errno
// sd-bus gives that name (nerve.h's return value).
struct CallFailure {
  std::string name;
  std::string message;
  int errno_value = 0;
};

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
  // Bounds the wait by the grace of run RUN instead (a Reap or Cancel with grace 0), asked of nerved
  // along with the call.
  void bound_by_grace_of(const std::string& run) { grace_run_ = run; }
  // Bounds the wait by nerved's default grace (a Contain with grace 0), asked only once the bound
  // given at construction has run out.
  void bound_by_default_grace() { ask_default_grace_ = true; }
  // Sends the call, waits for its reply and reads it by TYPES ("" for none; sd_bus_message_read:
  // strings stay valid as long as this object). false when the call failed: failure() says why.
  bool read(const char* types, ...);
  const CallFailure& failure() const { return failure_; }
  // Closes the connection (before an exec: the command inherits no bus fd).
  void close();
  // The connection, to add a match to before read(); release() hands it over (a Launch's, which
  // owns the run), and it is then the caller's to close.
  sd_bus* bus() { return bus_; }
  // The unique name that sent the reply ("" before it came).
  std::string reply_sender() const;
  sd_bus* release() {
    sd_bus* b = bus_;
    bus_ = nullptr;
    return b;
  }
  // The failure as nerve.h returns it: -errno, with *ERROR filled.
  int fail_into(nerve_error* error) const;
  // The answer M to the query of the run's grace (bound_by_grace_of); sets the bound from it.
  void grace_answered(sd_bus_message* m);
  // The answer M to the query of nerved's default grace (bound_by_default_grace).
  void default_grace_answered(sd_bus_message* m);

 private:
  void fail_errno(int r, const char* what);
  bool send();
  bool wait_for_reply();
  bool timed_out();
  // At the bound of a call bound_by_default_grace: asks the default grace (once); false if asked before.
  bool ask_default_grace();

  sd_bus* bus_ = nullptr;
  sd_bus_message* call_ = nullptr;
  sd_bus_message* reply_ = nullptr;
  std::uint64_t timeout_usec_;
  std::uint64_t sent_usec_ = 0;      // CLOCK_MONOTONIC when the call was made
  std::string grace_run_;            // the run whose grace bounds the wait ("" for none)
  std::string bound_why_;            // what the bound is, for the timeout's message
  bool ask_default_grace_ = false;   // at the bound, ask nerved's default grace (once)
  bool failed_ = false;
  CallFailure failure_;
};

}  // namespace nerve::lib
