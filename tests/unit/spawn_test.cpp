// SPDX-License-Identifier: LGPL-2.1-or-later
// spawn_held with real processes: the held child is the small helper nerve-held (posix_spawn'd, not a
// fork of the caller) until its release; it never runs the command before it; exec failures are
// reported "ERRNO STEP" with 126/127; stdio, environment (with the run's variables), working folder,
// session and signal handling are the command's; sealed children see their cgroup as "/", also as an
// unprivileged user (a user namespace needs a task that shares its memory with nobody).
#include "process/spawn_held.h"

#include "process/held_child.h"
#include "process/held_helper.h"
#include "temp_dir.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace nerve {
namespace {

using ::testing::HasSubstr;

// The helper of this build, before the first spawn_held looks it up.
const bool kHelperSet = ::setenv("NERVE_HELD_HELPER", NERVE_TEST_HELD_HELPER, 1) == 0;

struct Pipe {
  Fd read, write;
  Pipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) == 0) read.reset(p[0]), write.reset(p[1]);
  }
  std::string drain() {
    write.reset();
    return read_report(read.get());
  }
};

class SpawnHeld : public ::testing::Test {
 protected:
  SpawnSpec spec(std::vector<std::string> argv) {
    SpawnSpec s;
    s.argv = std::move(argv);
    s.env = {"PATH=/usr/bin:/bin"};
    s.stdio[0] = null_.get();
    s.stdio[1] = out_.write.get();
    s.stdio[2] = err_.write.get();
    return s;
  }
  static int exit_code(HeldChild& h) {
    int status = 0;
    while (::waitpid(h.pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  static std::string exe_of(pid_t pid) {
    char buf[PATH_MAX] = {};
    ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  }
  // Waits (bounded) until the helper blocks for its word: it is asleep in a read of the go pipe.
  static bool waits_for_its_word(pid_t pid) {
    for (int i = 0; i < 2000; ++i) {
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), {});
      auto close = text.rfind(')');
      if (close != std::string::npos && text.compare(close + 2, 1, "S") == 0) return true;
      ::usleep(1000);
    }
    return false;
  }

  test::TempDir tmp_;
  Fd null_{::open("/dev/null", O_RDWR | O_CLOEXEC)};
  Pipe out_, err_;
};

TEST_F(SpawnHeld, IsTheHelperNotAForkOfTheCallerAndRunsTheCommandOnlyWhenReleased) {
  ASSERT_TRUE(kHelperSet);
  std::string marker = tmp_ / "ran";
  HeldChild h = spawn_held(spec({"sh", "-c", "echo ran > " + marker}));
  ASSERT_GT(h.pid, 0);
  ASSERT_TRUE(waits_for_its_word(h.pid)) << "the held child never blocked";
  EXPECT_THAT(exe_of(h.pid), HasSubstr(kHeldHelperName)) << "the held child is not the helper";
  EXPECT_FALSE(std::ifstream(marker).good()) << "the command ran before its release";
  ASSERT_TRUE(release(h));
  EXPECT_EQ(read_report(h.report.get()), "") << "the exec did not happen";
  EXPECT_EQ(exit_code(h), 0);
  EXPECT_TRUE(std::ifstream(marker).good()) << "the command did not run after its release";
}

TEST_F(SpawnHeld, NeverRunsTheCommandWhenTheGoPipeClosesWithoutTheWord) {
  std::string marker = tmp_ / "ran";
  HeldChild h = spawn_held(spec({"sh", "-c", "echo ran > " + marker}));
  ASSERT_TRUE(waits_for_its_word(h.pid));
  h.go.reset();
  EXPECT_EQ(exit_code(h), kHeldChildCancelled);
  EXPECT_FALSE(std::ifstream(marker).good());
}

TEST_F(SpawnHeld, ReportsAnExecOfAFileGoneSinceItWasFoundAsEnoentAndExits127) {
  std::string cmd = tmp_ / "cmd";
  std::ofstream(cmd) << "#!/bin/sh\n";
  ::chmod(cmd.c_str(), 0755);
  HeldChild h = spawn_held(spec({cmd}));
  ::unlink(cmd.c_str());
  ASSERT_TRUE(release(h));
  auto failure = parse_report(read_report(h.report.get()));
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->err, ENOENT);
  EXPECT_EQ(failure->step, "exec");
  EXPECT_EQ(exit_code(h), 127);
}

TEST_F(SpawnHeld, ReportsAnExecutableFileThatIsNoProgramAsTheExecErrnoAndExits126) {
  std::string cmd = tmp_ / "garbage";
  std::ofstream(cmd) << "\x01\x02 not a program";
  ::chmod(cmd.c_str(), 0755);
  HeldChild h = spawn_held(spec({cmd}));
  ASSERT_TRUE(release(h));
  auto failure = parse_report(read_report(h.report.get()));
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->err, ENOEXEC);
  EXPECT_EQ(failure->step, "exec");
  EXPECT_EQ(exit_code(h), 126);
}

TEST_F(SpawnHeld, ReportsAMissingWorkingFolderAsChdirBeforeItsRelease) {
  SpawnSpec s = spec({"true"});
  s.cwd = tmp_ / "no-such-folder";
  HeldChild h = spawn_held(s);
  auto failure = parse_report(read_report(h.report.get()));
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->err, ENOENT);
  EXPECT_EQ(failure->step, "chdir");
  EXPECT_EQ(exit_code(h), 127);
}

TEST_F(SpawnHeld, RefusesACommandNotInThePath) {
  EXPECT_THROW(spawn_held(spec({"no-such-command-xyz"})), std::system_error);
}

TEST_F(SpawnHeld, GivesTheCommandItsStdioEnvironmentRunVariablesAndWorkingFolder) {
  SpawnSpec s = spec({"sh", "-c", "pwd; echo \"$FOO $NERVE_RUN $NERVE_RUN_ATTEMPT\"; echo to-stderr >&2"});
  s.env.push_back("FOO=bar");
  s.env.push_back("NERVE_RUN=stale");  // replaced by the run's own at the release
  s.cwd = tmp_.path();
  HeldChild h = spawn_held(s);
  ASSERT_TRUE(release(h, {"NERVE_RUN=r1", "NERVE_RUN_ATTEMPT=2"}));
  EXPECT_EQ(read_report(h.report.get()), "");
  EXPECT_EQ(exit_code(h), 0);
  EXPECT_EQ(out_.drain(), tmp_.path() + "\nbar r1 2\n");
  EXPECT_EQ(err_.drain(), "to-stderr\n");
}

// The command starts in its own session, with no signal ignored or blocked, and with none of the
// caller's fds but its stdio, whatever the caller ignores, blocks or leaves open.
TEST_F(SpawnHeld, StartsTheCommandInANewSessionWithDefaultSignalsAndOnlyItsStdio) {
  auto old_pipe = ::signal(SIGPIPE, SIG_IGN);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  ::sigprocmask(SIG_BLOCK, &block, &old_mask);
  Fd leaky(::open("/dev/null", O_RDONLY));  // not close-on-exec
  // grep reads its own mask (/proc/self), inherited from the command: the sh's own mask, read from
  // outside, can show the signals dash blocks while it waits for a child.
  HeldChild h = spawn_held(spec({"sh", "-c",
                                 "grep -E '^(SigIgn|SigBlk)' /proc/self/status; ps -o sid= -p $$; "
                                 "test -e /proc/$$/fd/" + std::to_string(leaky.get()) + " && echo leaked; true"}));
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::signal(SIGPIPE, old_pipe);
  ASSERT_TRUE(release(h));
  EXPECT_EQ(exit_code(h), 0);
  std::string out = out_.drain();
  EXPECT_THAT(out, HasSubstr("SigIgn:\t0000000000000000"));
  EXPECT_THAT(out, HasSubstr("SigBlk:\t0000000000000000"));
  EXPECT_THAT(out, HasSubstr(std::to_string(h.pid))) << "not a session leader: " << out;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("leaked")));
}

std::string sealed_cgroup(SpawnSpec s, int& code) {
  s.sealed = true;
  HeldChild h = spawn_held(s);
  if (!release(h)) return "(not released)";
  std::string report = read_report(h.report.get());
  int status = 0;
  ::waitpid(h.pid, &status, 0);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return report;
}

TEST_F(SpawnHeld, SealedSeesItsOwnCgroupAsTheRoot) {
  int code = -1;
  EXPECT_EQ(sealed_cgroup(spec({"cat", "/proc/self/cgroup"}), code), "");
  EXPECT_EQ(code, 0);
  EXPECT_THAT(out_.drain(), HasSubstr("0::/\n"));
}

// Whether uid/gid 65534 may execute 'path' (every folder on the way searchable), asked as nobody.
bool reachable_by_nobody(const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) || ::setresgid(65534, 65534, 65534) || ::setresuid(65534, 65534, 65534)) ::_exit(2);
    ::_exit(::access(path.c_str(), X_OK) == 0 ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Unprivileged, sealing needs a user namespace, which unshare refuses to a task that shares its
// memory: the helper has its own. Run in a child that drops to nobody.
TEST_F(SpawnHeld, SealedWorksForAnUnprivilegedUserToo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  if (const std::string& helper = held_helper_path(); !reachable_by_nobody(helper))
    GTEST_SKIP() << "nobody cannot execute the helper " << helper
                 << " (a folder on its path is closed to other users, e.g. a build under /root)";
  ::chmod(tmp_.path().c_str(), 0755);
  SpawnSpec s = spec({"cat", "/proc/self/cgroup"});
  pid_t pid = ::fork();
  if (pid == 0) {
    try {
      if (::setgroups(0, nullptr) || ::setresgid(65534, 65534, 65534) || ::setresuid(65534, 65534, 65534)) ::_exit(90);
      int code = -1;
      std::string report = sealed_cgroup(s, code);
      if (!report.empty()) ::_exit(91);
      ::_exit(code == 0 && out_.drain().find("0::/\n") != std::string::npos ? 0 : 92);
    } catch (...) {
      ::_exit(93);
    }
  }
  out_.write.reset();  // the child's copy is the only one left: its read ends when the command exits
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "90: cannot become nobody; 91: sealing failed; 92: not rooted at its cgroup; "
                                     "93: the helper could not be started as nobody";
}

}  // namespace
}  // namespace nerve
