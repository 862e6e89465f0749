// `nervectl launch RUN -- CMD` (without --wait: supervise.h): Contain this very process (lean_call.h),
// check it is in the scope, exec CMD in place.
#include "ctl/args.h"
#include "ctl/bus_error.h"
#include "ctl/exec_command.h"
#include "ctl/lean_call.h"
#include "ctl/verb_handlers.h"

#include "base/host.h"
#include "process/sealing.h"

#include <systemd/sd-bus.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace nerve::ctl {

namespace {

// One {sv} entry of Contain's options whose value is of the basic TYPE (one letter).
template <typename T>
int append_option(sd_bus_message* m, const char* key, const char* type, T value) {
  return sd_bus_message_append(m, "{sv}", key, type, value);
}

// "properties": a(ss) of the -p KEY=VALUE pairs.
int append_properties(sd_bus_message* m, const std::vector<std::string>& properties) {
  int r = sd_bus_message_open_container(m, 'e', "sv");
  if (r >= 0) r = sd_bus_message_append(m, "s", "properties");
  if (r >= 0) r = sd_bus_message_open_container(m, 'v', "a(ss)");
  if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(ss)");
  for (const auto& p : properties) {
    auto [key, value] = split_property(p);
    if (r >= 0) r = sd_bus_message_append(m, "(ss)", key.c_str(), value.c_str());
  }
  for (int i = 0; i < 3 && r >= 0; ++i) r = sd_bus_message_close_container(m);
  return r;
}

// Contain's arguments: the run, the grace and the options (keep, sealed and the run's controls, as
// nervectl-full's control_options.h gives them to launch --wait).
int append_contain(sd_bus_message* m, const VerbArgs& a) {
  const RunControlArgs& c = a.controls;
  int r = sd_bus_message_append(m, "st", a.run.c_str(), a.grace_usec);
  if (r >= 0) r = sd_bus_message_open_container(m, 'a', "{sv}");
  if (r >= 0 && a.keep) r = append_option(m, "keep", "b", 1);
  if (r >= 0 && a.sealed) r = append_option(m, "sealed", "b", 1);  // nerved refuses it where the host cannot seal
  if (r >= 0 && !c.properties.empty()) r = append_properties(m, c.properties);
  if (r >= 0 && c.timeout_usec) r = append_option(m, "timeout_usec", "t", c.timeout_usec);
  if (r >= 0 && !c.slice.empty()) r = append_option(m, "slice", "s", c.slice.c_str());
  if (r >= 0) r = sd_bus_message_close_container(m);
  return r;
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

int launch(const Call& c) {
  const VerbArgs& a = c.args;
  const std::string& run = a.run;
  // A relaunch first reaps the earlier attempt, with this grace (nerved's default without one): the
  // call may wait that long.
  LeanCall call("Contain", reap_call_timeout_usec(a.grace_usec));
  if (!a.grace_usec) call.bound_by_default_grace();
  if (call.args()) call.check(append_contain(call.args(), a));
  const char *unit = nullptr, *invocation = nullptr, *cgroup = nullptr;
  unsigned attempt = 0;
  if (!call.read("sssu", &unit, &invocation, &cgroup, &attempt))
    return report_bus_error(c.verb, call.failure());
  if (!in_scope(run, cgroup)) return kExitNotLaunched;
  set_run_environment(run, attempt, invocation);
  std::string unit_name = unit;
  call.close();  // CMD inherits no bus connection
  if (std::string why = a.sealed ? seal_this_process() : ""; !why.empty()) {
    std::fprintf(stderr, "nervectl launch: run '%s' cannot be sealed: %s; the command was not started.\n",
                 run.c_str(), why.c_str());
    return kExitNotLaunched;
  }
  int err = exec_command(a.cmd);
  std::fprintf(stderr, "nervectl launch: cannot execute '%s': %s (run '%s' is contained in %s; reap it)\n",
               a.cmd[0].c_str(), std::strerror(err), run.c_str(), unit_name.c_str());
  return exec_failure_exit_code(err);
}

}  // namespace nerve::ctl
