// SPDX-License-Identifier: LGPL-2.1-or-later
// The held-child protocol, shared by the engine API's Launch (the nerve-held helper: held_helper.h,
// spawn_held.h) and `nervectl launch --wait` (ctl/supervise.cpp): a child that waits for a word on its
// "go" pipe before each step, and tells how its exec failed through a close-on-exec "report" pipe.
//
//   parent                                  child
//   fork_held(...) ──────────────────────▶  prepares; await_word(go, W) blocks
//   send_word(go, W) ────────────────────▶  the step (for the last one: exec)
//   report pipe: EOF  ◀──────────────────── the exec happened (the pipe closed with it)
//   report "ERRNO STEP" ◀────────────────── the step failed: exit 127 (ENOENT) or 126, as a shell does
//   go closed without the word ──────────▶  exit kHeldChildCancelled (125): the command never ran
//
// The child's side (await_word, exit_step_failed) is async-signal-safe: no allocation, no locks.
#pragma once

#include "base/conventions.h"
#include "base/fd.h"

#include <sys/types.h>

#include <optional>
#include <string>

namespace nerve {

inline constexpr char kWordExec = 'X';
inline constexpr int kHeldChildCancelled = 125;

// The parent's ends of a held child's pipes.
struct HeldPipes {
  Fd go;      // write a word to let the child take its next step; close to make it exit 125
  Fd report;  // EOF: exec happened; otherwise "ERRNO STEP"
};

// Forks. The child runs child_main(go, report) (its ends of the pipes), which must not return.
// Returns the child's pid (or -1 with errno; then no pipe is left open) and sets PIPES.
template <class ChildMain>
pid_t fork_held(HeldPipes& pipes, ChildMain&& child_main);

// Child side: blocks until a byte comes on GO; true if it is WORD.
bool await_word(int go, char word);
// Child side: writes "ERRNO STEP" on REPORT and exits with exec_failure_exit_code(err).
[[noreturn]] void exit_step_failed(int report, int err, const char* step);

// Parent side: writes WORD on GO; false if the child is gone.
bool send_word(const Fd& go, char word);

// A report the child wrote, parsed; nullopt when it is empty (the exec happened).
struct StepFailure {
  int err = 0;
  std::string step;  // "exec", "chdir", ...
};
std::optional<StepFailure> parse_report(const std::string& report);

// Reads the report pipe to EOF (blocking).
std::string read_report(int fd);

namespace detail {
bool make_held_pipes(int go[2], int report[2]);
void close_all(const int go[2], const int report[2]);
}  // namespace detail

template <class ChildMain>
pid_t fork_held(HeldPipes& pipes, ChildMain&& child_main) {
  int go[2], report[2];
  if (!detail::make_held_pipes(go, report)) return -1;
  pid_t pid = ::fork();
  if (pid < 0) {
    detail::close_all(go, report);
    return -1;
  }
  if (pid == 0) {
    ::close(go[1]);
    ::close(report[0]);
    child_main(go[0], report[1]);
    ::_exit(kHeldChildCancelled);  // child_main must not return; if it does, the command never ran
  }
  ::close(go[0]);
  ::close(report[1]);
  pipes.go.reset(go[1]);
  pipes.report.reset(report[0]);
  return pid;
}

}  // namespace nerve
