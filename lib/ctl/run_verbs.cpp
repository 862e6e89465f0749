// The verbs that act on one run, all run by the front (front.h) with one sd-bus call each
// (lean_call.h): reap and cancel (both print the receipt), freeze, thaw, forget.
#include "ctl/bus_error.h"
#include "ctl/lean_call.h"
#include "ctl/receipt.h"
#include "ctl/verb_handlers.h"

#include "base/conventions.h"

#include <systemd/sd-bus.h>

#include <csignal>

namespace nerve::ctl {

namespace {

// The answer of a Reap or Cancel: the receipt printed, or the failure told.
int receipt_of(LeanCall& call, const Call& c) {
  const char *outcome = nullptr, *receipt = nullptr;
  if (!call.read("ss", &outcome, &receipt)) return report_bus_error(c.verb, call.failure());
  return print_receipt(c.args, outcome, receipt);
}

// A Reap or Cancel waits the grace it gives, or without one the run's own grace (lean_call.h).
void bound_by_grace(LeanCall& call, const VerbArgs& a) {
  if (!a.grace_usec) call.bound_by_grace_of(a.run);
}

// METHOD(run) with no answer but success.
int run_call(const Call& c, const char* method) {
  LeanCall call(method, kCallTimeoutUsec);
  if (call.args()) call.check(sd_bus_message_append(call.args(), "s", c.args.run.c_str()));
  if (!call.read("")) return report_bus_error(c.verb, call.failure());
  return 0;
}

}  // namespace

int reap(const Call& c) {
  const VerbArgs& a = c.args;
  LeanCall call("Reap", reap_call_timeout_usec(a.grace_usec));
  bound_by_grace(call, a);
  if (call.args()) call.check(sd_bus_message_append(call.args(), "st", a.run.c_str(), a.grace_usec));
  return receipt_of(call, c);
}

int cancel(const Call& c) {
  const VerbArgs& a = c.args;
  LeanCall call("Cancel", reap_call_timeout_usec(a.grace_usec));
  bound_by_grace(call, a);
  int signal = a.signal ? a.signal : SIGTERM;
  if (call.args()) call.check(sd_bus_message_append(call.args(), "sit", a.run.c_str(), signal, a.grace_usec));
  return receipt_of(call, c);
}

int freeze(const Call& c) { return run_call(c, "Freeze"); }
int thaw(const Call& c) { return run_call(c, "Thaw"); }
int forget(const Call& c) { return run_call(c, "Forget"); }

}  // namespace nerve::ctl
