// SPDX-License-Identifier: LGPL-2.1-or-later
// The reference client again, but talking to the user manager over its private socket
// ($XDG_RUNTIME_DIR/systemd/private), as systemd-run and systemctl do: no dbus-daemon hop, no Hello.
// sd-bus directly: sdbus-c++ 1.2 cannot open a connection to a plain address.
#pragma once

#include <systemd/sd-bus.h>

#include <map>
#include <string>
#include <sys/types.h>

namespace bench {

class RawPrivate {
 public:
  RawPrivate();  // throws when there is no private socket
  ~RawPrivate();
  RawPrivate(const RawPrivate&) = delete;
  RawPrivate& operator=(const RawPrivate&) = delete;
  static bool available();
  bool start_scope(const std::string& unit, pid_t pid);
  bool stop_until_empty(const std::string& unit, const std::string& cgroup);

 private:
  static int on_job_removed(sd_bus_message* m, void* self, sd_bus_error*);
  bool wait_job(const std::string& job, int timeout_ms = 30'000);
  sd_bus* bus_ = nullptr;
  std::map<std::string, std::string> removed_;  // job path -> result, until claimed
};

}  // namespace bench
