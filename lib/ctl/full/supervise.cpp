// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ctl/full/supervise.h"

#include "ctl/full/client.h"
#include "ctl/full/control_options.h"
#include "ctl/verb_handlers.h"
#include "process/exec_command.h"
#include "base/fd.h"
#include "process/held_child.h"
#include "base/host.h"
#include "process/sealing.h"

#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <systemd/sd-bus.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace nerve::ctl {

namespace {

const int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
constexpr char kWordContain = 'C';  // then kWordExec (held_child.h)
constexpr char kContained = 'K';    // the contain step's report when it succeeded; "E<message>" when not

void pause_point(const char* step) {
  const char* wanted = std::getenv("NERVE_TEST_PAUSE");
  if (wanted && std::strcmp(wanted, step) == 0) ::raise(SIGSTOP);
}

void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

// One byte of the report pipe, or nullopt at EOF or on an error.
std::optional<char> read_byte(int fd) {
  char c = 0;
  ssize_t n;
  do {
    n = ::read(fd, &c, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) return std::nullopt;
  return c;
}

// The contain step's report: "K<attempt>\n" (the pipe stays open for the exec step), returned as
// "K<attempt>"; or an error read to EOF.
std::string read_contain_report(int fd) {
  auto first = read_byte(fd);
  if (!first) return "";
  if (*first != kContained) return *first + read_report(fd);
  std::string out(1, kContained);
  for (auto c = read_byte(fd); c && *c != '\n' && out.size() < 16; c = read_byte(fd)) out += *c;
  return out;
}

// nerved's default grace (the manager's DefaultGraceUSec), asked within the bound of a call that waits
// for no reap; the built-in default when nerved does not say (a nerved older than the property).
std::uint64_t default_grace(Client& client) {
  try {
    client.bus().setMethodCallTimeout(kCallTimeoutUsec);
    std::uint64_t grace = client.DefaultGraceUSec();
    return grace && grace <= kMaxGraceUsec ? grace : kDefaultGraceUsec;
  } catch (const sdbus::Error&) {
    return kDefaultGraceUsec;
  }
}

// The child's contain step: Contain through the generated proxy on a connection of its own, with the
// supervisor's connection as the run's owner, then check that this process is in the scope.
// "" when contained, else why not.
std::string contain_child(const SuperviseRequest& req, const std::string& owner_name, unsigned* attempt_out) {
  std::string cgroup;
  try {
    Client client(sdbus::createSessionBusConnection());
    // A relaunch reaps the earlier attempt first, with this grace, or nerved's default without one.
    client.bus().setMethodCallTimeout(reap_call_timeout_usec(req.grace_usec ? req.grace_usec : default_grace(client)));
    std::map<std::string, sdbus::Variant> options;
    options["owner_bus_name"] = sdbus::Variant(owner_name);
    if (req.keep) options["keep"] = sdbus::Variant(true);
    if (req.sealed) options["sealed"] = sdbus::Variant(true);
    add_control_options(options, req.controls);
    auto [unit, invocation, scope_cgroup, attempt] = client.Contain(req.run, req.grace_usec, options);
    cgroup = scope_cgroup;
    *attempt_out = attempt;
    set_run_environment(req.run, attempt, invocation);
  } catch (const sdbus::Error& e) {
    return e.getMessage() + " [" + e.getName() + "]";
  }
  auto mine = proc_cgroup(::getpid());
  if (!mine || *mine != cgroup) return "nerved reports cgroup " + cgroup + " but the child is in " + mine.value_or("(unknown)");
  return "";
}

// The child, between fork and exec. Never returns.
[[noreturn]] void child_main(const SuperviseRequest& req, const std::string& owner_name, int go, int report) {
  if (!await_word(go, kWordContain)) ::_exit(kExitNotLaunched);
  unsigned attempt = 0;
  std::string why = contain_child(req, owner_name, &attempt);
  if (!why.empty()) {
    write_all(report, "E" + why);
    ::_exit(kExitNotLaunched);
  }
  if (std::string sealing = req.sealed ? seal_this_process() : ""; !sealing.empty()) {
    write_all(report, "Ethe run cannot be sealed: " + sealing);
    ::_exit(kExitNotLaunched);
  }
  // The attempt, so that the final reap ends this attempt only (ReapAttempt).
  write_all(report, kContained + std::to_string(attempt) + "\n");
  // Contained: from here a cancellation's signal must end the child at once, not after the grace.
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (int s : kForwarded) sigaddset(&forwarded, s);
  sigprocmask(SIG_UNBLOCK, &forwarded, nullptr);
  if (!await_word(go, kWordExec)) ::_exit(kExitNotLaunched);
  exit_step_failed(report, exec_command(req.cmd), "exec");
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

class Supervisor {
 public:
  Supervisor(Context& ctx, const SuperviseRequest& req) : ctx_(ctx), req_(req) {}

  int run() {
    block_signals();
    if (!req_.keep) watch_parent();
    if (!start_child()) return fail("pipe2 or fork", errno);
    if (int code = step_contain(); code >= 0) return code;
    if (int code = step_exec(); code >= 0) return code;
    return wait_command();
  }

 private:
  void block_signals() {
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : kForwarded) sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    sigfd_.reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    std::signal(SIGPIPE, SIG_IGN);
  }

  // The process that ran `nervectl launch --wait` (the engine) owns the run: a pidfd of it, which
  // becomes readable when it ends, even by a SIGKILL of its pid alone. The parent is read again once
  // the pidfd is open, so that one that ended before cannot be missed (this process would have been
  // reparented). Pid 1 is never watched: it never ends.
  void watch_parent() {
    parent_ = ::getppid();
    if (parent_ <= 1) return;
    parentfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, parent_, 0)));
    if (::getppid() != parent_) parent_gone_ = true;
  }

  // The engine ended: the run ends with it, as a plain launch's does. The supervisor closes its bus
  // connection, the run's owner (nerved reaps the run, cause owner_gone), and exits when the
  // command does. A child that has not run CMD yet is killed.
  int owner_gone(bool command_runs) {
    std::fprintf(stderr, "nervectl launch: the process that started it (pid %d) is gone; run '%s' ends with it.\n",
                 static_cast<int>(parent_), req_.run.c_str());
    ctx_.disconnect();
    if (!command_runs) ::kill(pid_, SIGKILL);
    return exit_status(reap_child());
  }

  bool parent_ended() {
    if (parent_gone_) return true;
    pollfd p{parentfd_.get(), POLLIN, 0};
    return parentfd_.get() >= 0 && ::poll(&p, 1, 0) > 0;
  }

  bool start_child() {
    std::string owner = ctx_.client().bus().getUniqueName();
    pid_ = fork_held(pipes_, [&](int go, int report) { child_main(req_, owner, go, report); });
    if (pid_ < 0) return false;
    pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    return true;
  }

  // Step 1: contain. -1 when contained, else nervectl's exit code.
  int step_contain() {
    pause_point("before-scope");
    if (int s = pending_signal()) return cancel_uncontained(s);
    send_word(pipes_.go, kWordContain);
    int s = 0;
    std::string rep = wait_report(&s, read_contain_report);
    if (s) return cancel_uncontained(s);
    if (parent_ended()) return owner_gone(false);
    if (!rep.empty() && rep[0] == kContained) {
      attempt_ = static_cast<unsigned>(std::strtoul(rep.c_str() + 1, nullptr, 10));
      return -1;
    }
    std::fprintf(stderr, "nervectl launch: %s\nnervectl launch: the command was not started.\n",
                 rep.empty() ? "the contain step ended without a word" : rep.substr(1).c_str());
    reap_child();
    return kExitNotLaunched;
  }

  // Step 2: exec. -1 when CMD runs, else nervectl's exit code.
  int step_exec() {
    pause_point("before-exec");
    if (int s = pending_signal()) return cancel(s);
    send_word(pipes_.go, kWordExec);
    int s = 0;
    std::string rep = wait_report(&s, read_report);
    if (s) return cancel(s);
    if (parent_ended()) return owner_gone(false);
    auto failure = parse_report(rep);
    if (!failure) return -1;
    std::fprintf(stderr, "nervectl launch: cannot execute '%s': %s\n", req_.cmd[0].c_str(), std::strerror(failure->err));
    int status = reap_child();
    finish_run();
    return WIFEXITED(status) ? WEXITSTATUS(status) : exec_failure_exit_code(failure->err);
  }

  // Step 3: wait for CMD or a signal.
  int wait_command() {
    pause_point("before-wait");
    for (;;) {
      if (int s = pending_signal()) return cancel(s);
      if (parent_ended()) return owner_gone(true);
      pollfd fds[3] = {{sigfd_.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}, {parentfd_.get(), POLLIN, 0}};
      if (::poll(fds, 3, -1) < 0 && errno != EINTR) return fail("poll", errno);
      // A signal before CMD's end: one sent to a process group that holds both (Ctrl-C, parallel's
      // --termseq) is pending here before CMD can have exited of it, and it cancels the run.
      if (fds[0].revents) continue;
      if (fds[1].revents) {
        int status = reap_child();
        finish_run();
        return exit_status(status);
      }
    }
  }

  int pending_signal() {
    signalfd_siginfo si{};
    if (::read(sigfd_.get(), &si, sizeof si) == sizeof si) return static_cast<int>(si.ssi_signo);
    return 0;
  }

  // Waits for the child's report (READ on the report pipe), a signal (then *sig is set) or the end
  // of the parent (then "", and parent_ended() says so).
  std::string wait_report(int* sig, std::string (*read)(int)) {
    for (;;) {
      pollfd fds[3] = {{sigfd_.get(), POLLIN, 0}, {pipes_.report.get(), POLLIN, 0}, {parentfd_.get(), POLLIN, 0}};
      if (parent_gone_) return "";
      if (::poll(fds, 3, -1) < 0 && errno != EINTR) return "Epoll failed";
      if (fds[0].revents) {
        if ((*sig = pending_signal())) return "";
      }
      if (fds[2].revents) return "";
      if (fds[1].revents) return read(pipes_.report.get());
    }
  }

  int reap_child() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  // A signal before the child is known to be contained: it has not run CMD, so kill it; then make
  // sure any scope that its Contain call made is reaped (nerved serialises both calls of the run).
  int cancel_uncontained(int sig) {
    ::kill(pid_, SIGKILL);
    reap_child();
    end_run(sig, true);
    return 128 + sig;
  }

  // A signal once the child is contained: pass it on to the whole scope, wait until it is empty.
  int cancel(int sig) {
    end_run(sig, false);
    ::kill(pid_, SIGKILL);  // already gone with its scope; harmless
    reap_child();
    return 128 + sig;
  }

  // CMD has exited: reap the scope so no descendant outlives it.
  void finish_run() { end_run(0, false); }

  // Cancel (SIG) or Reap (SIG 0) the run; complaints go to stderr.
  void end_run(int sig, bool may_not_exist) {
    const char* what = sig ? "cancel" : "reap";
    try {
      ctx_.allow_for_reap(req_.grace_usec ? req_.grace_usec : run_grace());
      // Once contained, the attempt is known: a relaunch by another client that came between has
      // ended it already, and the run's new attempt is not this supervisor's to end.
      auto [outcome, receipt] = attempt_ ? ctx_.client().ReapAttempt(req_.run, attempt_, sig, req_.grace_usec)
                                : sig  ? ctx_.client().Cancel(req_.run, sig, req_.grace_usec)
                                       : ctx_.client().Reap(req_.run, req_.grace_usec);
      if (outcome != "complete" && outcome != "no_scope")
        std::fprintf(stderr, "nervectl launch: %s run '%s' ended %s: %s\n", sig ? "cancelling" : "reaping",
                     req_.run.c_str(), outcome.c_str(), receipt.c_str());
    } catch (const sdbus::Error& e) {
      if (may_not_exist && e.getName() == "org.nerve.Lifecycle1.Error.NoSuchRun") return;
      if (e.getName() == "org.nerve.Lifecycle1.Error.Superseded") {
        std::fprintf(stderr, "nervectl launch: run '%s' was launched again by another client; its attempt %u is over: %s [%s]\n",
                     req_.run.c_str(), attempt_, e.getMessage().c_str(), e.getName().c_str());
        return;
      }
      std::fprintf(stderr, "nervectl launch: cannot %s run '%s': %s [%s]\n", what, req_.run.c_str(),
                   e.getMessage().c_str(), e.getName().c_str());
    }
  }

  // The run's grace from its object (a launch without --grace has nerved's default), to bound the
  // wait for the final reap by; the longest grace when it cannot be read.
  std::uint64_t run_grace() {
    try {
      char* path = nullptr;
      if (sd_bus_path_encode("/org/nerve/Lifecycle1/run", req_.run.c_str(), &path) < 0) return kMaxGraceUsec;
      std::string object = path;
      std::free(path);
      ctx_.set_call_timeout_usec(kCallTimeoutUsec);
      auto proxy = sdbus::createProxy(ctx_.client().bus(), "org.nerve.Lifecycle1", object);
      std::uint64_t grace = proxy->getProperty("GraceUSec").onInterface("org.nerve.Lifecycle1.Run");
      return grace ? grace : kMaxGraceUsec;
    } catch (const sdbus::Error&) {
      return kMaxGraceUsec;
    }
  }

  int fail(const char* what, int err) {
    std::fprintf(stderr, "nervectl launch: %s failed: %s\n", what, std::strerror(err));
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap_child();
      end_run(SIGKILL, true);
    }
    return kExitNotLaunched;
  }

  Context& ctx_;
  const SuperviseRequest& req_;
  Fd sigfd_, pidfd_;
  Fd parentfd_;  // the engine's pidfd (watch_parent); none with --keep
  pid_t parent_ = 0;
  bool parent_gone_ = false;
  HeldPipes pipes_;
  pid_t pid_ = -1;
  unsigned attempt_ = 0;  // from the contain step's report; 0 until contained
};

}  // namespace

int supervise(Context& ctx, const SuperviseRequest& req) { return Supervisor(ctx, req).run(); }

int launch_waiting(Context& ctx, const VerbArgs& a) {
  return supervise(ctx, SuperviseRequest{a.run, a.grace_usec, a.keep, a.cmd, a.sealed, a.controls});
}

}  // namespace nerve::ctl
