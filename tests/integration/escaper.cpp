// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve_test_escaper: the command the integration tests launch in a run. It plays the processes a
// reap has to catch, and proves with marker files that it really started before a test acts.
//
//   --markers DIR [--ready-fd FD]
//       Builds a process tree that tries to leave its parent's reach:
//         setsid      a child that calls setsid() (new session and process group), then sleeps;
//         grandchild  a double-forked grandchild (fork, fork, the intermediate exits), which sleeps;
//         ignoreterm  a child that sets SIGTERM to SIG_IGN, then sleeps;
//         main        this process, which sleeps too.
//       Each writes its pid to DIR/<role>.pid (temp file + rename, so a file that exists is
//       complete). Only after all four are written, and the intermediate has exited, does main write
//       DIR/ready (again temp + rename), or one byte to FD with --ready-fd.
//   --pidfile FILE   write this process's pid to FILE (temp + rename), then sleep.
//   --touch FILE     create FILE (a side effect a test can look for), then exit 0.
//   --exit N         exit with status N at once.
//   --burn MS [--pidfile FILE] [--setsid-child DIR] [--burned FILE]
//       Writes its pid to FILE (when given: the proof it started), then uses MS ms of CPU time
//       (busy, on its own CPU clock) and exits 0; with --burned, writes that FILE once it has used
//       1000 ms (a test then knows the run burned at least 1 s). With --setsid-child, first forks a child that
//       calls setsid(), writes DIR/setsid.pid, uses MS/2 ms of CPU and then sleeps: a process the
//       command leaves behind, whose CPU time the run's figures must count too.
//
// Sleeping is pause(): no process here uses CPU while it waits to be killed. Exit status 64 means a
// usage error, 70 that building the tree failed (the message says why).
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <ctime>

namespace {

constexpr int kExitUsage = 64;
constexpr int kExitFailed = 70;
constexpr int kChildReportTimeoutMs = 10'000;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "nerve_test_escaper[%d]: %s: %s\n", static_cast<int>(::getpid()), what.c_str(),
               std::strerror(errno));
  std::_Exit(kExitFailed);
}

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

// Writes TEXT to PATH so that PATH, once it exists, is complete: temp file, then rename.
void write_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("cannot create " + tmp);
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) die("cannot write " + tmp);
  if (::close(fd) < 0) die("cannot close " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) < 0) die("cannot rename " + tmp + " to " + path);
}

void write_pid(const std::string& path) { write_atomic(path, std::to_string(::getpid()) + "\n"); }

// In a child: write DIR/ROLE.pid, tell main over REPORT_FD, then sleep.
[[noreturn]] void become(const std::string& dir, const char* role, int report_fd) {
  write_pid(dir + "/" + role + ".pid");
  if (::write(report_fd, "x", 1) != 1) die("cannot report to the main process");
  ::close(report_fd);
  sleep_forever();
}

int markers(const std::string& dir, int ready_fd) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) < 0) die("pipe2");

  pid_t setsid_child = ::fork();
  if (setsid_child < 0) die("fork (setsid child)");
  if (setsid_child == 0) {
    ::close(report[0]);
    if (::setsid() < 0) die("setsid");
    become(dir, "setsid", report[1]);
  }

  pid_t intermediate = ::fork();
  if (intermediate < 0) die("fork (intermediate)");
  if (intermediate == 0) {
    ::close(report[0]);
    pid_t grandchild = ::fork();
    if (grandchild < 0) die("fork (grandchild)");
    if (grandchild == 0) become(dir, "grandchild", report[1]);
    std::_Exit(0);  // the grandchild is orphaned: it no longer descends from main
  }

  pid_t ignorer = ::fork();
  if (ignorer < 0) die("fork (TERM ignorer)");
  if (ignorer == 0) {
    ::close(report[0]);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    if (::sigaction(SIGTERM, &ign, nullptr) < 0) die("sigaction(SIGTERM, SIG_IGN)");
    become(dir, "ignoreterm", report[1]);
  }
  ::close(report[1]);

  int status = 0;
  while (::waitpid(intermediate, &status, 0) < 0) {
    if (errno != EINTR) die("waitpid (intermediate)");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = 0;
    die("the intermediate process failed (status " + std::to_string(status) + ")");
  }

  // Three reports: setsid, grandchild, ignoreterm. A child that dies first closes its end early.
  int reports = 0;
  char buf[8];
  while (reports < 3) {
    pollfd p{report[0], POLLIN, 0};
    int n = ::poll(&p, 1, kChildReportTimeoutMs);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      errno = ETIMEDOUT;
      die("only " + std::to_string(reports) + " of 3 children reported");
    }
    ssize_t got = ::read(report[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      errno = EPIPE;
      die("a child ended before it reported (" + std::to_string(reports) + " of 3 reported)");
    }
    reports += static_cast<int>(got);
  }
  ::close(report[0]);

  write_pid(dir + "/main.pid");
  if (ready_fd >= 0) {
    if (::write(ready_fd, "R", 1) != 1) die("cannot write to --ready-fd");
    ::close(ready_fd);
  } else {
    write_atomic(dir + "/ready", "ready\n");
  }
  sleep_forever();
}

// Busy until this process has used MS ms of CPU time.
void burn(long ms) {
  auto cpu_ms = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1'000'000L;
  };
  long until = cpu_ms() + ms;
  volatile unsigned long spin = 0;
  while (cpu_ms() < until)
    for (int i = 0; i < 100000; ++i) spin = spin + 1;
}

int burner(int argc, char** argv) {
  long ms = std::atol(argv[2]);
  std::string burned;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string opt = argv[i], value = argv[i + 1];
    if (opt == "--burned") {
      burned = value;
    } else if (opt == "--pidfile") {
      write_pid(value);
    } else if (opt == "--setsid-child") {
      pid_t child = ::fork();
      if (child < 0) die("fork");
      if (child == 0) {
        ::setsid();
        burn(ms / 2);
        write_pid(value + "/setsid.pid");
        sleep_forever();
      }
    } else {
      return kExitUsage;
    }
  }
  if (!burned.empty() && ms > 1000) {
    burn(1000);
    write_atomic(burned, "1000\n");
    ms -= 1000;
  }
  burn(ms);
  return 0;
}

void usage() {
  std::fprintf(stderr,
               "usage: nerve_test_escaper --markers DIR [--ready-fd FD]\n"
               "       nerve_test_escaper --pidfile FILE\n"
               "       nerve_test_escaper --touch FILE\n"
               "       nerve_test_escaper --exit N\n"
               "       nerve_test_escaper --burn MS [--pidfile FILE] [--setsid-child DIR] [--burned FILE]\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc >= 2 ? argv[1] : "";
  if (mode == "--markers" && (argc == 3 || (argc == 5 && std::strcmp(argv[3], "--ready-fd") == 0))) {
    int ready_fd = argc == 5 ? std::atoi(argv[4]) : -1;
    return markers(argv[2], ready_fd);
  }
  if (mode == "--pidfile" && argc == 3) {
    write_pid(argv[2]);
    sleep_forever();
  }
  if (mode == "--touch" && argc == 3) {
    int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) die(std::string("cannot create ") + argv[2]);
    ::close(fd);
    return 0;
  }
  if (mode == "--exit" && argc == 3) return std::atoi(argv[2]);
  if (mode == "--burn" && argc >= 3 && argc % 2 == 1) return burner(argc, argv);
  usage();
  return kExitUsage;
}
