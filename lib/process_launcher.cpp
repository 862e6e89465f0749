#include "process_launcher.h"

#include "errors.h"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
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
  unsigned attempt = 0;    // the attempt it was contained in: its reaps never reach a later one
  bool released = false;   // told to exec: from then on, an empty report means the exec happened
  bool start_failed = false;  // the command never ran (exec or chdir failed, or it died while held)
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
  // A final run is refused before anything is forked (Contain checks again, in the run's turn).
  if (auto why = finished(req.run)) return done(std::nullopt, BusError{error::RunFinished, *why});
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
      // By its pidfd: the child may have been collected already, and its pid reused.
      ::syscall(SYS_pidfd_send_signal, c->held.pidfd.get(), SIGKILL, nullptr, 0);
      c->start_failed = true;  // on_child_exit only collects it
      if (!c->done) return;    // it died first and on_child_exit already answered
      auto done = std::move(c->done);
      c->done = nullptr;
      return done(std::nullopt, err);
    }
    c->contained = true;
    c->attempt = reply->attempt;
    exit_status_.erase(c->req.run);  // a new attempt runs: the earlier exit status is over
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
  if (!c->report.empty()) return fail_start(c, exec_error(*c));
  if (!c->done) return;
  auto done = std::move(c->done);
  c->done = nullptr;
  spdlog::info("run {}: command {} started as pid {}", c->req.run, c->req.spawn.argv[0], c->held.pid);
  done(c->held.pid, std::nullopt);
}

std::optional<std::string> ProcessLauncher::finished(const std::string& run) {
  std::optional<Record> rec;
  try {
    rec = lifecycle_.deps().store.load(run);
  } catch (const std::exception&) {
    return std::nullopt;  // Contain reads it again and answers
  }
  if (!rec || !is_final(rec->state)) return std::nullopt;
  return "run " + quote_value(run) + " was reaped (state " + to_string(rec->state) +
         "); use another run id, or 'nervectl forget' it first";
}

std::string ProcessLauncher::exec_error(const Child& c) {
  // The report is "<errno> <step>", written by the child when chdir or exec failed.
  int err = std::atoi(c.report.c_str());
  std::string step = c.report.substr(c.report.find(' ') + 1);
  return "cannot " + step + " " + quote_value(step == "chdir" ? c.req.spawn.cwd : c.req.spawn.argv[0]) + ": " +
         std::strerror(err);
}

void ProcessLauncher::fail_start(const std::shared_ptr<Child>& c, const std::string& why) {
  // The command never ran: no RunExited, no final reap. The attempt is abandoned (its scope, which
  // held only the child, is cleaned and the record says failed), so the run may be launched again.
  if (c->start_failed) return;
  c->start_failed = true;
  spdlog::warn("run {}: the command did not start: {}", c->req.run, why);
  auto reply = [this, c, why] {
    if (!c->done) return;
    auto done = std::move(c->done);
    c->done = nullptr;
    // A Cancel or Reap that won the race made the run final: it cannot be launched again (item 12).
    if (auto final_why = finished(c->req.run))
      return done(std::nullopt, BusError{error::RunFinished, "the command of run " + quote_value(c->req.run) +
                                                                 " did not start: " + why + "; meanwhile " + *final_why});
    done(std::nullopt, BusError{error::ExecFailed, "the command of run " + quote_value(c->req.run) + " did not start: " + why});
  };
  if (!c->contained) return reply();
  // Answer once the record says failed, so an immediate retry of the same run id is a new attempt.
  lifecycle_.abandon(c->req.run, c->attempt, reply);
}

void ProcessLauncher::on_child_exit(const std::shared_ptr<Child>& c) {
  siginfo_t si{};
  if (::waitid(P_PIDFD, static_cast<id_t>(c->held.pidfd.get()), &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
    return;
  loop_.unwatch_fd(c->held.pidfd.get());
  if (c->held.report) {
    loop_.unwatch_fd(c->held.report.get());
    // Drain an exec report that is still in the pipe (the child is gone, so this ends).
    char buf[256];
    ssize_t n;
    while ((n = ::read(c->held.report.get(), buf, sizeof buf)) > 0) c->report.append(buf, static_cast<std::size_t>(n));
    c->held.report.reset();
  }
  children_.erase(c->held.pid);
  int code = si.si_code == CLD_EXITED ? si.si_status : -1;
  int sig = si.si_code == CLD_EXITED ? 0 : si.si_status;
  const std::string& run = c->req.run;
  if (!c->report.empty()) return fail_start(c, exec_error(*c));
  if (!c->released) {
    // It ended while held: before containment finished, or because containment failed (then the
    // launch was already answered).
    return fail_start(c, sig ? "it was killed by signal " + std::to_string(sig) + " before its exec"
                             : "it exited with " + std::to_string(code) + " before its exec");
  }
  if (c->start_failed) return;
  if (c->done) {
    // It exec'd and ended before the exec report was read: the launch succeeded.
    auto done = std::move(c->done);
    c->done = nullptr;
    done(c->held.pid, std::nullopt);
  }
  exit_status_[run] = sig ? 128 + sig : code;
  spdlog::info("run {}: command pid {} ended ({})", run, c->held.pid,
               sig ? "signal " + std::to_string(sig) : "exit " + std::to_string(code));
  if (exited_) exited_(run, code, sig);
  if (c->req.reap_on_exit) {
    lifecycle_.reap_attempt(run, c->attempt, [run](std::optional<Receipt> r, std::optional<BusError> err) {
      if (err && err->name != error::NoSuchRun) spdlog::error("run {}: reap on exit failed: {}", run, err->message);
    });
  }
}

}  // namespace nerve
