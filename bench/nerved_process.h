// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved as the benchmark runs it: started on a runs folder, timed until its bus name is owned
// (NameOwnerChanged seen on a watching connection) and until it logs that its startup
// reconciliation is done; stopped with SIGTERM (runs keep running, as in a restart).
#pragma once

#include <sdbus-c++/sdbus-c++.h>

#include <atomic>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>

namespace bench {

struct StartTimes {
  double name_owned_ms = -1;  // from exec to NameOwnerChanged(org.nerve.Lifecycle1)
  double reconciled_ms = -1;  // from exec to the "reconciliation done" log line (-1: not seen)
};

class Nerved {
 public:
  Nerved(std::string binary, std::string log_path);
  ~Nerved();
  StartTimes start(const std::string& runs_dir);
  void stop();
  pid_t pid() const { return pid_; }

 private:
  void drain(int fd);
  std::string binary_, log_path_;
  pid_t pid_ = -1;
  std::thread drainer_;
  std::atomic<long long> reconciled_ns_{0};  // steady clock, 0 = not yet
  std::unique_ptr<sdbus::IConnection> watch_;
  std::unique_ptr<sdbus::IProxy> dbus_;
  bool owned_ = false;
};

}  // namespace bench
