// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/process_launcher.h"

#include "base/errors.h"
#include "base/host.h"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

namespace nerve {

struct ProcessLauncher::Child {
  LaunchRequest req;
  HeldChild held;
  ReplyOnce<pid_t> reply;
  std::string report;
  unsigned attempt = 0;  // from the ContainReply: the reaps this child starts are of that attempt only
  Phase phase = Phase::Containing;
};

ProcessLauncher::~ProcessLauncher() {
  for (auto& [pid, c] : children_) {
    if (c->held.report) loop_.unwatch_fd(c->held.report.get());
    loop_.unwatch_fd(c->held.pidfd.get());
  }
  for (auto& [run, fd] : adopted_) loop_.unwatch_fd(fd.get());
}

int ProcessLauncher::exit_status(const std::string& run) const {
  auto it = exit_status_.find(run);
  return it == exit_status_.end() ? -1 : it->second;
}

void ProcessLauncher::launch(LaunchRequest req, Done done) {
  // A final run is refused before anything is forked: its exit status stays.
  if (auto allowed = lifecycle_.may_launch(req.contain.run); !allowed) return done(allowed.error());
  auto c = std::make_shared<Child>();
  try {
    c->held = spawn_held(req.spawn);
  } catch (const std::exception& e) {
    return done(Error{error::ExecFailed, "cannot start the command of run " + quote_value(req.contain.run) + ": " + e.what()});
  }
  c->req = std::move(req);
  c->reply = ReplyOnce<pid_t>(std::move(done));
  pid_t pid = c->held.pid;
  children_[pid] = c;
  // Watch the pidfd from the start: a child that dies while held is collected too.
  loop_.watch_fd(c->held.pidfd.get(), EPOLLIN, [this, c](std::uint32_t) { on_child_exit(c); });

  ContainRequest creq = c->req.contain;
  creq.pid = pid;
  lifecycle_.contain(std::move(creq), [this, c](Result<ContainReply> reply) { on_contained(c, std::move(reply)); });
}

void ProcessLauncher::on_contained(const std::shared_ptr<Child>& c, Result<ContainReply> reply) {
  if (!reply) {
    // Never contained, so it must never exec: closing 'go' makes it exit; SIGKILL makes sure.
    c->held.go.reset();
    // By its pidfd: the child may have been collected already, and its pid reused.
    ::syscall(SYS_pidfd_send_signal, c->held.pidfd.get(), SIGKILL, nullptr, 0);
    c->phase = Phase::StartFailed;  // on_child_exit only collects it
    return c->reply(reply.error());  // unless it died first and on_child_exit already answered
  }
  c->phase = Phase::Contained;
  c->attempt = reply->attempt;
  exit_status_.erase(c->req.contain.run);  // a new attempt runs: the earlier exit status is over (a refused one keeps it)
  std::vector<std::string> run_env = {"NERVE_RUN=" + c->req.contain.run, "NERVE_RUN_ATTEMPT=" + std::to_string(reply->attempt),
                                      "INVOCATION_ID=" + reply->invocation_id};
  lifecycle_.command_starting(c->req.contain.run);
  if (!release(c->held, run_env)) return;  // it died meanwhile; on_child_exit answers
  c->phase = Phase::Released;
  loop_.watch_fd(c->held.report.get(), EPOLLIN | EPOLLHUP, [this, c](std::uint32_t) { on_report(c); });
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
  lifecycle_.command_started(c->req.contain.run, true);
  if (!c->reply.pending()) return;
  spdlog::info("run {}: command {} started as pid {}", c->req.contain.run, c->req.spawn.argv[0], c->held.pid);
  c->reply(c->held.pid);
}

std::string ProcessLauncher::exec_error(const Child& c) {
  // The report is "<errno> <step>", written by the child when chdir or exec failed.
  int err = std::atoi(c.report.c_str());
  std::string step = c.report.substr(c.report.find(' ') + 1);
  if (step != "chdir" && step != "exec")  // a step of sealing.h's seal_self
    return "cannot seal it (" + step + " of its new cgroup namespace): " + std::strerror(err);
  return "cannot " + step + " " + quote_value(step == "chdir" ? c.req.spawn.cwd : c.req.spawn.argv[0]) + ": " +
         std::strerror(err);
}

void ProcessLauncher::fail_start(const std::shared_ptr<Child>& c, const std::string& why) {
  // The command never ran: no RunExited, no final reap. The attempt is abandoned (its scope, which
  // held only the child, is cleaned and the record says failed), so the run may be launched again.
  if (c->phase == Phase::StartFailed) return;
  lifecycle_.command_started(c->req.contain.run, false);
  bool contained = c->phase != Phase::Containing;
  c->phase = Phase::StartFailed;
  spdlog::warn("run {}: the command did not start: {}", c->req.contain.run, why);
  auto reply = [c, why](bool final) {
    // A Cancel or Reap that won the race made the run final: it cannot be launched again, so this is
    // not ExecFailed ("launch it again") but RunFinished.
    if (final)
      return c->reply(Error{error::RunFinished, "run " + quote_value(c->req.contain.run) +
                                                    " was reaped while its command was starting; the command did "
                                                    "not start: " + why});
    c->reply(Error{error::ExecFailed, "the command of run " + quote_value(c->req.contain.run) + " did not start: " + why});
  };
  if (!contained) return reply(false);
  // Answer once the record says failed, so an immediate retry of the same run id is a new attempt.
  lifecycle_.abandon(c->req.contain.run, c->attempt, reply);
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
  if (!c->report.empty()) return fail_start(c, exec_error(*c));
  switch (c->phase) {
    case Phase::StartFailed: return;
    case Phase::Containing:
    case Phase::Contained:
      // It ended while held: before containment finished, or before its release.
      return fail_start(c, sig ? "it was killed by signal " + std::to_string(sig) + " before its exec"
                               : "it exited with " + std::to_string(code) + " before its exec");
    case Phase::Released: break;
  }
  // It exec'd; if it ended before the exec report was read, the launch succeeded all the same.
  lifecycle_.command_started(c->req.contain.run, true);
  c->reply(c->held.pid);
  const std::string& run = c->req.contain.run;
  exit_status_[run] = sig ? 128 + sig : code;
  spdlog::info("run {}: command pid {} ended ({})", run, c->held.pid,
               sig ? "signal " + std::to_string(sig) : "exit " + std::to_string(code));
  if (exited_) exited_(run, code, sig);
  if (c->req.contain.reap_on_exit) lifecycle_.reap_in_background(run, "reap on exit", Cause::Exited, c->attempt);
}

void ProcessLauncher::adopt(const Record& rec) {
  if (adopted_.count(rec.run) || rec.leader_pid <= 0 || rec.leader_start_time == 0) return;
  for (const auto& [pid, c] : children_)
    if (c->req.contain.run == rec.run) return;  // still nerved's own child (a reconcile while nerved runs)
  pid_t pid = rec.leader_pid;
  // The pidfd first, then the start time: if it matches, the pidfd is of that very process.
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  int err = pidfd ? 0 : errno;
  if (!pidfd && err != ESRCH) {
    spdlog::error("run {}: cannot watch its command pid {}: pidfd_open: {}; trying again in 1 s", rec.run, pid,
                  std::strerror(err));
    loop_.add_timer(std::chrono::seconds(1), [this, rec] { adopt(rec); });
    return;
  }
  auto start = pidfd ? proc_start_time(pid, &err) : std::nullopt;
  bool gone = !pidfd || (start && *start != rec.leader_start_time) || (!start && (err == ENOENT || err == ESRCH));
  unsigned attempt = rec.attempt;
  std::string run = rec.run;
  if (gone) {
    loop_.add_timer(Clock::duration::zero(), [this, run, attempt, pid] { adopted_ended(run, attempt, pid); });
    return;
  }
  spdlog::info("run {}: watching its command pid {} again (reap on exit)", run, pid);
  loop_.watch_fd(pidfd.get(), EPOLLIN, [this, run, attempt, pid](std::uint32_t) { adopted_ended(run, attempt, pid); });
  adopted_[run] = std::move(pidfd);
}

void ProcessLauncher::adopted_ended(const std::string& run, unsigned attempt, pid_t pid) {
  if (auto it = adopted_.find(run); it != adopted_.end()) {
    loop_.unwatch_fd(it->second.get());
    adopted_.erase(it);
  }
  // Not nerved's child (nerved restarted since it started it): its exit status cannot be known.
  spdlog::info("run {}: command pid {} ended while it was not nerved's child (exit status unknown)", run, pid);
  exit_status_.erase(run);
  if (exited_) exited_(run, -1, 0);
  lifecycle_.reap_in_background(run, "reap on exit", Cause::Exited, attempt);
}

}  // namespace nerve
