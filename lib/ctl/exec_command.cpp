#include "exec_command.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

namespace nerve::ctl {

std::vector<sdbus::Struct<std::string, std::string>> property_pairs(const std::vector<std::string>& properties) {
  std::vector<sdbus::Struct<std::string, std::string>> pairs;
  for (const auto& p : properties) {
    auto eq = p.find('=');
    pairs.emplace_back(p.substr(0, eq), eq == std::string::npos ? std::string() : p.substr(eq + 1));
  }
  return pairs;
}

void add_control_options(std::map<std::string, sdbus::Variant>& options, const RunControlArgs& controls) {
  if (!controls.properties.empty()) options["properties"] = sdbus::Variant(property_pairs(controls.properties));
  if (controls.timeout_usec) options["timeout_usec"] = sdbus::Variant(controls.timeout_usec);
  if (!controls.slice.empty()) options["slice"] = sdbus::Variant(controls.slice);
}

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

}  // namespace nerve::ctl
