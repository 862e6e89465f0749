// SPDX-License-Identifier: LGPL-2.1-or-later
// The verbs about nerved as a whole: reconcile (a pass now), sealing (can this host seal runs) and
// metrics (GetMetrics's text, as it is).
#include "ctl/full/client.h"
#include "ctl/output.h"
#include "ctl/verb_handlers.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace nerve::ctl {

using nlohmann::json;

int reconcile(Context& ctx, const VerbArgs& a) {
  ctx.set_call_timeout_usec(kMaxGraceUsec);  // a pass may include reaps, each up to its grace
  auto lines = ctx.client().Reconcile();
  if (a.json) {
    json out = json::array();
    for (auto& l : lines) out.push_back({{"run", l.get<0>()}, {"action", l.get<1>()}, {"detail", l.get<2>()}});
    print_json(out, a.json);
    return 0;
  }
  for (auto& l : lines)
    std::printf("%-32s %-12s %s\n", l.get<0>().c_str(), l.get<1>().c_str(), l.get<2>().c_str());
  return 0;
}

// Whether this host can seal runs (nerved's SealingAvailable and SealingDetail): exit 0 if it can, 1 if not.
int sealing(Context& ctx, const VerbArgs& a) {
  bool available = ctx.client().SealingAvailable();
  std::string detail = ctx.client().SealingDetail();
  if (a.json)
    print_json({{"available", available}, {"detail", detail}}, a.json);
  else
    std::printf("sealing: %s\n  %s\n", available ? "available" : "unavailable", detail.c_str());
  return available ? 0 : kExitError;
}

// nerved's metrics (GetMetrics) in --format, printed as they are.
int metrics(Context& ctx, const VerbArgs& a) {
  std::string text = ctx.client().GetMetrics(a.format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace nerve::ctl
