// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nerved_process.h"

#include "clock.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>

namespace bench {

namespace {
constexpr const char* kName = "org.nerve.Lifecycle1";
}

Nerved::Nerved(std::string binary, std::string log_path)
    : binary_(std::move(binary)), log_path_(std::move(log_path)), watch_(sdbus::createSessionBusConnection()) {
  dbus_ = sdbus::createProxy(*watch_, "org.freedesktop.DBus", "/org/freedesktop/DBus");
  dbus_->uponSignal("NameOwnerChanged").onInterface("org.freedesktop.DBus")
      .call([this](std::string name, std::string, std::string owner) {
        if (name == kName && !owner.empty()) owned_ = true;
      });
  dbus_->finishRegistration();
}

Nerved::~Nerved() { stop(); }

// Copies nerved's stderr to the log and notes when the startup reconciliation is reported done.
void Nerved::drain(int fd) {
  FILE* in = ::fdopen(fd, "r");
  FILE* log = std::fopen(log_path_.c_str(), "a");
  char line[4096];
  while (in && std::fgets(line, sizeof line, in)) {
    if (reconciled_ns_ == 0 && std::string(line).find("reconciliation done") != std::string::npos)
      reconciled_ns_ = Clock::now().time_since_epoch().count();
    if (log) std::fputs(line, log);
  }
  if (log) std::fclose(log);
  if (in) std::fclose(in);
}

StartTimes Nerved::start(const std::string& runs_dir) {
  if (pid_ > 0) throw std::logic_error("nerved already started");
  int err[2];
  if (::pipe2(err, O_CLOEXEC) < 0) throw std::runtime_error("pipe failed");
  owned_ = false;
  reconciled_ns_ = 0;
  auto t0 = Clock::now();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(err[1], 2);
    ::execl(binary_.c_str(), "nerved", "--runs-dir", runs_dir.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(err[1]);
  drainer_ = std::thread([this, fd = err[0]] { drain(fd); });
  StartTimes t;
  for (;;) {
    while (watch_->processPendingRequest()) {
    }
    if (owned_) break;
    if (ms_since(t0) > 60'000) throw std::runtime_error("nerved did not own its bus name within 60 s");
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("nerved exited during startup; see " + log_path_);
    }
    auto pd = watch_->getEventLoopPollData();
    pollfd p{pd.fd, pd.events, 0};
    ::poll(&p, 1, 50);
  }
  t.name_owned_ms = ms_since(t0);
  while (reconciled_ns_ == 0 && ms_since(t0) < 60'000) sleep_ms(1);
  if (reconciled_ns_ != 0)
    t.reconciled_ms = ms_between(t0, Clock::time_point(Clock::duration(reconciled_ns_.load())));
  return t;
}

void Nerved::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (drainer_.joinable()) drainer_.join();
}

}  // namespace bench
