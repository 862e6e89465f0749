// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve.h's nerve_run: a run started with Launch (launch.cpp), its bus connection (the run's owner)
// and what its RunExited said (wait.cpp).
#pragma once

#include "libnerve/include/nerve.h"

#include <cstdint>
#include <string>

struct sd_bus;
struct sd_bus_slot;

struct nerve_run {
  nerve_run() = default;
  nerve_run(const nerve_run&) = delete;
  nerve_run& operator=(const nerve_run&) = delete;
  ~nerve_run();  // closes the connection: nerved then reaps the run, unless keep

  sd_bus* bus = nullptr;
  sd_bus_slot* match = nullptr;  // RunExited
  std::string id;
  std::string path;
  std::string nerved;  // the unique name that answered the Launch: RunExited must come from it
  std::uint32_t pid = 0;
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  std::string cause;
};
