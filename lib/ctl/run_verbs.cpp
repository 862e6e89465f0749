// SPDX-License-Identifier: LGPL-2.1-or-later
// The verbs that act on one run, all run by the front (front.h) through libnerve (nerve.h: one bus
// call each): reap and cancel (both print the receipt), freeze, thaw, forget.
#include "ctl/bus_error.h"
#include "ctl/receipt.h"
#include "ctl/verb_handlers.h"

#include "libnerve/include/nerve.h"

#include <csignal>

namespace nerve::ctl {

namespace {

// What a call of libnerve answered: 0, or the failure told (R < 0, E set).
int told(const Call& c, int r, nerve_error& e) {
  if (r >= 0) return 0;
  int code = report_bus_error(c.verb, BusFailure{e.name ? e.name : "System.Error.EIO", e.message ? e.message : ""});
  nerve_error_free(&e);
  return code;
}

// The answer of a Reap or Cancel: the receipt printed, or the failure told.
int receipt_of(const Call& c, int r, nerve_receipt* receipt, nerve_error& e) {
  if (r < 0) return told(c, r, e);
  int code = print_receipt(c.args, receipt->outcome, receipt->json);
  nerve_receipt_free(receipt);
  return code;
}

// METHOD(run) with no answer but success.
int run_call(const Call& c, int (*method)(const char*, nerve_error*)) {
  nerve_error e = NERVE_ERROR_NULL;
  return told(c, method(c.args.run.c_str(), &e), e);
}

}  // namespace

// A Reap or Cancel waits the grace it gives, or without one the run's own grace (libnerve bounds it).
int reap(const Call& c) {
  nerve_error e = NERVE_ERROR_NULL;
  nerve_receipt* receipt = nullptr;
  int r = nerve_reap(c.args.run.c_str(), c.args.grace_usec, &receipt, &e);
  return receipt_of(c, r, receipt, e);
}

int cancel(const Call& c) {
  const VerbArgs& a = c.args;
  nerve_error e = NERVE_ERROR_NULL;
  nerve_receipt* receipt = nullptr;
  int r = nerve_cancel(a.run.c_str(), a.signal ? a.signal : SIGTERM, a.grace_usec, &receipt, &e);
  return receipt_of(c, r, receipt, e);
}

int freeze(const Call& c) { return run_call(c, nerve_freeze); }
int thaw(const Call& c) { return run_call(c, nerve_thaw); }
int forget(const Call& c) { return run_call(c, nerve_forget); }

}  // namespace nerve::ctl
