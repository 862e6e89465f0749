// `nervectl launch RUN -- CMD`: Contain this very process, check it is in the scope, exec CMD in place
// (with --wait: supervise.cpp).
#include "client.h"
#include "exec_command.h"
#include "supervise.h"
#include "verb_handlers.h"

#include "host.h"
#include "sealing.h"

#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace nerve::ctl {

namespace {

std::map<std::string, sdbus::Variant> contain_options(const VerbArgs& a) {
  std::map<std::string, sdbus::Variant> options;
  if (a.keep) options["keep"] = sdbus::Variant(true);
  if (a.sealed) options["sealed"] = sdbus::Variant(true);  // nerved refuses it where the host cannot seal
  add_control_options(options, a.controls);
  return options;
}

// Trust, but verify: this very process must now be in the scope's cgroup.
bool in_scope(const std::string& run, const std::string& cgroup) {
  auto mine = proc_cgroup(::getpid());
  if (mine && *mine == cgroup) return true;
  std::fprintf(stderr,
               "nervectl launch: nerved reports cgroup %s for run '%s', but this process is in %s; "
               "the command was not started.\n",
               cgroup.c_str(), run.c_str(), mine ? mine->c_str() : "(unknown)");
  return false;
}

}  // namespace

int launch(Context& ctx, const VerbArgs& a) {
  const std::string& run = a.run;
  if (a.wait) return supervise(ctx, SuperviseRequest{run, a.grace_usec, a.keep, a.cmd, a.sealed, a.controls});
  ctx.allow_for_reap(a.grace_usec);  // a relaunch first reaps the earlier attempt, with this grace
  auto [unit, invocation, cgroup, attempt] = ctx.client().Contain(run, a.grace_usec, contain_options(a));
  if (!in_scope(run, cgroup)) return kExitNotLaunched;
  ctx.disconnect();  // CMD inherits no bus connection
  set_run_environment(run, attempt, invocation);
  if (std::string why = a.sealed ? seal_this_process() : ""; !why.empty()) {
    std::fprintf(stderr, "nervectl launch: run '%s' cannot be sealed: %s; the command was not started.\n",
                 run.c_str(), why.c_str());
    return kExitNotLaunched;
  }
  int err = exec_command(a.cmd);
  std::fprintf(stderr, "nervectl launch: cannot execute '%s': %s (run '%s' is contained in %s; reap it)\n",
               a.cmd[0].c_str(), std::strerror(err), run.c_str(), unit.c_str());
  return exec_failure_exit_code(err);
}

}  // namespace nerve::ctl
