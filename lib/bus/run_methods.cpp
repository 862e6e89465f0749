// SPDX-License-Identifier: LGPL-2.1-or-later
// The methods that act on one run: Reap, Cancel, ReapAttempt, Freeze, Thaw, Forget (manager_object.h).
// Each is nerved's own user's: the caller's uid is checked first.
#include "bus/manager_calls.h"

#include "base/errors.h"
#include "base/run_id.h"

namespace nerve {

void ManagerObject::Reap(sdbus::Result<std::string, std::string>&& result, std::string run, uint64_t grace_usec) try {
  final_reap("Reap", std::move(result), run, 0, grace_usec, Cause::Reaped);
} catch (...) {
  rethrow_named("Reap");
}

void ManagerObject::Cancel(sdbus::Result<std::string, std::string>&& result, std::string run, int32_t signal,
                           uint64_t grace_usec) try {
  value_or_throw(check_run_id(run));
  value_or_throw(check_grace(grace_usec));
  if (signal < 1 || signal > 64)
    throw_bus_error(error::InvalidArgument, "signal " + std::to_string(signal) + " is not a signal number (1..64)");
  final_reap("Cancel", std::move(result), run, signal, grace_usec, Cause::Cancelled);
} catch (...) {
  rethrow_named("Cancel");
}

void ManagerObject::ReapAttempt(sdbus::Result<std::string, std::string>&& result, std::string run, uint32_t attempt,
                                int32_t signal, uint64_t grace_usec) try {
  if (signal < 0 || signal > 64)
    throw_bus_error(error::InvalidArgument, "signal " + std::to_string(signal) + " is not 0 or a signal number (1..64)");
  if (attempt == 0) throw_bus_error(error::InvalidArgument, "attempt 0 does not exist; attempts count from 1");
  final_reap("ReapAttempt", std::move(result), run, signal, grace_usec, signal ? Cause::Cancelled : Cause::Reaped,
             attempt);
} catch (...) {
  rethrow_named("ReapAttempt");
}

void ManagerObject::final_reap(const char* method, sdbus::Result<std::string, std::string>&& result,
                               const std::string& run, int signal, uint64_t grace_usec, Cause cause, unsigned attempt) {
  AsyncReply reply(std::move(result));
  if (!admit(reply)) return;
  value_or_throw(check_run_id(run));
  value_or_throw(check_grace(grace_usec));
  with_own_caller(method, reply, [this, reply, run, signal, grace_usec, cause, attempt] {
    auto answer = [reply](Result<Receipt> receipt) {
      if (!receipt) return reply.error(receipt.error());
      reply(to_string(receipt->outcome), to_json_text(*receipt));
    };
    if (attempt) return lifecycle_.final_reap_attempt(run, attempt, signal, grace_usec, cause, answer);
    lifecycle_.final_reap(run, signal, grace_usec, cause, answer);
  });
}

void ManagerObject::freezer(sdbus::Result<>&& result, const std::string& run, bool freeze) try {
  AsyncReply<> reply(std::move(result));
  if (!admit(reply)) return;
  value_or_throw(check_run_id(run));
  with_own_caller(freeze ? "Freeze" : "Thaw", reply, [this, reply, run, freeze] {
    lifecycle_.freezer(run, freeze, [this, reply, run](Result<void> r) {
      if (!r) return reply.error(r.error());
      if (frozen_changed_) frozen_changed_(run);
      reply();
    });
  });
} catch (...) {
  rethrow_named(freeze ? "Freeze" : "Thaw");
}

void ManagerObject::Forget(sdbus::Result<>&& result, std::string run) try {
  AsyncReply<> reply(std::move(result));
  if (!admit(reply)) return;
  with_own_caller("Forget", reply, [this, reply, run] {
    value_or_throw(lifecycle_.forget(run));
    reply();
  });
} catch (...) {
  rethrow_named("Forget");
}

}  // namespace nerve
