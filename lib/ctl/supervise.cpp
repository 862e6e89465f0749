#include "supervise.h"

#include "fd.h"
#include "host.h"
#include "client.h"
#include "exec_command.h"

#include <fcntl.h>
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nerve::ctl {

namespace {

const int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

void pause_point(const char* step) {
  const char* wanted = std::getenv("NERVE_TEST_PAUSE");
  if (wanted && std::strcmp(wanted, step) == 0) ::raise(SIGSTOP);
}

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads one report from the child: "" on EOF, else what it wrote (up to 4 KiB).
std::string read_report(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() >= 1 && (out[0] == 'K')) break;  // "K" is one byte; errors are read to EOF
  }
  return out;
}

// The child, between fork and exec. Never returns.
[[noreturn]] void child_main(const SuperviseRequest& req, const std::string& owner_name, int ctl_fd, int report_fd) {
  char go = 0;
  if (::read(ctl_fd, &go, 1) != 1 || go != 'C') ::_exit(kExitNotLaunched);
  std::string cgroup;
  try {
    auto bus = sdbus::createSessionBusConnection();
    // A relaunch first reaps the earlier attempt with this grace: allow for it.
    bus->setMethodCallTimeout((req.grace_usec ? req.grace_usec : 10'000'000) + 60'000'000);
    auto proxy = sdbus::createProxy(*bus, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
    std::map<std::string, sdbus::Variant> options;
    options["owner_bus_name"] = sdbus::Variant(owner_name);
    if (req.keep) options["keep"] = sdbus::Variant(true);
    std::tuple<std::string, std::string, std::string, uint32_t> reply;
    proxy->callMethod("Contain")
        .onInterface("org.nerve.Lifecycle1.Manager")
        .withArguments(req.run, req.grace_usec, options)
        .storeResultsTo(reply);
    cgroup = std::get<2>(reply);
  } catch (const sdbus::Error& e) {
    write_all(report_fd, "E" + e.getMessage() + " [" + e.getName() + "]");
    ::_exit(kExitNotLaunched);
  }
  auto mine = proc_cgroup(::getpid());
  if (!mine || *mine != cgroup) {
    write_all(report_fd, "Enerved reports cgroup " + cgroup + " but the child is in " + mine.value_or("(unknown)"));
    ::_exit(kExitNotLaunched);
  }
  if (!write_all(report_fd, "K")) ::_exit(kExitNotLaunched);
  // Contained: a TERM to the scope (a Cancel before the exec) must end this child now, not once the
  // exec unblocks it, or the Cancel waits for the whole grace before its SIGKILL (issue 8, item 11).
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (int s : kForwarded) sigaddset(&forwarded, s);
  sigprocmask(SIG_UNBLOCK, &forwarded, nullptr);
  if (::read(ctl_fd, &go, 1) != 1 || go != 'X') ::_exit(kExitNotLaunched);

  int err = exec_command(req.cmd);
  write_all(report_fd, "F" + std::to_string(err) + " cannot execute '" + req.cmd[0] + "': " + std::strerror(err));
  ::_exit(err == ENOENT ? 127 : 126);
}

class Supervisor {
 public:
  Supervisor(Context& ctx, const SuperviseRequest& req) : ctx_(ctx), req_(req) {}

  int run() {
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : kForwarded) sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    sigfd_.reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    std::signal(SIGPIPE, SIG_IGN);

    std::string owner = ctx_.client().bus().getUniqueName();
    int ctl[2], report[2];
    if (::pipe2(ctl, O_CLOEXEC) < 0 || ::pipe2(report, O_CLOEXEC) < 0) return fail("pipe", errno);
    ctl_.reset(ctl[1]);
    report_.reset(report[0]);
    pid_ = ::fork();
    if (pid_ < 0) return fail("fork", errno);
    if (pid_ == 0) {
      ::close(ctl[1]);
      ::close(report[0]);
      child_main(req_, owner, ctl[0], report[1]);
    }
    ::close(ctl[0]);
    ::close(report[1]);
    pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));

    // Step 1: contain.
    pause_point("before-scope");
    if (int s = pending_signal()) return cancel_uncontained(s);
    write_all(ctl_.get(), "C");
    int s = 0;
    std::string rep = wait_report(&s);
    if (s) return cancel_uncontained(s);
    if (rep != "K") {
      std::fprintf(stderr, "nervectl launch: %s\nnervectl launch: the command was not started.\n",
                   rep.empty() ? "the contain step ended without a word" : rep.substr(1).c_str());
      reap_child();
      return kExitNotLaunched;
    }
    // Step 2: exec.
    pause_point("before-exec");
    if (int s2 = pending_signal()) return cancel(s2);
    write_all(ctl_.get(), "X");
    rep = wait_report(&s);
    if (s) return cancel(s);
    if (!rep.empty()) {
      std::fprintf(stderr, "nervectl launch: %s\n", rep.substr(rep.find(' ') + 1).c_str());
      int status = reap_child();
      finish_run();
      return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
    }
    // Step 3: wait for CMD or a signal.
    pause_point("before-wait");
    for (;;) {
      if (int s3 = pending_signal()) return cancel(s3);
      pollfd fds[2] = {{sigfd_.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return fail("poll", errno);
      if (fds[1].revents) {
        int status = reap_child();
        finish_run();
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
        return 1;
      }
    }
  }

 private:
  int pending_signal() {
    signalfd_siginfo si{};
    if (::read(sigfd_.get(), &si, sizeof si) == sizeof si) return static_cast<int>(si.ssi_signo);
    return 0;
  }

  // Waits for the child's report (or EOF), or a signal (then *sig is set).
  std::string wait_report(int* sig) {
    for (;;) {
      pollfd fds[2] = {{sigfd_.get(), POLLIN, 0}, {report_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return "Epoll failed";
      if (fds[0].revents) {
        if ((*sig = pending_signal())) return "";
      }
      if (fds[1].revents) return read_report(report_.get());
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
    call_cancel(sig, true);
    return 128 + sig;
  }

  // A signal once the child is contained: pass it on to the whole scope, wait until it is empty.
  int cancel(int sig) {
    call_cancel(sig, false);
    ::kill(pid_, SIGKILL);  // already gone with its scope; harmless
    reap_child();
    return 128 + sig;
  }

  void call_cancel(int sig, bool may_not_exist) {
    try {
      ctx_.set_call_timeout_usec((req_.grace_usec ? req_.grace_usec : 10'000'000) + 60'000'000);
      auto [outcome, receipt] = ctx_.client().Cancel(req_.run, sig, req_.grace_usec);
      if (outcome != "complete" && outcome != "no_scope")
        std::fprintf(stderr, "nervectl launch: cancelling run '%s' ended %s: %s\n", req_.run.c_str(), outcome.c_str(),
                     receipt.c_str());
    } catch (const sdbus::Error& e) {
      if (may_not_exist && e.getName() == "org.nerve.Lifecycle1.Error.NoSuchRun") return;
      std::fprintf(stderr, "nervectl launch: cannot cancel run '%s': %s [%s]\n", req_.run.c_str(),
                   e.getMessage().c_str(), e.getName().c_str());
    }
  }

  // CMD has exited: reap the scope so no descendant outlives it.
  void finish_run() {
    try {
      ctx_.set_call_timeout_usec((req_.grace_usec ? req_.grace_usec : 10'000'000) + 60'000'000);
      auto [outcome, receipt] = ctx_.client().Reap(req_.run, req_.grace_usec);
      if (outcome != "complete" && outcome != "no_scope")
        std::fprintf(stderr, "nervectl launch: reaping run '%s' ended %s: %s\n", req_.run.c_str(), outcome.c_str(),
                     receipt.c_str());
    } catch (const sdbus::Error& e) {
      std::fprintf(stderr, "nervectl launch: cannot reap run '%s': %s [%s]\n", req_.run.c_str(), e.getMessage().c_str(),
                   e.getName().c_str());
    }
  }

  int fail(const char* what, int err) {
    std::fprintf(stderr, "nervectl launch: %s failed: %s\n", what, std::strerror(err));
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap_child();
      call_cancel(SIGKILL, true);
    }
    return kExitNotLaunched;
  }

  Context& ctx_;
  const SuperviseRequest& req_;
  Fd sigfd_, ctl_, report_, pidfd_;
  pid_t pid_ = -1;
};

}  // namespace

int supervise(Context& ctx, const SuperviseRequest& req) { return Supervisor(ctx, req).run(); }

}  // namespace nerve::ctl
