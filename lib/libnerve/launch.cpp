// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve_launch and the nerve_run it gives (nerve.h): Launch on a connection of the run's own (the
// run's owner: when it closes, nerved reaps the run), with a match on RunExited for this run made
// before the call, so that the signal cannot come before the match; waiting is processing that
// connection until the signal came (wait.cpp).
#include "libnerve/run_handle.h"

#include "libnerve/error.h"
#include "libnerve/lean_call.h"
#include "libnerve/options.h"

#include "base/conventions.h"

#include <systemd/sd-bus.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

extern char** environ;

namespace nerve::lib {

namespace {

// RunExited(run, exit_code, signal, cause) of this run, from the nerved that answered the Launch.
int on_run_exited(sd_bus_message* m, void* userdata, sd_bus_error*) {
  auto* run = static_cast<nerve_run*>(userdata);
  const char *id = nullptr, *cause = nullptr;
  int exit_code = -1, signal = 0;
  if (sd_bus_message_read(m, "siis", &id, &exit_code, &signal, &cause) < 0 || run->id != id) return 0;
  if (run->nerved.empty() || run->nerved != (sd_bus_message_get_sender(m) ?: "")) return 0;
  run->exited = true;
  run->exit_code = exit_code;
  run->signal = signal;
  run->cause = cause;
  return 0;
}

int append_stdio(sd_bus_message* m, const int stdio[3]) {
  static const int standard[3] = {0, 1, 2};
  if (!stdio) stdio = standard;
  int r = sd_bus_message_open_container(m, 'a', "h");
  for (int i = 0; i < 3 && r >= 0; ++i) r = sd_bus_message_append(m, "h", stdio[i]);
  if (r >= 0) r = sd_bus_message_close_container(m);
  return r;
}

struct LaunchArgs {
  const char* run;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  const int* stdio;
  const nerve_options* options;
};

int append_launch(sd_bus_message* m, const LaunchArgs& a) {
  std::string cwd;
  if (a.cwd) {
    cwd = a.cwd;
  } else if (char* here = ::get_current_dir_name()) {
    cwd = here;
    std::free(here);
  }
  int r = sd_bus_message_append(m, "s", a.run);
  if (r >= 0) r = sd_bus_message_append_strv(m, const_cast<char**>(a.argv));
  if (r >= 0) r = sd_bus_message_append_strv(m, const_cast<char**>(a.envp ? a.envp : environ));
  if (r >= 0) r = sd_bus_message_append(m, "s", cwd.c_str());
  if (r >= 0) r = append_stdio(m, a.stdio);
  if (r >= 0) r = append_launch_options(m, a.options);
  return r;
}

int launch(const LaunchArgs& a, nerve_run** ret, nerve_error* error) {
  if (!a.run || !a.argv || !a.argv[0] || !ret)
    return own_error(error, "InvalidArgument", "no run id, no command or no place for the run", EINVAL);
  auto run = std::make_unique<nerve_run>();
  run->id = a.run;
  std::uint64_t grace = grace_of(a.options);
  // A relaunch first reaps the earlier attempt with the grace (contain.cpp has the same bound).
  LeanCall call("Launch", reap_call_timeout_usec(grace));
  if (!grace) call.bound_by_default_grace();
  if (call.bus())
    call.check(sd_bus_match_signal_async(call.bus(), &run->match, nullptr, "/org/nerve/Lifecycle1",
                                         "org.nerve.Lifecycle1.Manager", "RunExited", on_run_exited, nullptr,
                                         run.get()));
  if (call.args()) call.check(append_launch(call.args(), a));
  const char* path = nullptr;
  if (!call.read("ou", &path, &run->pid)) return call.fail_into(error);
  run->path = path;
  run->nerved = call.reply_sender();
  run->bus = call.release();
  *ret = run.release();
  return 0;
}

}  // namespace

}  // namespace nerve::lib

nerve_run::~nerve_run() {
  sd_bus_slot_unref(match);
  sd_bus_flush_close_unref(bus);
}

extern "C" {

int nerve_launch(const char* run, char* const argv[], char* const envp[], const char* cwd, const int stdio[3],
                 const nerve_options* options, nerve_run** ret, nerve_error* error) {
  try {
    return nerve::lib::launch({run, argv, envp, cwd, stdio, options}, ret, error);
  } catch (const std::bad_alloc&) {
    return nerve::lib::set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  }
}

void nerve_run_free(nerve_run* run) { delete run; }

const char* nerve_run_id(const nerve_run* run) { return run ? run->id.c_str() : nullptr; }
uint32_t nerve_run_pid(const nerve_run* run) { return run ? run->pid : 0; }
const char* nerve_run_path(const nerve_run* run) { return run ? run->path.c_str() : nullptr; }

}  // extern "C"
