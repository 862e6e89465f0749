// SPDX-License-Identifier: LGPL-2.1-or-later
// An engine: a resident client of nerved's bus API (Launch, Reap, Cancel,
// Forget) on its own connection. The runs it launches are owned by that connection.
#pragma once

#include <sdbus-c++/sdbus-c++.h>

#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bench {

class Engine {
 public:
  Engine();
  ~Engine();
  // A new run id, unique in this process: <prefix>-<pid>-<n>.
  static std::string next_run(const std::string& prefix);
  // Launch with /dev/null as stdio; reap_on_exit false (the benchmark reaps). Returns the pid.
  pid_t launch(const std::string& run, const std::vector<std::string>& argv, bool reap_on_exit = false);
  std::string reap(const std::string& run, uint64_t grace_usec = 0);  // the outcome
  std::string cancel(const std::string& run, int signal, uint64_t grace_usec);
  void forget(const std::string& run);
  sdbus::IConnection& bus() { return *bus_; }

 private:
  std::unique_ptr<sdbus::IConnection> bus_;
  std::unique_ptr<sdbus::IProxy> manager_;
  int devnull_ = -1;
};

}  // namespace bench
