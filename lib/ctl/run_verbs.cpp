// The verbs that act on one run (reap aside: reap.cpp): cancel (prints the receipt), freeze, thaw, forget.
#include "client.h"
#include "receipt.h"
#include "verb_handlers.h"

#include <csignal>

namespace nerve::ctl {

int cancel(Context& ctx, const VerbArgs& a) {
  ctx.allow_for_reap(a.grace_usec);
  auto [outcome, receipt_text] = ctx.client().Cancel(a.run, a.signal ? a.signal : SIGTERM, a.grace_usec);
  return print_receipt(a, outcome, receipt_text);
}

int freeze(Context& ctx, const VerbArgs& a) {
  ctx.client().Freeze(a.run);
  return 0;
}

int thaw(Context& ctx, const VerbArgs& a) {
  ctx.client().Thaw(a.run);
  return 0;
}

int forget(Context& ctx, const VerbArgs& a) {
  ctx.client().Forget(a.run);
  return 0;
}

}  // namespace nerve::ctl
