// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/migration_primer.h"

#include "base/host.h"

#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>

namespace nerve {

MigrationPrimer::MigrationPrimer(Fd procs) : procs_(std::move(procs)) {}

MigrationPrimer::~MigrationPrimer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void MigrationPrimer::prime() {
  if (!procs_) return;
  {
    std::lock_guard lock(mutex_);
    if (last_error_)
      spdlog::debug("no-op migration of nerved into its own cgroup failed: {}", std::strerror(last_error_));
    last_error_ = 0;
    if (pending_ || writing_) return;  // its grace period is this call's too
    pending_ = true;
    if (!thread_.joinable()) {
      // Every signal blocked on the thread: nerved's signals stay with its main thread.
      sigset_t all, old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
      thread_ = std::thread([this] { run(); });
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
  }
  wake_.notify_one();
}

unsigned MigrationPrimer::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

void MigrationPrimer::run() {
  const std::string pid = std::to_string(::getpid());
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return pending_ || stop_; });
    if (stop_) return;
    pending_ = false;
    writing_ = true;
    lock.unlock();
    ssize_t n = ::write(procs_.get(), pid.data(), pid.size());
    int err = errno;
    lock.lock();
    writing_ = false;
    if (n < 0) last_error_ = err;  // logged by the main thread (the log is not this thread's)
    else ++done_;
  }
}

bool MigrationPrimer::enabled() {
  const char* v = std::getenv("NERVE_MIGRATION_PRIMER");
  return !v || std::strcmp(v, "0") != 0;
}

Fd MigrationPrimer::open_own_procs(const std::string& root) {
  auto own = proc_cgroup(::getpid());
  if (!own) {
    spdlog::debug("no cgroup2 membership of nerved: no no-op migrations");
    return Fd();
  }
  std::string path = root + (*own == "/" ? "" : *own) + "/cgroup.procs";
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) spdlog::debug("cannot open {} for no-op migrations: {}", path, std::strerror(errno));
  return fd;
}

}  // namespace nerve
