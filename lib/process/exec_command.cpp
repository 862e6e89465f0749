// SPDX-License-Identifier: LGPL-2.1-or-later
#include "process/exec_command.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

namespace nerve {

void set_run_environment(const std::string& run, unsigned attempt, const std::string& invocation_id) {
  ::setenv("NERVE_RUN", run.c_str(), 1);
  ::setenv("NERVE_RUN_ATTEMPT", std::to_string(attempt).c_str(), 1);
  ::setenv("INVOCATION_ID", invocation_id.c_str(), 1);
}

int exec_command(const std::vector<std::string>& cmd) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  std::vector<char*> argv;
  for (const auto& s : cmd) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  return errno;
}

}  // namespace nerve
