// SPDX-License-Identifier: LGPL-2.1-or-later
// A receipt (receipt.json, as Reap, Cancel and GetRun give it) printed for a person: the outcome, the
// kill, the time, why the run ended (cause) and what it used (usage). A figure the host did not offer
// (null in the receipt) is printed as "n/a", never as 0.
#pragma once

#include "ctl/ctl.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace nerve::ctl {

// The receipt of a Reap or Cancel of A.run (JSON with --json); returns the exit code its outcome gives:
// 0 complete or no_scope, 75 pending_retry, 1 refused.
int print_receipt(const VerbArgs& a, const std::string& outcome, const std::string& receipt_text);

// "cause: ..." and the usage lines of receipt R, as reap, cancel and status print them.
void print_cause_and_usage(const nlohmann::json& r);

}  // namespace nerve::ctl
