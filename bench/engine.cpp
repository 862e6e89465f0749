// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <map>

namespace bench {

namespace {
constexpr const char* kIface = "org.nerve.Lifecycle1.Manager";
}

Engine::Engine() : bus_(sdbus::createSessionBusConnection()) {
  bus_->setMethodCallTimeout(120'000'000);
  manager_ = sdbus::createProxy(*bus_, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
  devnull_ = ::open("/dev/null", O_RDWR | O_CLOEXEC);
}

Engine::~Engine() {
  if (devnull_ >= 0) ::close(devnull_);
}

std::string Engine::next_run(const std::string& prefix) {
  static std::atomic<unsigned> n{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

pid_t Engine::launch(const std::string& run, const std::vector<std::string>& argv, bool reap_on_exit) {
  std::vector<sdbus::UnixFd> stdio{sdbus::UnixFd(devnull_), sdbus::UnixFd(devnull_), sdbus::UnixFd(devnull_)};
  std::map<std::string, sdbus::Variant> opts{{"reap_on_exit", sdbus::Variant(reap_on_exit)}};
  sdbus::ObjectPath path;
  uint32_t pid = 0;
  manager_->callMethod("Launch").onInterface(kIface)
      .withArguments(run, argv, std::vector<std::string>{"PATH=/usr/bin:/bin"}, std::string("/"), stdio, opts)
      .storeResultsTo(path, pid);
  return static_cast<pid_t>(pid);
}

std::string Engine::reap(const std::string& run, uint64_t grace_usec) {
  std::string outcome, receipt;
  manager_->callMethod("Reap").onInterface(kIface).withArguments(run, grace_usec).storeResultsTo(outcome, receipt);
  return outcome;
}

std::string Engine::cancel(const std::string& run, int signal, uint64_t grace_usec) {
  std::string outcome, receipt;
  manager_->callMethod("Cancel").onInterface(kIface).withArguments(run, int32_t{signal}, grace_usec)
      .storeResultsTo(outcome, receipt);
  return outcome;
}

void Engine::forget(const std::string& run) {
  manager_->callMethod("Forget").onInterface(kIface).withArguments(run);
}

}  // namespace bench
