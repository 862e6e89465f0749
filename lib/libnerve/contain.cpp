// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve_contain and nerve_contain_exec (nerve.h): Contain this very process (lean_call.h), trust but
// verify that it is in the scope's cgroup, seal it when asked, and (for the exec) set the command's
// view of its run and exec it in place. `nervectl launch RUN -- CMD` is nerve_contain_exec.
#include "libnerve/error.h"
#include "libnerve/lean_call.h"
#include "libnerve/options.h"
#include "libnerve/string_arrays.h"

#include "base/conventions.h"
#include "base/host.h"
#include "process/exec_command.h"
#include "process/sealing.h"

#include <systemd/sd-bus.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace nerve::lib {

namespace {

// This very process must now be in the scope's cgroup.
int check_in_scope(const std::string& run, const std::string& cgroup, nerve_error* error) {
  auto mine = proc_cgroup(::getpid());
  if (mine && *mine == cgroup) return 0;
  return own_error(error, "NotContained",
                   "nerved reports cgroup " + cgroup + " for run '" + run + "', but this process is in " +
                       (mine ? *mine : "(unknown)"),
                   EPROTO);
}

int seal_here(const std::string& run, nerve_error* error) {
  std::string why = seal_this_process();
  if (why.empty()) return 0;
  return own_error(error, "SealingFailed", "run '" + run + "' cannot be sealed: " + why, EPERM);
}

// The Contain call; its connection is closed when this returns.
int contain_call(const char* run, const nerve_options* options, nerve_containment& c, nerve_error* error) {
  std::uint64_t grace = grace_of(options);
  // A relaunch first reaps the earlier attempt, with this grace (nerved's default without one): the
  // call may wait that long.
  LeanCall call("Contain", reap_call_timeout_usec(grace));
  if (!grace) call.bound_by_default_grace();
  if (call.args()) call.check(sd_bus_message_append(call.args(), "st", run, grace));
  if (call.args()) call.check(append_contain_options(call.args(), options));
  const char *unit = nullptr, *invocation = nullptr, *cgroup = nullptr;
  if (!call.read("sssu", &unit, &invocation, &cgroup, &c.attempt)) return call.fail_into(error);
  c.run = dup(run);
  c.unit = dup(unit);
  c.invocation_id = dup(invocation);
  c.cgroup = dup(cgroup);
  if (!c.run || !c.unit || !c.invocation_id || !c.cgroup) return set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  return 0;
}

int contain_here(const char* run, const nerve_options* options, nerve_containment** ret, nerve_error* error) {
  if (!run || !ret) return own_error(error, "InvalidArgument", "no run id or no place for the answer", EINVAL);
  auto* c = static_cast<nerve_containment*>(std::calloc(1, sizeof(nerve_containment)));
  if (!c) return set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  int r = contain_call(run, options, *c, error);
  if (r >= 0) r = check_in_scope(run, c->cgroup, error);
  if (r >= 0 && sealed(options)) r = seal_here(run, error);
  if (r < 0) {
    nerve_containment_free(c);
    return r;
  }
  *ret = c;
  return 0;
}

int contain_exec(const char* run, const nerve_options* options, char* const argv[], nerve_error* error) {
  if (!argv || !argv[0]) return own_error(error, "InvalidArgument", "no command to execute", EINVAL);
  nerve_containment* c = nullptr;
  if (int r = contain_here(run, options, &c, error); r < 0) return r;
  set_run_environment(c->run, c->attempt, c->invocation_id);
  int err = exec_command(string_vector(argv));
  int r = own_error(error, "ExecFailed",
                    std::string("cannot execute '") + argv[0] + "': " + std::strerror(err) + " (run '" + run +
                        "' is contained in " + c->unit + "; reap it)",
                    err);
  nerve_containment_free(c);
  return r;
}

}  // namespace

}  // namespace nerve::lib

extern "C" {

int nerve_contain(const char* run, const nerve_options* options, nerve_containment** ret, nerve_error* error) {
  try {
    return nerve::lib::contain_here(run, options, ret, error);
  } catch (const std::bad_alloc&) {
    return nerve::lib::set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  }
}

int nerve_contain_exec(const char* run, const nerve_options* options, char* const argv[], nerve_error* error) {
  try {
    return nerve::lib::contain_exec(run, options, argv, error);
  } catch (const std::bad_alloc&) {
    return nerve::lib::set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  }
}

void nerve_containment_free(nerve_containment* c) {
  if (!c) return;
  std::free(c->run);
  std::free(c->unit);
  std::free(c->invocation_id);
  std::free(c->cgroup);
  std::free(c);
}

}  // extern "C"
