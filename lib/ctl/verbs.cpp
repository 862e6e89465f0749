// The verbs of nervectl: each parses its arguments, makes one bus call, and formats the answer.
#include "client.h"
#include "ctl.h"
#include "exec_command.h"
#include "supervise.h"

#include "errors.h"
#include "host.h"
#include "run_id.h"
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

// Options of the form --name or --name VALUE, before the positional arguments (or "--").
struct Args {
  std::vector<std::string> rest;
  std::map<std::string, std::string> values;
  std::map<std::string, bool> flags;
};

Args parse(std::vector<std::string>& in, const std::vector<std::string>& flags,
           const std::vector<std::string>& valued, bool stop_at_first_positional) {
  Args a;
  std::size_t i = 0;
  for (; i < in.size(); ++i) {
    const std::string& s = in[i];
    if (s == "--") {
      ++i;
      a.rest.push_back("--");
      break;
    }
    if (s.rfind("--", 0) == 0) {
      std::string name = s.substr(2), value;
      bool has_eq = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_eq = true;
      }
      if (std::find(flags.begin(), flags.end(), name) != flags.end() && !has_eq) {
        a.flags[name] = true;
      } else if (std::find(valued.begin(), valued.end(), name) != valued.end()) {
        if (!has_eq) {
          if (i + 1 >= in.size()) throw UsageError{"--" + name + " needs a value"};
          value = in[++i];
        }
        a.values[name] = value;
      } else {
        throw UsageError{"unknown option '" + s + "'"};
      }
      continue;
    }
    a.rest.push_back(s);
    if (stop_at_first_positional) {
      // Everything after the run id belongs to the launch syntax: expect "--" next.
      ++i;
      break;
    }
  }
  for (; i < in.size(); ++i) a.rest.push_back(in[i]);
  return a;
}

std::uint64_t grace_usec(const Args& a) {
  auto it = a.values.find("grace");
  if (it == a.values.end()) return 0;
  char* end = nullptr;
  errno = 0;
  double s = std::strtod(it->second.c_str(), &end);
  if (errno || end == it->second.c_str() || *end || !(s > 0) || s > 3600)
    throw UsageError{"--grace takes seconds, more than 0 and at most 3600, not " + quote_value(it->second)};
  return static_cast<std::uint64_t>(s * 1e6);
}

std::string run_arg(const std::string& run) {
  if (auto why = run_id_problem(run)) throw UsageError{"invalid run id " + quote_value(run) + ": " + *why};
  return run;
}

// Calls that wait for a reap may take the grace plus the kill wait; allow for it.
void allow_for_grace(Context& ctx, std::uint64_t grace) {
  std::uint64_t g = grace ? grace : 10'000'000;
  ctx.set_call_timeout_usec(g + 60'000'000);
}

int launch(Context& ctx, std::vector<std::string>& in) {
  Args a = parse(in, {"keep", "wait", "sealed"}, {"grace"}, true);
  if (a.rest.empty()) throw UsageError{"missing RUN"};
  std::string run = run_arg(a.rest[0]);
  if (a.rest.size() < 3 || a.rest[1] != "--") throw UsageError{"expected '-- CMD [ARG...]' after the run id"};
  std::vector<std::string> cmd(a.rest.begin() + 2, a.rest.end());
  std::uint64_t grace = grace_usec(a);
  bool sealed = a.flags.count("sealed") != 0;
  if (a.flags.count("wait"))
    return supervise(ctx, SuperviseRequest{run, grace, a.flags.count("keep") != 0, cmd, sealed});
  std::map<std::string, sdbus::Variant> options;
  if (a.flags.count("keep")) options["keep"] = sdbus::Variant(true);
  if (sealed) options["sealed"] = sdbus::Variant(true);  // nerved refuses it where the host cannot seal

  allow_for_grace(ctx, grace);  // a relaunch first reaps the earlier attempt, with this grace
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
  if (std::string why = sealed ? seal_this_process() : ""; !why.empty()) {
    std::fprintf(stderr, "nervectl launch: run '%s' cannot be sealed: %s; the command was not started.\n",
                 run.c_str(), why.c_str());
    return kExitNotLaunched;
  }

  int err = exec_command(cmd);
  std::fprintf(stderr, "nervectl launch: cannot execute '%s': %s (run '%s' is contained in %s; reap it)\n",
               cmd[0].c_str(), std::strerror(err), run.c_str(), unit.c_str());
  return err == ENOENT ? 127 : 126;
}

int reap(Context& ctx, std::vector<std::string>& in) {
  Args a = parse(in, {"json"}, {"grace"}, false);
  if (a.rest.size() != 1) throw UsageError{a.rest.empty() ? "missing RUN" : "too many arguments"};
  std::string run = run_arg(a.rest[0]);
  std::uint64_t grace = grace_usec(a);
  allow_for_grace(ctx, grace);
  auto [outcome, receipt_text] = ctx.client().Reap(run, grace);
  json r = json::parse(receipt_text);
  if (a.flags.count("json")) {
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

int status(Context& ctx, std::vector<std::string>& in) {
  Args a = parse(in, {"json"}, {}, false);
  if (a.rest.size() != 1) throw UsageError{a.rest.empty() ? "missing RUN" : "too many arguments"};
  std::string run = run_arg(a.rest[0]);
  json s = json::parse(ctx.client().GetRun(run));
  if (a.flags.count("json")) {
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

int list(Context& ctx, std::vector<std::string>& in) {
  Args a = parse(in, {"json"}, {}, false);
  if (!a.rest.empty()) throw UsageError{"too many arguments"};
  auto runs = ctx.client().ListRuns();
  if (a.flags.count("json")) {
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

int reconcile(Context& ctx, std::vector<std::string>& in) {
  Args a = parse(in, {"json"}, {}, false);
  if (!a.rest.empty()) throw UsageError{"too many arguments"};
  ctx.set_call_timeout_usec(3600ull * 1'000'000);  // a pass may include reaps, each up to its grace
  auto lines = ctx.client().Reconcile();
  if (a.flags.count("json")) {
    json out = json::array();
    for (auto& l : lines) out.push_back({{"run", l.get<0>()}, {"action", l.get<1>()}, {"detail", l.get<2>()}});
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  for (auto& l : lines)
    std::printf("%-32s %-12s %s\n", l.get<0>().c_str(), l.get<1>().c_str(), l.get<2>().c_str());
  return 0;
}

int forget(Context& ctx, std::vector<std::string>& in) {
  Args a = parse(in, {}, {}, false);
  if (a.rest.size() != 1) throw UsageError{a.rest.empty() ? "missing RUN" : "too many arguments"};
  ctx.client().Forget(run_arg(a.rest[0]));
  return 0;
}

// Whether this host can seal runs (nerved's SealingAvailable and SealingDetail): exit 0 if it can, 1 if not.
int sealing(Context& ctx, std::vector<std::string>& in) {
  Args a = parse(in, {"json"}, {}, false);
  if (!a.rest.empty()) throw UsageError{"too many arguments"};
  bool available = ctx.client().SealingAvailable();
  std::string detail = ctx.client().SealingDetail();
  if (a.flags.count("json"))
    std::printf("%s\n", json{{"available", available}, {"detail", detail}}.dump().c_str());
  else
    std::printf("sealing: %s\n  %s\n", available ? "available" : "unavailable", detail.c_str());
  return available ? 0 : kExitError;
}

}  // namespace

const std::vector<Verb>& verbs() {
  static const std::vector<Verb> table = {
      {"launch", "launch [--wait] [--grace SECONDS] [--keep] [--sealed] RUN -- CMD [ARG...]",
       "run CMD in a new scope for RUN: exec in place, or with --wait supervise it and reap on exit or signal; "
       "--sealed: in a cgroup namespace rooted at the scope (docs/sealing.md)",
       launch},
      {"reap", "reap [--grace SECONDS] [--json] RUN",
       "stop RUN's scope, confirm it is empty, print the receipt", reap},
      {"status", "status [--json] RUN", "show RUN's record and its live state", status},
      {"list", "list [--json]", "list the runs and their states", list},
      {"reconcile", "reconcile [--json]", "look at every unfinished run now, as nerved does at startup", reconcile},
      {"forget", "forget RUN", "remove a reaped run's files so its id can be used again", forget},
      {"sealing", "sealing [--json]",
       "say whether runs can be sealed on this host (launch --sealed; docs/sealing.md); exit 1 if not", sealing},
  };
  return table;
}

}  // namespace nerve::ctl
