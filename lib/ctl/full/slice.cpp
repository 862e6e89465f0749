// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl slice set [SLICE] -p KEY=VALUE...`: SetSliceProperties (default nerve.slice). nerved reads
// the properties back from systemd and refuses (InvalidProperty) what did not take, so "set" is true.
#include "ctl/full/client.h"
#include "ctl/full/control_options.h"
#include "ctl/verb_handlers.h"

#include <cstdio>

namespace nerve::ctl {

int slice(Context& ctx, const VerbArgs& a) {
  std::string name = a.slice_operand.empty() ? "nerve.slice" : a.slice_operand;
  ctx.client().SetSliceProperties(name, property_pairs(a.controls.properties));
  std::printf("slice %s: set", name.c_str());
  for (const auto& p : a.controls.properties) std::printf(" %s", p.c_str());
  std::printf("\n");
  return 0;
}

}  // namespace nerve::ctl
