// SPDX-License-Identifier: LGPL-2.1-or-later
// The calls about one run by its id (nerve.h): Reap and Cancel (with their receipt), Freeze, Thaw,
// Forget, and GetRun (status.cpp reads its answer); one sd-bus call each (lean_call.h).
#include "libnerve/error.h"
#include "libnerve/lean_call.h"
#include "libnerve/receipt.h"
#include "libnerve/status.h"

#include "base/conventions.h"

#include <systemd/sd-bus.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <new>
#include <string>

namespace nerve::lib {

namespace {

// The answer of a Reap or Cancel: its receipt (the outcome is in it too).
int receipt_of(LeanCall& call, nerve_receipt** ret, nerve_error* error) {
  const char *outcome = nullptr, *text = nullptr;
  if (!call.read("ss", &outcome, &text)) return call.fail_into(error);
  try {
    nerve_receipt* r = receipt_from_json(nlohmann::json::parse(text), text);
    if (!r) return set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
    *ret = r;
    return 0;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return own_error(error, "BadReceipt", std::string("nerved answered a receipt that does not parse: ") + e.what(),
                     EBADMSG);
  }
}

// A Reap or Cancel waits the grace it gives, or without one the run's own grace (lean_call.h).
int reap_call(const char* method, const char* run, int signal, std::uint64_t grace, nerve_receipt** ret,
              nerve_error* error) {
  if (!run || !ret) return own_error(error, "InvalidArgument", "no run id or no place for the receipt", EINVAL);
  LeanCall call(method, reap_call_timeout_usec(grace));
  if (!grace) call.bound_by_grace_of(run);
  if (call.args())
    call.check(signal ? sd_bus_message_append(call.args(), "sit", run, signal, grace)
                      : sd_bus_message_append(call.args(), "st", run, grace));
  return receipt_of(call, ret, error);
}

// METHOD(run) with no answer but success.
int run_call(const char* method, const char* run, nerve_error* error) {
  if (!run) return own_error(error, "InvalidArgument", "no run id", EINVAL);
  LeanCall call(method, kCallTimeoutUsec);
  if (call.args()) call.check(sd_bus_message_append(call.args(), "s", run));
  if (!call.read("")) return call.fail_into(error);
  return 0;
}

int status_call(const char* run, nerve_status** ret, nerve_error* error) {
  if (!run || !ret) return own_error(error, "InvalidArgument", "no run id or no place for the status", EINVAL);
  LeanCall call("GetRun", kCallTimeoutUsec);
  if (call.args()) call.check(sd_bus_message_append(call.args(), "s", run));
  const char* text = nullptr;
  if (!call.read("s", &text)) return call.fail_into(error);
  return status_from_text(text, ret, error);
}

// Runs F, turning an exception (only std::bad_alloc can come) into the error it is.
template <typename F>
int guarded(nerve_error* error, F f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  } catch (const std::exception& e) {
    return own_error(error, "Internal", e.what(), EIO);
  }
}

}  // namespace

}  // namespace nerve::lib

extern "C" {

using nerve::lib::guarded;

int nerve_reap(const char* run, uint64_t grace_usec, nerve_receipt** ret, nerve_error* error) {
  return guarded(error, [&] { return nerve::lib::reap_call("Reap", run, 0, grace_usec, ret, error); });
}

int nerve_cancel(const char* run, int signal, uint64_t grace_usec, nerve_receipt** ret, nerve_error* error) {
  if (signal <= 0)
    return nerve::lib::own_error(error, "InvalidArgument", "signal " + std::to_string(signal) + " is not 1..64", EINVAL);
  return guarded(error, [&] { return nerve::lib::reap_call("Cancel", run, signal, grace_usec, ret, error); });
}

int nerve_freeze(const char* run, nerve_error* error) {
  return guarded(error, [&] { return nerve::lib::run_call("Freeze", run, error); });
}

int nerve_thaw(const char* run, nerve_error* error) {
  return guarded(error, [&] { return nerve::lib::run_call("Thaw", run, error); });
}

int nerve_forget(const char* run, nerve_error* error) {
  return guarded(error, [&] { return nerve::lib::run_call("Forget", run, error); });
}

int nerve_status_get(const char* run, nerve_status** ret, nerve_error* error) {
  return guarded(error, [&] { return nerve::lib::status_call(run, ret, error); });
}

}  // extern "C"
