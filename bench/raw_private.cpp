// SPDX-License-Identifier: LGPL-2.1-or-later
#include "raw_private.h"

#include "clock.h"
#include "procs.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace bench {

namespace {

constexpr const char* kDest = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";

std::string socket_path() {
  const char* rt = std::getenv("XDG_RUNTIME_DIR");
  return rt ? std::string(rt) + "/systemd/private" : "";
}

void check(int r, const char* what) {
  if (r < 0) throw std::runtime_error(std::string("private socket: ") + what + ": " + std::strerror(-r));
}

// Calls a manager method whose reply is one object path (a job).
std::string call_job(sd_bus* bus, sd_bus_message* m) {
  sd_bus_error err = SD_BUS_ERROR_NULL;
  sd_bus_message* reply = nullptr;
  int r = sd_bus_call(bus, m, 0, &err, &reply);
  sd_bus_message_unref(m);
  std::string msg = err.message ? err.message : "";
  sd_bus_error_free(&err);
  if (r < 0) throw std::runtime_error("private socket call: " + msg);
  const char* job = nullptr;
  r = sd_bus_message_read(reply, "o", &job);
  std::string out = r >= 0 ? job : "";
  sd_bus_message_unref(reply);
  return out;
}

}  // namespace

bool RawPrivate::available() { return ::access(socket_path().c_str(), F_OK) == 0; }

RawPrivate::RawPrivate() {
  check(sd_bus_new(&bus_), "sd_bus_new");
  check(sd_bus_set_address(bus_, ("unix:path=" + socket_path()).c_str()), "address");
  check(sd_bus_start(bus_), "connect");
  check(sd_bus_match_signal(bus_, nullptr, nullptr, kPath, kManager, "JobRemoved", &on_job_removed, this),
        "match JobRemoved");
  check(sd_bus_call_method(bus_, kDest, kPath, kManager, "Subscribe", nullptr, nullptr, ""), "Subscribe");
}

RawPrivate::~RawPrivate() { sd_bus_flush_close_unref(bus_); }

int RawPrivate::on_job_removed(sd_bus_message* m, void* self, sd_bus_error*) {
  uint32_t id;
  const char *job, *unit, *result;
  if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) >= 0)
    static_cast<RawPrivate*>(self)->removed_[job] = result;
  return 0;
}

bool RawPrivate::wait_job(const std::string& job, int timeout_ms) {
  auto t0 = Clock::now();
  for (;;) {
    if (auto it = removed_.find(job); it != removed_.end()) {
      bool done = it->second == "done";
      removed_.erase(it);
      return done;
    }
    if (ms_since(t0) > timeout_ms) return false;
    if (sd_bus_process(bus_, nullptr) > 0) continue;  // dispatched something: check again
    sd_bus_wait(bus_, 50'000);
  }
}

bool RawPrivate::start_scope(const std::string& unit, pid_t pid) {
  sd_bus_message* m = nullptr;
  check(sd_bus_message_new_method_call(bus_, &m, kDest, kPath, kManager, "StartTransientUnit"), "message");
  check(sd_bus_message_append(m, "ssa(sv)a(sa(sv))", unit.c_str(), "fail", 4, "PIDs", "au", 1, (uint32_t)pid,
                              "KillMode", "s", "control-group", "TimeoutStopUSec", "t", (uint64_t)10'000'000,
                              "CollectMode", "s", "inactive-or-failed", 0),
        "append");
  return wait_job(call_job(bus_, m));
}

bool RawPrivate::stop_until_empty(const std::string& unit, const std::string& cgroup) {
  EmptyWatch w(cgroup);
  sd_bus_message* m = nullptr;
  check(sd_bus_message_new_method_call(bus_, &m, kDest, kPath, kManager, "StopUnit"), "message");
  check(sd_bus_message_append(m, "ss", unit.c_str(), "replace"), "append");
  std::string job = call_job(bus_, m);
  bool empty = w.wait();
  return wait_job(job) && empty;
}

}  // namespace bench
