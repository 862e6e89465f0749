// SPDX-License-Identifier: LGPL-2.1-or-later
// The first step of every reap: given the record and what systemd and the cgroup tree say now, is
// there a scope that is provably ours to stop? A pure function, so every rule has a unit test.
//
// The rules, in order:
//  1. The record is from another boot: nothing of it can be alive; never signal (no_scope).
//  2. The query failed (bus error, timeout): we know nothing; try again later (pending_retry).
//     A failed query is never read as "gone".
//  3. The unit is unknown to systemd: if the recorded cgroup folder is gone, no_scope; if it is still
//     there with the recorded cgroup id, it is our leftover cgroup: kill it through cgroup.kill;
//     a folder with another id is someone else's (refused).
//  4. The unit is known but its InvocationID differs from the record (or, for a record written before
//     the InvocationID was known, its Description lacks our nonce): another unit has that name now
//     (refused; it is not touched).
//  5. The live cgroup folder's id differs from the recorded one: replaced (refused).
//  6. Otherwise: stop it.
#pragma once

#include "record/record.h"
#include "system/systemd.h"

#include <cstdint>
#include <optional>
#include <string>

namespace nerve {

enum class ReapAction { NoScope, Retry, Refuse, Stop, KillCgroup };

struct ReapDecision {
  ReapAction action;
  std::string reason;  // why, for the receipt and the log
};

// 'backend': the one this nerved runs; a record of the other one is kept for a nerved of its own
// backend (Retry: on this boot its processes may live, and neither the other backend's unit nor its
// folder is this one's to stop). 'lookup': what systemd says of the record's unit (Error NoSuchUnit:
// not loaded; another Error: the query failed). 'live_cgroup_id': the id of the record's cgroup folder
// now (nullopt: gone).
ReapDecision decide_reap(const Record& record, const std::string& boot_id, BackendKind backend,
                         const Result<UnitState>& lookup, std::optional<std::uint64_t> live_cgroup_id);

// The Description a scope of ours carries; the nonce in it identifies the scope before its
// InvocationID is recorded.
std::string scope_description(const Record& record);

struct ScopeIdentity {
  std::string run;
  unsigned attempt = 0;
  std::string nonce;
};
// The inverse of scope_description; nullopt for any other text.
std::optional<ScopeIdentity> parse_scope_description(const std::string& description);

}  // namespace nerve
