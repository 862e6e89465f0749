// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl: a table of verbs (verb_table.h), each a few bus calls to nerved plus formatting. It holds no
// logic nerved has; the run-id check here is only a convenience, nerved checks again.
//
// Exit codes: 0 success; 1 nerved answered with an error (or reap: refused; doctor: a required check
// failed); 2 usage; 3 status: the run is not running; 4 status: no such run (3 and 4 as LSB and
// systemctl status); 69 nerved or the bus cannot be reached; 75 reap: pending_retry; 125 launch: the
// command was not started.
// After a successful launch, nervectl is the command (exec in place), so its exit code is the command's.
#pragma once

#include "base/conventions.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sdbus {
class IConnection;
}

namespace nerve::ctl {

inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotRunning = 3;
inline constexpr int kExitNoSuchRun = 4;
inline constexpr int kExitStatusUnknown = 4;  // LSB's "status unknown": systemd did not answer nerved in time
inline constexpr int kExitUnavailable = 69;
inline constexpr int kExitRetry = 75;
inline constexpr int kExitNotLaunched = 125;

class Client;  // the generated proxy on a session bus connection (client.h)

struct Context {
  // Connects on first use. Throws sdbus::Error when the bus cannot be reached.
  Client& client();
  // Drops the proxy and closes the connection (before exec, so CMD inherits no bus fd).
  void disconnect();
  void set_call_timeout_usec(std::uint64_t usec);
  // For a call that may wait for a reap with this grace (reap_call_timeout_usec).
  void allow_for_reap(std::uint64_t grace_usec) { set_call_timeout_usec(reap_call_timeout_usec(grace_usec)); }
  Context();
  ~Context();

  std::unique_ptr<Client> client_;
  std::uint64_t timeout_usec_ = 0;
};

// The options a verb may take, in the order its synopsis shows them (args.cpp describes each).
enum class Opt { Wait, Grace, Keep, Sealed, Property, Timeout, Slice, Signal, Json, NoLegend, Format };

// --json=MODE as systemctl has it (plain --json: short). Off is 0, so `if (a.json)` asks "JSON at all?".
enum JsonMode { kJsonOff = 0, kJsonShort, kJsonPretty };

// What a verb takes after its options: from `min` to `max` words and then, with `command`,
// "-- CMD [ARG...]". Each word is a `name` (a run id, RUN, of which VerbArgs holds one), except that a
// verb with a sub-verb (slice) takes that word first (`sub`: "set") and then an optional `name`.
struct Operands {
  unsigned min = 0;
  unsigned max = 0;
  const char* sub = nullptr;
  const char* name = "RUN";
  bool command = false;
};

inline constexpr Operands kNoOperands{};
inline constexpr Operands kRun{1, 1};
inline constexpr Operands kRunAndCommand{1, 1, nullptr, "RUN", true};
inline constexpr Operands kSliceSet{1, 2, "set", "SLICE"};

// A run's controls as given on the command line (-p, --timeout, --slice); nerved checks them.
struct RunControlArgs {
  std::vector<std::string> properties;  // KEY=VALUE
  std::uint64_t timeout_usec = 0;       // 0: none
  std::string slice;                    // "": nerved's default
};

// A verb's arguments, checked: the run id is valid, the grace within its bounds.
struct VerbArgs {
  std::string run;
  std::uint64_t grace_usec = 0;  // 0: not given
  bool wait = false;
  bool keep = false;
  bool sealed = false;
  JsonMode json = kJsonOff;
  bool no_legend = false;  // list: no header, no "N runs listed." line
  RunControlArgs controls;
  std::string slice_operand;  // slice set: the slice ("" = nerve.slice)
  int signal = 0;  // --signal, 0: not given
  std::string format;  // metrics --format: openmetrics or prometheus ("": openmetrics); nerved checks it
  std::vector<std::string> cmd;
};

struct Verb;

// One run of a verb: its row, its checked arguments and the program's command line (which the front
// hands on unchanged to nervectl-full).
struct Call {
  const Verb& verb;
  const VerbArgs& args;
  char** argv;
};

// Which program runs a verb: the front (`nervectl`, lib/ctl), nervectl-full (lib/ctl/full), or the
// front except with --wait (launch). nervectl-full runs every verb, the front's too, when it is called.
enum class RunsIn { Front, Full, FrontUnlessWait };

// A verb's handler in the program being built (verb_table.h): in the front, a verb of nervectl-full
// is `hand_on` (front.h), the exec of nervectl-full with the same command line.
struct Handler {
  RunsIn runs_in;
  int (*run)(const Call&);
};

// One row of the table of verbs (verb_table.h): everything its parser, its help and its dispatch need.
struct Verb {
  const char* name;
  const char* summary;
  Operands operands;
  std::vector<Opt> options;
  Handler handler;
};

// The table of verbs as one program has it (front.h's front_verbs, full_verbs below).
using Verbs = std::span<const Verb>;

// nervectl-full's table and main: every verb, with sdbus-c++ (the front execs it for the verbs it
// leaves).
Verbs full_verbs();
int ctl_main(int argc, char** argv);

}  // namespace nerve::ctl
