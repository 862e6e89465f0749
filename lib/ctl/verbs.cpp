// The verbs of nervectl: each gets its checked arguments (args.cpp), makes one bus call, and formats the answer.
#include "client.h"
#include "ctl.h"
#include "exec_command.h"
#include "supervise.h"

#include "held_child.h"
#include "host.h"
#include "sealing.h"

#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>

#include <cerrno>
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
  if (a.wait) return supervise(ctx, SuperviseRequest{run, grace, a.keep, cmd, a.sealed});
  std::map<std::string, sdbus::Variant> options;
  if (a.keep) options["keep"] = sdbus::Variant(true);
  if (a.sealed) options["sealed"] = sdbus::Variant(true);  // nerved refuses it where the host cannot seal

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

int reap(Context& ctx, const VerbArgs& a) {
  const std::string& run = a.run;
  std::uint64_t grace = a.grace_usec;
  ctx.allow_for_reap(grace);
  auto [outcome, receipt_text] = ctx.client().Reap(run, grace);
  json r = json::parse(receipt_text);
  if (a.json) {
    std::printf("%s\n", r.dump().c_str());
  } else {
    std::printf("run %s: %s\n", run.c_str(), outcome.c_str());
    std::printf("  unit:          %s\n", r.value("unit", "").c_str());
    std::printf("  invocation id: %s\n", r.value("invocation_id", "").c_str());
    std::printf("  killed:        %s\n", r.value("killed", false) ? "yes (SIGKILL after the grace)" : "no");
    std::printf("  took:          %.1f ms\n", r.value("duration_usec", 0.0) / 1000.0);
    if (!r.value("error", "").empty()) std::printf("  reason:        %s\n", r.value("error", "").c_str());
  }
  if (outcome == "complete" || outcome == "no_scope") return 0;
  if (outcome == "pending_retry") return kExitRetry;
  return kExitError;
}

int status(Context& ctx, const VerbArgs& a) {
  const std::string& run = a.run;
  json s = json::parse(ctx.client().GetRun(run));
  if (a.json) {
    std::printf("%s\n", s.dump().c_str());
    return 0;
  }
  const json& rec = s["record"];
  const json& live = s["live"];
  std::printf("run %s (attempt %u): %s\n", run.c_str(), rec.value("attempt", 0u), rec.value("state", "").c_str());
  std::printf("  unit:          %s\n", rec.value("unit", "").c_str());
  std::printf("  invocation id: %s\n", rec.value("invocation_id", "").c_str());
  std::printf("  cgroup:        %s\n", rec.value("cgroup", "").c_str());
  std::printf("  boot id:       %s\n", rec.value("boot_id", "").c_str());
  std::printf("  live:          %s%s\n",
              live.value("known", false) ? live.value("active_state", "").c_str() : "no unit",
              live.value("known", false) && !live.value("ours", false) ? " (not ours: another invocation)" : "");
  std::string pids;
  for (auto& p : live["pids"]) pids += (pids.empty() ? "" : " ") + std::to_string(p.get<int>());
  std::printf("  processes:     %s\n", pids.empty() ? "none" : pids.c_str());
  if (s["receipt"].is_object())
    std::printf("  receipt:       %s%s\n", s["receipt"].value("outcome", "").c_str(),
                s["receipt"].value("error", "").empty() ? "" : (" (" + s["receipt"].value("error", "") + ")").c_str());
  return 0;
}

int list(Context& ctx, const VerbArgs& a) {
  auto runs = ctx.client().ListRuns();
  if (a.json) {
    json out = json::array();
    for (auto& r : runs)
      out.push_back({{"run", r.get<0>()}, {"state", r.get<1>()}, {"unit", r.get<2>()}, {"outcome", r.get<3>()}});
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("%-32s %-10s %-14s %s\n", "RUN", "STATE", "OUTCOME", "UNIT");
  for (auto& r : runs)
    std::printf("%-32s %-10s %-14s %s\n", r.get<0>().c_str(), r.get<1>().c_str(),
                r.get<3>().empty() ? "-" : r.get<3>().c_str(), r.get<2>().c_str());
  return 0;
}

int reconcile(Context& ctx, const VerbArgs& a) {
  ctx.set_call_timeout_usec(3600ull * 1'000'000);  // a pass may include reaps, each up to its grace
  auto lines = ctx.client().Reconcile();
  if (a.json) {
    json out = json::array();
    for (auto& l : lines) out.push_back({{"run", l.get<0>()}, {"action", l.get<1>()}, {"detail", l.get<2>()}});
    std::printf("%s\n", out.dump().c_str());
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
    std::printf("%s\n", json{{"available", available}, {"detail", detail}}.dump().c_str());
  else
    std::printf("sealing: %s\n  %s\n", available ? "available" : "unavailable", detail.c_str());
  return available ? 0 : kExitError;
}

}  // namespace

const std::vector<Verb>& verbs() {
  static const std::vector<Verb> table = {
      {"launch", "run CMD in a new scope for RUN: exec in place, or with --wait supervise it and reap on exit or signal",
       {Opt::Wait, Opt::Grace, Opt::Keep, Opt::Sealed}, Operands::RunAndCommand, launch},
      {"reap", "stop RUN's scope, confirm it is empty, print the receipt", {Opt::Grace, Opt::Json}, Operands::Run,
       reap},
      {"status", "show RUN's record and its live state", {Opt::Json}, Operands::Run, status},
      {"list", "list the runs and their states", {Opt::Json}, Operands::None, list},
      {"reconcile", "look at every unfinished run now, as nerved does at startup", {Opt::Json}, Operands::None,
       reconcile},
      {"forget", "remove a reaped run's files so its id can be used again", {}, Operands::Run, forget},
      {"sealing", "say whether runs can be sealed on this host (launch --sealed; docs/sealing.md); exit 1 if not",
       {Opt::Json}, Operands::None, sealing},
  };
  return table;
}

}  // namespace nerve::ctl
