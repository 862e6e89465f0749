// SPDX-License-Identifier: LGPL-2.1-or-later
// lifecycle.json and receipt.json: what nerved keeps on disk for each run.
//
// The record (lifecycle.json) is the run's life: written as an intent (state "launching") before the
// scope is asked for, completed (state "running": invocation id, cgroup, cgroup id) before the command
// may exec, fenced (state "reaping") when a reap starts, and closed (state "reaped") when a final
// receipt is written. The receipt (receipt.json) is the reap's outcome. docs/records.md describes both.
#pragma once

#include "base/string_table.h"
#include "base/usage.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nerve {

inline constexpr int kRecordVersion = 1;

// The leaves of a scope started with a holder (docs/records.md, "Leaf and holder"): run/ holds the
// run's processes and is what a reap reads and kills; hold/ holds the holder (process/holder.h) alone.
inline constexpr const char* kRunLeaf = "run";
inline constexpr const char* kHoldLeaf = "hold";

// The names are the record's "state" (and the run object's State): to_string, from_string<RunState>.
enum class RunState { Launching, Running, Failed, Reaping, Reaped };
constexpr auto string_table(RunState) {
  return std::to_array<Named<RunState>>({
      {RunState::Launching, "launching"},
      {RunState::Running, "running"},
      {RunState::Failed, "failed"},
      {RunState::Reaping, "reaping"},
      {RunState::Reaped, "reaped"},
  });
}

// A run whose state is Reaping or Reaped is final: no new attempt may start.
inline bool is_final(RunState s) { return s == RunState::Reaping || s == RunState::Reaped; }

// Which backend holds the run's cgroup (docs/operations.md "Backends"): a transient scope of the
// systemd user manager, or a folder of a delegated cgroup2 subtree that nerved manages itself. In
// lifecycle.json as "backend"; records of before the cgroup backend have none and are "systemd". A
// nerved reaps only records of its own backend (reap_decision.h): the other one's unit or folder is
// not something it may stop.
enum class BackendKind { Systemd, Cgroup };
constexpr auto string_table(BackendKind) {
  return std::to_array<Named<BackendKind>>({
      {BackendKind::Systemd, "systemd"},
      {BackendKind::Cgroup, "cgroup"},
  });
}

// Who owns a run (owners.h): a process (pid + start_time), a bus connection (a unique bus name), or
// nobody known. In lifecycle.json as "process", "bus" or "none".
enum class OwnerKind { None, Process, Bus };
constexpr auto string_table(OwnerKind) {
  return std::to_array<Named<OwnerKind>>({
      {OwnerKind::None, "none"},
      {OwnerKind::Process, "process"},
      {OwnerKind::Bus, "bus"},
  });
}

struct Owner {
  OwnerKind kind = OwnerKind::None;
  int pid = 0;
  std::uint64_t start_time = 0;  // field 22 of /proc/PID/stat, clock ticks since boot
  std::string name;              // for "bus": the owner's unique connection name, e.g. ":1.42"
};

struct Record {
  int version = kRecordVersion;
  std::string run;
  unsigned attempt = 1;
  BackendKind backend = BackendKind::Systemd;
  std::string unit;  // the scope; on the cgroup backend the name of its folder
  std::string nonce;
  std::string boot_id;
  std::string invocation_id;  // 32 hex digits once running; on the cgroup backend the folder's cgroup id
  std::string cgroup;         // ControlGroup, relative to the cgroup2 root
  std::uint64_t cgroup_id = 0;  // inode number of the cgroup folder
  std::string leaf;             // <cgroup>/run, the run's processes, once made; "" without a holder (and
                                // in records before leaves were made)
  std::uint64_t leaf_id = 0;    // its cgroup id; 0 without a leaf
  RunState state = RunState::Launching;
  bool released = true;  // the caller was told it may exec (Contain's reply; a Launch's held child let
                         // go): false from the intent until then, so that a run whose nerved died before
                         // it is known never to have run its command (reconcile.h); true in records of
                         // before it was kept, whose runs were all told once running
  int leader_pid = 0;  // the pid that was contained (and then exec'd the command)
  std::uint64_t leader_start_time = 0;  // its start time (as Owner::start_time); 0 in records before it was kept
  bool reap_on_exit = false;  // a Launch'd run reaped when its command ends, also after a restart of nerved
  std::uint64_t grace_usec = 0;
  bool keep = false;
  Owner owner;
  std::vector<std::string> properties;  // the unit properties as given, "KEY=VALUE" (unit_properties.h)
  std::string slice;                    // the slice the scope was put into; "" in records before it was kept
  std::uint64_t timeout_usec = 0;       // the run's timeout (--timeout or RuntimeMaxSec=), nerve's own deadline
                                        // (deadlines.h): ended (cause timeout) at created_at + this; 0 or
                                        // UINT64_MAX (systemd's infinity) = none
  std::string parent;                   // the run this run was started inside (nested run); "" = none
  std::string created_at;  // RFC 3339, UTC
  std::string updated_at;
};

// Whether the run's processes are in a leaf of its scope, with a holder keeping the scope.
inline bool has_leaf(const Record& r) { return !r.leaf.empty() && r.leaf_id != 0; }
// The leaf a scope's cgroup gets: <cgroup>/run.
inline std::string leaf_of(const std::string& cgroup) { return cgroup + "/" + kRunLeaf; }
// Whether 'cgroup' is the run's scope or any cgroup below it (its leaves, and what the run's processes
// made below them): a process there belongs to the run.
inline bool within_run(const Record& r, const std::string& cgroup) {
  return !r.cgroup.empty() && cgroup.compare(0, r.cgroup.size(), r.cgroup) == 0 &&
         (cgroup.size() == r.cgroup.size() || cgroup[r.cgroup.size()] == '/');
}

// In receipt.json as "outcome" (and the answer of Reap).
enum class Outcome { Complete, NoScope, Refused, PendingRetry };
constexpr auto string_table(Outcome) {
  return std::to_array<Named<Outcome>>({
      {Outcome::Complete, "complete"},
      {Outcome::NoScope, "no_scope"},
      {Outcome::Refused, "refused"},
      {Outcome::PendingRetry, "pending_retry"},
  });
}
// complete, no_scope and refused are final: nothing more will be done for the run.
inline bool is_final(Outcome o) { return o != Outcome::PendingRetry; }

// Why a run ended, in receipt.json as "cause" (docs/records.md): the path that started its final reap.
// Oom replaces Exited and OwnerGone when the usage snapshot counts an OOM kill; Timeout replaces
// Exited, OwnerGone and Reaped once the run's deadline (created_at + timeout_usec) has passed.
enum class Cause { Exited, Cancelled, Timeout, Oom, OwnerGone, Relaunched, Reconciled, Reaped };
constexpr auto string_table(Cause) {
  return std::to_array<Named<Cause>>({
      {Cause::Exited, "exited"},
      {Cause::Cancelled, "cancelled"},
      {Cause::Timeout, "timeout"},
      {Cause::Oom, "oom"},
      {Cause::OwnerGone, "owner_gone"},
      {Cause::Relaunched, "relaunched"},
      {Cause::Reconciled, "reconciled"},
      {Cause::Reaped, "reaped"},
  });
}

// A scope of the user manager's own that a process of the run asked for (`systemd-run --user --scope`
// does: StartTransientUnit with its own pid), reaped before the run's scope (run/escaped_scopes.h):
// its unit and the pids it held when it was found.
struct EscapedScope {
  std::string unit;
  std::vector<int> pids;
};

struct Receipt {
  int version = kRecordVersion;
  std::string run;
  unsigned attempt = 0;
  std::string unit;
  std::string invocation_id;
  Outcome outcome = Outcome::PendingRetry;
  std::string error;          // empty for complete; the reason otherwise
  bool killed = false;        // processes were left after the grace and were SIGKILLed
  std::uint64_t duration_usec = 0;
  std::string reaped_at;
  std::optional<Cause> cause;  // absent in receipts written before causes existed
  std::optional<Usage> usage;  // the last snapshot of the cgroup's accounting files, if one was read
  bool usage_final = false;    // that snapshot was read after the cgroup had emptied
  std::vector<EscapedScope> escaped;  // "escaped": empty (and absent in older receipts) when none was found
};

class RecordCorrupt : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string to_json_text(const Record& r);
std::string to_json_text(const Receipt& r);
// Throw RecordCorrupt for text that is not JSON, lacks a field, has an unknown version, or (records)
// holds a value nerve would never write (check_record_fields).
Record parse_record(const std::string& text);
// Throws RecordCorrupt unless every field has the shape nerve writes: the unit is
// nerve-<run>-<nonce>.scope with a 16-hex nonce, boot and invocation ids (once known) are 32 hex
// digits, the cgroup (once known) is an absolute path without empty, '.' or '..' parts, the owner is a
// process (pid > 0), a unique bus name (":...") or none, the grace is at most kMaxGraceUsec (one hour,
// as every way in checks it). Any timeout_usec is valid: deadline() saturates.
void check_record_fields(const Record& r);
Receipt parse_receipt(const std::string& text);

// When the run's timeout falls due: created_at + timeout_usec, saturated (duration.h): a timeout
// past what the clock holds is time_point::max(), never an earlier, wrapped time. nullopt without a
// timeout (0 or infinity) or with a created_at that cannot be read.
std::optional<std::chrono::system_clock::time_point> deadline(const Record& record);

}  // namespace nerve
