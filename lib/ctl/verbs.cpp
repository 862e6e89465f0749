// The verbs of nervectl: each gets its checked arguments (args.cpp), makes one bus call, and formats the answer.
#include "client.h"
#include "ctl.h"
#include "doctor.h"
#include "events.h"
#include "exec_command.h"
#include "output.h"
#include "supervise.h"

#include "conventions.h"
#include "errors.h"
#include "held_child.h"
#include "host.h"
#include "sealing.h"

#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace nerve::ctl {

Client& Context::client() {
  if (!client_) {
    client_ = std::make_unique<Client>(sdbus::createSessionBusConnection());
    if (timeout_usec_) client_->bus().setMethodCallTimeout(timeout_usec_);
  }
  return *client_;
}

void Context::disconnect() { client_.reset(); }

void Context::set_call_timeout_usec(std::uint64_t usec) {
  timeout_usec_ = usec;
  if (client_) client_->bus().setMethodCallTimeout(usec);
}

Context::Context() = default;
Context::~Context() = default;

namespace {

using nlohmann::json;

int launch(Context& ctx, const VerbArgs& a) {
  const std::string& run = a.run;
  const std::vector<std::string>& cmd = a.cmd;
  std::uint64_t grace = a.grace_usec;
  if (a.wait) return supervise(ctx, SuperviseRequest{run, grace, a.keep, cmd, a.sealed, a.controls});
  std::map<std::string, sdbus::Variant> options;
  if (a.keep) options["keep"] = sdbus::Variant(true);
  if (a.sealed) options["sealed"] = sdbus::Variant(true);  // nerved refuses it where the host cannot seal
  add_control_options(options, a.controls);

  ctx.allow_for_reap(grace);  // a relaunch first reaps the earlier attempt, with this grace
  auto [unit, invocation, cgroup, attempt] = ctx.client().Contain(run, grace, options);

  // Trust, but verify: this very process must now be in the scope's cgroup.
  auto mine = proc_cgroup(::getpid());
  if (!mine || *mine != cgroup) {
    std::fprintf(stderr,
                 "nervectl launch: nerved reports cgroup %s for run '%s', but this process is in %s; "
                 "the command was not started.\n",
                 cgroup.c_str(), run.c_str(), mine ? mine->c_str() : "(unknown)");
    return kExitNotLaunched;
  }
  ctx.disconnect();  // CMD inherits no bus connection
  set_run_environment(run, attempt, invocation);
  if (std::string why = a.sealed ? seal_this_process() : ""; !why.empty()) {
    std::fprintf(stderr, "nervectl launch: run '%s' cannot be sealed: %s; the command was not started.\n",
                 run.c_str(), why.c_str());
    return kExitNotLaunched;
  }

  int err = exec_command(cmd);
  std::fprintf(stderr, "nervectl launch: cannot execute '%s': %s (run '%s' is contained in %s; reap it)\n",
               cmd[0].c_str(), std::strerror(err), run.c_str(), unit.c_str());
  return exec_failure_exit_code(err);
}

int slice(Context& ctx, const VerbArgs& a) {
  std::string name = a.slice_operand.empty() ? "nerve.slice" : a.slice_operand;
  ctx.client().SetSliceProperties(name, property_pairs(a.controls.properties));
  std::printf("slice %s: set", name.c_str());
  for (const auto& p : a.controls.properties) std::printf(" %s", p.c_str());
  std::printf("\n");
  return 0;
}

// A figure of a receipt's usage: null when the kernel did not offer it.
std::optional<double> figure(const json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number()) return std::nullopt;
  return usage[key].get<double>();
}

// "cause: ..." and what the run used, as status and reap print them.
void print_cause_and_usage(const json& r) {
  if (r.contains("cause") && r["cause"].is_string()) std::printf("  cause:         %s\n", r["cause"].get<std::string>().c_str());
  if (!r.contains("usage") || !r["usage"].is_object()) return;
  const json& u = r["usage"];
  auto user = figure(u, "cpu_user_usec"), sys = figure(u, "cpu_system_usec");
  if (user && sys)
    std::printf("  cpu:           %.1f s user, %.1f s system\n", *user / 1e6, *sys / 1e6);
  else
    std::printf("  cpu:           n/a\n");
  if (auto peak = figure(u, "memory_peak_bytes"))
    std::printf("  memory peak:   %.1f MiB\n", *peak / (1024.0 * 1024.0));
  else
    std::printf("  memory peak:   n/a (no memory controller)\n");
  if (auto oom = figure(u, "oom_kills")) std::printf("  oom kills:     %.0f\n", *oom);
  if (auto tasks = figure(u, "tasks_peak"))
    std::printf("  tasks peak:    %.0f\n", *tasks);
  else
    std::printf("  tasks peak:    n/a (no pids controller)\n");
  auto rd = figure(u, "io_read_bytes"), wr = figure(u, "io_write_bytes");
  if (rd && wr)
    std::printf("  io:            %.1f MiB read, %.1f MiB written\n", *rd / 1048576.0, *wr / 1048576.0);
  else
    std::printf("  io:            n/a (no io controller)\n");
  if (!r.value("usage_final", false)) std::printf("  (usage read before the cgroup emptied: a lower bound)\n");
}

// Prints the receipt of a Reap or Cancel; the exit code its outcome gives.
int print_receipt(const VerbArgs& a, const std::string& outcome, const std::string& receipt_text) {
  const std::string& run = a.run;
  json r = json::parse(receipt_text);
  if (a.json) {
    print_json(r, a.json);
  } else {
    std::printf("run %s: %s\n", run.c_str(), outcome.c_str());
    std::printf("  unit:          %s\n", r.value("unit", "").c_str());
    std::printf("  invocation id: %s\n", r.value("invocation_id", "").c_str());
    std::printf("  killed:        %s\n", r.value("killed", false) ? "yes (SIGKILL after the grace)" : "no");
    std::printf("  took:          %.1f ms\n", r.value("duration_usec", 0.0) / 1000.0);
    if (!r.value("error", "").empty()) std::printf("  reason:        %s\n", r.value("error", "").c_str());
    print_cause_and_usage(r);
  }
  if (outcome == "complete" || outcome == "no_scope") return 0;
  if (outcome == "pending_retry") return kExitRetry;
  return kExitError;
}

int reap(Context& ctx, const VerbArgs& a) {
  ctx.allow_for_reap(a.grace_usec);
  auto [outcome, receipt_text] = ctx.client().Reap(a.run, a.grace_usec);
  return print_receipt(a, outcome, receipt_text);
}

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

// GetRun's answer, or nullopt (and the message on stderr) when nerved knows no such run.
std::optional<json> get_run(Context& ctx, const char* verb, const std::string& run) {
  try {
    return json::parse(ctx.client().GetRun(run));
  } catch (const sdbus::Error& e) {
    if (e.getName() != error::NoSuchRun) throw;
    std::fprintf(stderr, "nervectl %s: %s [%s]\n", verb, e.getMessage().c_str(), e.getName().c_str());
    return std::nullopt;
  }
}

// The unit's state as GetRun tells it; "unknown (why)" when systemd did not answer (issue 8 item 6).
std::string live_state(const json& live) {
  if (live.value("unknown", false)) return "unknown (" + live.value("error", "") + ")";
  return live.value("known", false) ? live.value("active_state", "") : "no unit";
}

void print_status(const std::string& run, const json& s) {
  const json& rec = s["record"];
  const json& live = s["live"];
  std::printf("run %s (attempt %u): %s\n", run.c_str(), rec.value("attempt", 0u), rec.value("state", "").c_str());
  std::printf("  unit:          %s\n", rec.value("unit", "").c_str());
  std::printf("  invocation id: %s\n", rec.value("invocation_id", "").c_str());
  std::printf("  cgroup:        %s\n", rec.value("cgroup", "").c_str());
  std::printf("  boot id:       %s\n", rec.value("boot_id", "").c_str());
  std::printf("  live:          %s%s\n", live_state(live).c_str(),
              live.value("known", false) && !live.value("ours", false) ? " (not ours: another invocation)" : "");
  std::string pids;
  for (auto& p : live["pids"]) pids += (pids.empty() ? "" : " ") + std::to_string(p.get<int>());
  std::printf("  processes:     %s\n", pids.empty() ? "none" : pids.c_str());
  if (s["receipt"].is_object())
    std::printf("  receipt:       %s%s\n", s["receipt"].value("outcome", "").c_str(),
                s["receipt"].value("error", "").empty() ? "" : (" (" + s["receipt"].value("error", "") + ")").c_str());
  if (s["receipt"].is_object()) print_cause_and_usage(s["receipt"]);
}

// Running as systemctl means it: the record says running and the scope is live, ours and active.
bool is_running(const json& s) {
  const json& live = s["live"];
  return s["record"].value("state", "") == "running" && live.value("known", false) && live.value("ours", false) &&
         live.value("active_state", "") == "active";
}

// Exit codes as LSB and systemctl status: 0 running, 3 not running (any other state, or its scope is
// gone), 4 no such run, or its unit's state is unknown (systemd did not answer nerved in time).
int status(Context& ctx, const VerbArgs& a) {
  auto s = get_run(ctx, "status", a.run);
  if (!s) return kExitNoSuchRun;
  if (a.json)
    print_json(*s, a.json);
  else
    print_status(a.run, *s);
  if (is_running(*s)) return 0;
  // A running record whose unit systemd did not describe in time: not known to be running or not.
  bool unknown = (*s)["record"].value("state", "") == "running" && (*s)["live"].value("unknown", false);
  return unknown ? kExitStatusUnknown : kExitNotRunning;
}

// One line of `list`: ListRuns' fields, and from GetRun the live processes and the creation time.
struct RunRow {
  std::string run, state, unit, outcome, created_at;
  std::optional<std::size_t> processes;  // nullopt: GetRun failed (the run went away between the calls)
};

std::vector<RunRow> list_rows(Context& ctx) {
  std::vector<RunRow> rows;
  for (auto& r : ctx.client().ListRuns()) {
    RunRow row{r.get<0>(), r.get<1>(), r.get<2>(), r.get<3>(), "", std::nullopt};
    try {
      json s = json::parse(ctx.client().GetRun(row.run));
      row.created_at = s["record"].value("created_at", "");
      row.processes = s["live"].value("pids", json::array()).size();
    } catch (const sdbus::Error& e) {
      // Forgotten meanwhile, or its record unreadable now: listed without live facts.
      if (e.getName().rfind(error::kPrefix, 0) != 0) throw;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Colour state_colour(const std::string& state) {
  if (state == "running") return Colour::Green;
  if (state == "failed") return Colour::Red;
  if (state == "launching" || state == "reaping") return Colour::Yellow;
  return Colour::None;
}

Colour outcome_colour(const std::string& outcome) {
  if (outcome == "refused") return Colour::Red;
  if (outcome == "pending_retry") return Colour::Yellow;
  return Colour::None;
}

std::string age_of(const std::string& created_at) {
  auto t = parse_rfc3339(created_at);
  if (!t) return "-";
  return format_age(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() - *t));
}

void print_list_table(const std::vector<RunRow>& rows, bool legend) {
  std::vector<std::vector<Cell>> cells;
  for (const auto& r : rows)
    cells.push_back({{r.run},
                     {r.state, state_colour(r.state)},
                     {r.unit},
                     {r.processes ? std::to_string(*r.processes) : "-"},
                     {age_of(r.created_at)},
                     {r.outcome.empty() ? "-" : r.outcome, outcome_colour(r.outcome)}});
  std::vector<std::string> header;
  if (legend) header = {"RUN", "STATE", "UNIT", "PROCESSES", "AGE", "OUTCOME"};
  std::fputs(format_table(header, cells, colour_wanted(stdout)).c_str(), stdout);
  if (legend) std::printf("\n%zu %s listed.\n", rows.size(), rows.size() == 1 ? "run" : "runs");
}

int list(Context& ctx, const VerbArgs& a) {
  std::vector<RunRow> rows = list_rows(ctx);
  if (a.json) {
    json out = json::array();
    for (auto& r : rows)
      out.push_back({{"run", r.run},
                     {"state", r.state},
                     {"unit", r.unit},
                     {"processes", r.processes ? json(*r.processes) : json(nullptr)},
                     {"created_at", r.created_at},
                     {"outcome", r.outcome}});
    print_json(out, a.json);
  } else if (rows.empty()) {
    if (!a.no_legend) std::printf("No runs.\n");
  } else {
    print_list_table(rows, !a.no_legend);
  }
  return 0;
}

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

int forget(Context& ctx, const VerbArgs& a) {
  ctx.client().Forget(a.run);
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

}  // namespace

const std::vector<Verb>& verbs() {
  static const std::vector<Verb> table = {
      {"launch", "run CMD in a new scope for RUN: exec in place, or with --wait supervise it and reap on exit or signal",
       {Opt::Wait, Opt::Grace, Opt::Keep, Opt::Sealed, Opt::Property, Opt::Timeout, Opt::Slice},
       Operands::RunAndCommand, launch},
      {"reap", "stop RUN's scope, confirm it is empty, print the receipt", {Opt::Grace, Opt::Json}, Operands::Run,
       reap},
      {"cancel", "send --signal (default TERM) to every process of RUN, SIGKILL after the grace, print the receipt",
       {Opt::Signal, Opt::Grace, Opt::Json}, Operands::Run, cancel},
      {"freeze", "freeze every process of RUN (FreezeUnit); a frozen run can still be reaped", {}, Operands::Run,
       freeze},
      {"thaw", "thaw a frozen RUN (ThawUnit)", {}, Operands::Run, thaw},
      {"status", "show RUN's record and its live state; exit 0 if it is running, 3 if not, 4 if unknown",
       {Opt::Json}, Operands::Run, status},
      {"list", "list the runs: state, unit, live processes, age, outcome", {Opt::Json, Opt::NoLegend},
       Operands::None, list},
      {"reconcile", "look at every unfinished run now, as nerved does at startup", {Opt::Json}, Operands::None,
       reconcile},
      {"forget", "remove a reaped run's files so its id can be used again", {}, Operands::Run, forget},
      {"slice", "set properties of a slice (default nerve.slice) persistently, e.g. one MemoryMax for all runs in it",
       {Opt::Property}, Operands::SliceSet, slice},
      {"sealing", "say whether runs can be sealed on this host (launch --sealed; docs/sealing.md); exit 1 if not",
       {Opt::Json}, Operands::None, sealing},
      {"events", "follow nerved's signals live, one line per event (JSON lines with --json) until interrupted",
       {Opt::Json}, Operands::None, events},
      {"doctor", "check what nerve needs on this host, one line per check; exit 0 if every required one passes",
       {Opt::Json}, Operands::None, doctor},
  };
  return table;
}

}  // namespace nerve::ctl
