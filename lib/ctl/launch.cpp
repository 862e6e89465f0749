// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl launch RUN -- CMD` (without --wait: supervise.h): libnerve's nerve_contain_exec (Contain
// this very process, check it is in the scope, seal it when asked, exec CMD in place).
#include "ctl/args.h"
#include "ctl/bus_error.h"
#include "ctl/verb_handlers.h"

#include "libnerve/include/nerve.h"
#include "process/exec_command.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>

namespace nerve::ctl {

namespace {

using Options = std::unique_ptr<nerve_options, decltype(&nerve_options_free)>;

// Contain's options (keep, sealed and the run's controls, as nervectl-full's control_options.h gives
// them to launch --wait) and the grace.
Options contain_options(const VerbArgs& a) {
  Options o(nerve_options_new(), nerve_options_free);
  if (!o) return o;
  const RunControlArgs& c = a.controls;
  nerve_options_set_grace_usec(o.get(), a.grace_usec);
  nerve_options_set_keep(o.get(), a.keep);
  nerve_options_set_sealed(o.get(), a.sealed);  // nerved refuses it where the host cannot seal
  for (const auto& p : c.properties) {
    auto [key, value] = split_property(p);
    nerve_options_add_property(o.get(), key.c_str(), value.c_str());
  }
  nerve_options_set_timeout_usec(o.get(), c.timeout_usec);
  if (!c.slice.empty()) nerve_options_set_slice(o.get(), c.slice.c_str());
  return o;
}

// libnerve's own failures of a launch (nerve.h): the command was not started, or (ExecFailed) it is
// contained but could not be executed.
bool own_failure(const nerve_error& e) {
  return std::string(e.name).rfind("org.nerve.libnerve.Error.", 0) == 0;
}

}  // namespace

int launch(const Call& c) {
  const VerbArgs& a = c.args;
  Options o = contain_options(a);
  std::vector<char*> argv;
  for (const auto& s : a.cmd) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  nerve_error e = NERVE_ERROR_NULL;
  int r = o ? nerve_contain_exec(a.run.c_str(), o.get(), argv.data(), &e) : -ENOMEM;
  int code = kExitNotLaunched;
  if (!e.name) {
    std::fprintf(stderr, "nervectl launch: out of memory; the command was not started.\n");
  } else if (nerve_error_has_name(&e, "org.nerve.libnerve.Error.ExecFailed")) {
    std::fprintf(stderr, "nervectl launch: %s\n", e.message);
    code = exec_failure_exit_code(-r);
  } else if (own_failure(e)) {
    std::fprintf(stderr, "nervectl launch: %s; the command was not started.\n", e.message);
  } else {
    code = report_bus_error(c.verb, BusFailure{e.name, e.message ? e.message : ""});
  }
  nerve_error_free(&e);
  return code;
}

}  // namespace nerve::ctl
