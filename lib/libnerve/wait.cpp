// SPDX-License-Identifier: LGPL-2.1-or-later
// Waiting for a launched run's command to end (nerve.h): process its connection until RunExited came
// (launch.cpp's match), in a loop bounded by a deadline (nerve_run_wait) or one turn at a time from
// the caller's own event loop (nerve_run_get_fd, nerve_run_get_events, nerve_run_process).
#include "libnerve/error.h"
#include "libnerve/run_handle.h"

#include <systemd/sd-bus.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

namespace nerve::lib {

namespace {

std::uint64_t now_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

int bus_failed(nerve_error* error, int r, const char* what) {
  sd_bus_error e = SD_BUS_ERROR_NULL;
  sd_bus_error_set_errno(&e, r);
  int out = set_error(error, e.name ? e.name : "System.Error", std::string(what) + ": " + (e.message ? e.message : ""), -r);
  sd_bus_error_free(&e);
  return out;
}

// Processes every message that is there; 1 once the command has ended.
int process(nerve_run* run, nerve_error* error) {
  if (!run || !run->bus) return own_error(error, "InvalidArgument", "no run", EINVAL);
  while (!run->exited) {
    int r = sd_bus_process(run->bus, nullptr);
    if (r == 0) break;
    if (r < 0) return bus_failed(error, r, "lost the connection to the session bus");
  }
  return run->exited ? 1 : 0;
}

int wait(nerve_run* run, std::uint64_t timeout_usec, nerve_error* error) {
  std::uint64_t start = now_usec();
  for (;;) {
    int r = process(run, error);
    if (r != 0) return r;
    std::uint64_t waited = now_usec() - start;
    if (timeout_usec != UINT64_MAX && waited >= timeout_usec) return 0;
    r = sd_bus_wait(run->bus, timeout_usec == UINT64_MAX ? UINT64_MAX : timeout_usec - waited);
    if (r < 0 && r != -EINTR) return bus_failed(error, r, "cannot wait on the session bus");
  }
}

}  // namespace

}  // namespace nerve::lib

extern "C" {

int nerve_run_wait(nerve_run* run, uint64_t timeout_usec, nerve_error* error) {
  return nerve::lib::wait(run, timeout_usec, error);
}

int nerve_run_get_fd(nerve_run* run) { return run && run->bus ? sd_bus_get_fd(run->bus) : -EINVAL; }

int nerve_run_get_events(nerve_run* run) { return run && run->bus ? sd_bus_get_events(run->bus) : -EINVAL; }

int nerve_run_process(nerve_run* run, nerve_error* error) { return nerve::lib::process(run, error); }

int nerve_run_exit(const nerve_run* run, int* exit_code, int* signal, const char** cause) {
  if (!run || !run->exited) return 0;
  if (exit_code) *exit_code = run->exit_code;
  if (signal) *signal = run->signal;
  if (cause) *cause = run->cause.c_str();
  return 1;
}

}  // extern "C"
