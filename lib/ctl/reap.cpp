// `nervectl reap RUN`: one Reap call (lean_call.h), the receipt printed (receipt.h).
#include "args.h"
#include "lean_call.h"
#include "receipt.h"
#include "verb_handlers.h"

#include <systemd/sd-bus.h>

namespace nerve::ctl {

int reap(const VerbArgs& a) {
  LeanCall call("Reap", reap_call_timeout_usec(a.grace_usec));
  if (call.args()) call.check(sd_bus_message_append(call.args(), "st", a.run.c_str(), a.grace_usec));
  const char *outcome = nullptr, *receipt = nullptr;
  if (!call.read("ss", &outcome, &receipt)) return report_bus_error(*find_verb("reap"), call.failure());
  return print_receipt(a, outcome, receipt);
}

}  // namespace nerve::ctl
