// SPDX-License-Identifier: LGPL-2.1-or-later
// The held-child protocol with real processes: the child waits for its word, an exec that happens
// closes the report pipe, a failed one reports "ERRNO STEP" and exits 127 or 126, and a child whose
// go pipe closes never runs its command (125).
#include "process/held_child.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace nerve {
namespace {

// Forks a held child that execs PATH once it gets kWordExec.
pid_t hold(HeldPipes& pipes, const char* path) {
  return fork_held(pipes, [path](int go, int report) {
    if (!await_word(go, kWordExec)) ::_exit(kHeldChildCancelled);
    char* const argv[] = {const_cast<char*>(path), nullptr};
    ::execv(path, argv);
    exit_step_failed(report, errno, "exec");
  });
}

int exit_code_of(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(HeldChild, ExecsOnlyWhenReleasedAndTheReportPipeThenEndsEmpty) {
  HeldPipes pipes;
  pid_t pid = hold(pipes, "/bin/true");
  ASSERT_GT(pid, 0);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the child did not wait for its word";
  ASSERT_TRUE(send_word(pipes.go, kWordExec));
  EXPECT_EQ(read_report(pipes.report.get()), "");
  EXPECT_EQ(parse_report(""), std::nullopt);
  EXPECT_EQ(exit_code_of(pid), 0);
}

// Releases a held child that execs PATH; what it reported and its exit code.
std::pair<std::optional<StepFailure>, int> release_and_wait(const char* path) {
  HeldPipes pipes;
  pid_t pid = hold(pipes, path);
  if (pid <= 0 || !send_word(pipes.go, kWordExec)) return {std::nullopt, -1};
  auto failure = parse_report(read_report(pipes.report.get()));
  return {failure, exit_code_of(pid)};
}

TEST(HeldChild, ReportsAnExecOfAMissingFileAsErrnoAndStepAndExits127) {
  auto [failure, code] = release_and_wait("/nonexistent/command");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->err, ENOENT);
  EXPECT_EQ(failure->step, "exec");
  EXPECT_EQ(code, 127);
}

TEST(HeldChild, ReportsAnExecOfAFileThatIsNotExecutableAndExits126) {
  auto [failure, code] = release_and_wait("/etc/passwd");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->err, EACCES);
  EXPECT_EQ(code, 126);
}

TEST(HeldChild, WhoseGoPipeClosesWithoutTheWordNeverExecs) {
  HeldPipes pipes;
  pid_t pid = hold(pipes, "/bin/true");
  ASSERT_GT(pid, 0);
  pipes.go.reset();
  EXPECT_EQ(read_report(pipes.report.get()), "");
  EXPECT_EQ(exit_code_of(pid), kHeldChildCancelled);
}

TEST(HeldChild, MapsExecErrorsToTheShellsExitCodes) {
  EXPECT_EQ(exec_failure_exit_code(ENOENT), 127);
  EXPECT_EQ(exec_failure_exit_code(EACCES), 126);
  EXPECT_EQ(exec_failure_exit_code(ENOEXEC), 126);
}

}  // namespace
}  // namespace nerve
