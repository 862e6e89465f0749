// SPDX-License-Identifier: LGPL-2.1-or-later
#include "process/held_helper.h"

#include "base/companion.h"
#include "process/held_child.h"
#include "process/sealing.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace nerve {

namespace {

// The run's variables (NERVE_RUN=, NERVE_RUN_ATTEMPT=, INVOCATION_ID=) that follow the exec word:
// "KEY=VALUE\0..." read to EOF into BUF and put into the free slots envp[used..used+slots).
void take_run_env(int go, char* buf, std::size_t size, char** envp, std::size_t used, std::size_t slots) {
  std::size_t n = 0;
  for (;;) {
    ssize_t r = ::read(go, buf + n, size - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<std::size_t>(r);
    if (n >= size - 1) break;
  }
  buf[n] = '\0';
  std::size_t slot = used;
  for (std::size_t i = 0; i < n && slot < used + slots; ++slot) {
    envp[slot] = buf + i;
    while (i < n && buf[i] != '\0') ++i;
    ++i;
  }
}

bool parse_fd(const char* s, int& fd) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end || v < 0 || v > INT_MAX) return false;
  fd = static_cast<int>(v);
  return true;
}

// Every fd but stdio closes at the exec: the go and report pipes (so EOF on report means the exec
// happened), and whatever else nerved's posix_spawn let through.
void close_on_exec_above_stdio(int go, int report) {
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  for (int fd : {go, report}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Every signal at its default action and none blocked, as an exec'd command expects whatever nerved
// ignores or blocks; by raw system calls, because glibc's wrappers leave its own two (32, 33) alone.
void default_signals() {
  struct {
    void* handler = nullptr;  // SIG_DFL
    unsigned long flags = 0;
    void* restorer = nullptr;
    std::uint64_t mask = 0;
  } dfl;
  for (int s = 1; s <= 64; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::syscall(SYS_rt_sigaction, s, &dfl, nullptr, sizeof dfl.mask);
  std::uint64_t none = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none);
}

constexpr std::size_t kRunEnvSlots = 3;
constexpr int kFixedArgs = 8;  // nerve-held VERSION GO REPORT FLAGS CWD PATH ARGC

}  // namespace

std::vector<std::string> held_helper_argv(const HeldHelperArgs& a) {
  std::vector<std::string> out = {kHeldHelperName,      kHeldHelperVersion, std::to_string(a.go),
                                  std::to_string(a.report), a.sealed ? "s" : "-", a.cwd, a.path,
                                  std::to_string(a.argv.size())};
  out.insert(out.end(), a.argv.begin(), a.argv.end());
  out.insert(out.end(), a.env.begin(), a.env.end());
  return out;
}

int held_helper_main(int argc, char** argv) {
  int go = -1, report = -1, count = -1;
  if (argc < kFixedArgs || std::strcmp(argv[1], kHeldHelperVersion) != 0 || !parse_fd(argv[2], go) ||
      !parse_fd(argv[3], report) || !parse_fd(argv[7], count) || count < 1 || count > argc - kFixedArgs)
    return kHeldChildCancelled;
  bool sealed = std::strcmp(argv[4], "s") == 0;
  const char* cwd = argv[5];
  const char* path = argv[6];
  char** cmd_argv = argv + kFixedArgs;
  std::size_t env_used = static_cast<std::size_t>(argc - kFixedArgs - count);
  char** envp = static_cast<char**>(std::calloc(env_used + kRunEnvSlots + 1, sizeof(char*)));
  if (!envp) return kHeldChildCancelled;
  for (std::size_t i = 0; i < env_used; ++i) envp[i] = argv[kFixedArgs + count + i];
  cmd_argv[count] = nullptr;  // the end of the command's argv (its environment, copied above, began here)
  default_signals();
  ::setsid();  // a session of its own (here, not in posix_spawn: nerved would wait for it)
  close_on_exec_above_stdio(go, report);
  if (*cwd && ::chdir(cwd) < 0) exit_step_failed(report, errno, "chdir");
  if (!await_word(go, kWordExec)) ::_exit(kHeldChildCancelled);
  char run_env[512];
  take_run_env(go, run_env, sizeof run_env, envp, env_used, kRunEnvSlots);
  const char* step = nullptr;
  if (sealed)
    if (int err = seal_self(&step)) exit_step_failed(report, err, step);
  ::execve(path, cmd_argv, envp);
  exit_step_failed(report, errno, "exec");
}

const std::string& held_helper_path() {
  static const std::string path = find_companion(kHeldHelperName, "NERVE_HELD_HELPER");
  return path;
}

}  // namespace nerve
