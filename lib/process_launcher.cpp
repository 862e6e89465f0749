#include "process_launcher.h"

#include "errors.h"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace nerve {

struct ProcessLauncher::Child {
  LaunchRequest req;
  HeldChild held;
  Done done;  // empty once replied
  std::string report;
  bool contained = false;  // only a contained command has a run to report on and reap
  bool released = false;   // told to exec: from then on, an empty report means the exec happened
};

ProcessLauncher::~ProcessLauncher() {
  for (auto& [pid, c] : children_) {
    if (c->held.report) loop_.unwatch_fd(c->held.report.get());
    loop_.unwatch_fd(c->held.pidfd.get());
  }
}

int ProcessLauncher::exit_status(const std::string& run) const {
  auto it = exit_status_.find(run);
  return it == exit_status_.end() ? -1 : it->second;
}

void ProcessLauncher::launch(LaunchRequest req, Done done) {
  auto c = std::make_shared<Child>();
  try {
    c->held = spawn_held(req.spawn);
  } catch (const std::exception& e) {
    return done(std::nullopt, BusError{error::ExecFailed, "cannot start the command of run " + quote_value(req.run) +
                                                              ": " + e.what()});
  }
  c->req = std::move(req);
  c->done = std::move(done);
  pid_t pid = c->held.pid;
  children_[pid] = c;
  exit_status_.erase(c->req.run);
  // Watch the pidfd from the start: a child that dies while held is collected too.
  loop_.watch_fd(c->held.pidfd.get(), EPOLLIN, [this, c](std::uint32_t) { on_child_exit(c); });

  ContainRequest creq;
  creq.run = c->req.run;
  creq.pid = pid;
  creq.grace_usec = c->req.grace_usec;
  creq.keep = c->req.keep;
  creq.owner = c->req.owner;
  lifecycle_.contain(std::move(creq), [this, c](std::optional<ContainReply> reply, std::optional<BusError> err) {
    if (err) {
      // Never contained, so it must never exec: closing 'go' makes it exit; SIGKILL makes sure.
      c->held.go.reset();
      ::kill(c->held.pid, SIGKILL);
      if (!c->done) return;  // it died first (e.g. chdir failed) and on_child_exit already answered
      auto done = std::move(c->done);
      c->done = nullptr;
      return done(std::nullopt, err);
    }
    c->contained = true;
    c->released = release(c->held);
    if (!c->released) return;  // it died meanwhile; on_child_exit answers
    loop_.watch_fd(c->held.report.get(), EPOLLIN | EPOLLHUP, [this, c](std::uint32_t) { on_report(c); });
  });
}

void ProcessLauncher::on_report(const std::shared_ptr<Child>& c) {
  char buf[256];
  ssize_t n = ::read(c->held.report.get(), buf, sizeof buf);
  if (n > 0) {
    c->report.append(buf, static_cast<std::size_t>(n));
    return;  // read on until EOF
  }
  loop_.unwatch_fd(c->held.report.get());
  c->held.report.reset();
  if (!c->done) return;
  auto done = std::move(c->done);
  c->done = nullptr;
  if (c->report.empty()) {
    spdlog::info("run {}: command {} started as pid {}", c->req.run, c->req.spawn.argv[0], c->held.pid);
    return done(c->held.pid, std::nullopt);
  }
  int err = std::atoi(c->report.c_str());
  std::string step = c->report.substr(c->report.find(' ') + 1);
  done(std::nullopt,
       BusError{error::ExecFailed, "cannot " + step + " " +
                                       quote_value(step == "chdir" ? c->req.spawn.cwd : c->req.spawn.argv[0]) +
                                       " for run " + quote_value(c->req.run) + ": " + std::strerror(err)});
}

void ProcessLauncher::on_child_exit(const std::shared_ptr<Child>& c) {
  siginfo_t si{};
  if (::waitid(P_PIDFD, static_cast<id_t>(c->held.pidfd.get()), &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
    return;
  loop_.unwatch_fd(c->held.pidfd.get());
  if (c->held.report) {
    loop_.unwatch_fd(c->held.report.get());
    // Drain an exec report that is still in the pipe.
    char buf[256];
    ssize_t n;
    while ((n = ::read(c->held.report.get(), buf, sizeof buf)) > 0) c->report.append(buf, static_cast<std::size_t>(n));
    c->held.report.reset();
  }
  children_.erase(c->held.pid);
  int code = si.si_code == CLD_EXITED ? si.si_status : -1;
  int sig = si.si_code == CLD_EXITED ? 0 : si.si_status;
  const std::string& run = c->req.run;
  if (c->done && c->released && c->report.empty()) {
    // It exec'd and ended before the exec report was read: the launch succeeded.
    auto done = std::move(c->done);
    c->done = nullptr;
    done(c->held.pid, std::nullopt);
  } else if (c->done) {
    // It ended before its launch was answered: a failed exec, or killed while held.
    auto done = std::move(c->done);
    c->done = nullptr;
    std::string why = !c->report.empty() ? std::string(std::strerror(std::atoi(c->report.c_str())))
                                         : sig ? std::string("killed by signal ") + std::to_string(sig)
                                               : "exited with " + std::to_string(code) + " before its exec";
    done(std::nullopt, BusError{error::ExecFailed, "the command of run " + quote_value(run) + " (" +
                                                       quote_value(c->req.spawn.argv[0]) + ") did not start: " + why});
  }
  if (!c->contained) return;
  exit_status_[run] = sig ? 128 + sig : code;
  spdlog::info("run {}: command pid {} ended ({})", run, c->held.pid,
               sig ? "signal " + std::to_string(sig) : "exit " + std::to_string(code));
  if (exited_) exited_(run, code, sig);
  if (c->req.reap_on_exit) {
    lifecycle_.reap(run, 0, [run](std::optional<Receipt> r, std::optional<BusError> err) {
      if (err && err->name != error::NoSuchRun) spdlog::error("run {}: reap on exit failed: {}", run, err->message);
    });
  }
}

}  // namespace nerve
