// SPDX-License-Identifier: LGPL-2.1-or-later
// Process and file helpers for the integration tests: start programs, wait for them and for files
// with bounded, event-driven waits (pidfd, inotify, poll on a pipe, the user manager's signals), and
// read process facts from /proc.
//
// Every wait takes a timeout and reports whether its event came. One helper polls, and only it:
// eventually(), which looks at a test's own predicate every 20 ms, for states that no event announces
// (a record's field, a log line, a unit's property). Nothing else sleeps.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <functional>
#include <string>
#include <vector>

namespace nerve::itest {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long any single awaited event may take before a test gives up on it.
inline constexpr milliseconds kEventTimeout{10'000};

// The grace of tests whose subject is not the grace itself: short, so that a reap of a process that
// ignores SIGTERM waits 0.2 s for it, not seconds. As nervectl's --grace, as grace_usec, and as a
// duration for bounds.
inline const std::string kShortGraceArg = "0.2";
inline constexpr std::uint64_t kShortGraceUsec = 200'000;
inline constexpr milliseconds kShortGrace{200};

// Time since T.
inline milliseconds since(Clock::time_point t) { return std::chrono::duration_cast<milliseconds>(Clock::now() - t); }

// True while PID exists and is not a zombie: kill(pid, 0) succeeds and /proc/PID/stat's state is not Z.
bool alive(pid_t pid);

// The state letter of /proc/PID/stat (R, S, Z, ...), or '\0' when PID is gone.
char proc_state(pid_t pid);

// Waits (pidfd_open + poll) until PID has ended (a zombie counts as ended). True if it did in time,
// or was gone already.
bool wait_gone(pid_t pid, milliseconds timeout);

// waitpid for a child of this process, bounded. The exit code (128+N after signal N), or nullopt
// when it did not end in time (it is left running).
std::optional<int> wait_child(pid_t pid, milliseconds timeout);

// Collects every child that has already ended (zombies), without blocking.
void reap_ended_children();

// What to start and how. env entries with a value override the inherited variable; nullopt removes it.
struct SpawnSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::optional<std::string>> env;
  int stdin_fd = -1;   // -1: /dev/null
  int stdout_fd = -1;  // -1: /dev/null
  int stderr_fd = -1;  // -1: /dev/null
  // Extra descriptors for the child: {fd in this process, number in the child}.
  std::vector<std::pair<int, int>> keep_fds;
};

// A SpawnSpec for ARGV with everything else at its default.
inline SpawnSpec command(std::vector<std::string> argv) {
  SpawnSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

// fork + execvp. Throws std::runtime_error when fork fails; an exec failure shows as exit 127 with
// a message on the child's stderr.
pid_t spawn(const SpawnSpec& spec);

struct Output {
  int exit_code = -1;  // 128+N after signal N
  std::string out;
  std::string err;
  milliseconds took{0};  // from fork to exit
  bool timed_out = false;
};

// Runs a command to its end with stdout and stderr captured. After TIMEOUT it is killed (SIGKILL)
// and timed_out is set. Only for commands that end and leave nothing behind holding their output.
Output run(SpawnSpec spec, milliseconds timeout = milliseconds{30'000});

// Waits (inotify on the parent folder) until PATH exists. True if it did within TIMEOUT.
bool wait_for_file(const std::string& path, milliseconds timeout = kEventTimeout);

// Waits (inotify on its parent: rmdir tells the parent, on cgroupfs too) until FOLDER is gone. True
// if it went within TIMEOUT.
bool wait_folder_gone(const std::string& folder, milliseconds timeout);

// Reads from FD until EOF or TIMEOUT. Returns what was read; *eof tells whether
// the end was seen.
std::string read_until_eof(int fd, milliseconds timeout, bool* eof);

// Reads from FD until TEXT has been read (true) or TIMEOUT passed or EOF came first (false).
bool read_until(int fd, const std::string& text, milliseconds timeout, std::string* got);

// The whole file, or nullopt if it cannot be opened.
std::optional<std::string> read_file(const std::string& path);

// A pid from a file that holds a decimal pid and a newline; 0 if unreadable or malformed.
pid_t read_pid_file(const std::string& path);

// The names in a folder, sorted (without . and ..).
std::vector<std::string> list_folder(const std::string& path);

// Is SIG in the SigIgn mask of /proc/PID/status?
bool ignores_signal(pid_t pid, int sig);

// getsid(PID), or -1.
pid_t session_of(pid_t pid);

// A short human description of a process for failure messages: "1234 (S, ppid 1, cgroup /x)".
std::string describe_process(pid_t pid);

// The one bounded poll: PRED every 20 ms until it holds or TIMEOUT passed, for states that no event
// announces (a unit going inactive, a line in a log, a field of a record). True if it held in time.
bool eventually(const std::function<bool()>& pred, milliseconds timeout);

// TEXT split into lines.
std::vector<std::string> lines_of(const std::string& text);

// The nerve-* units the user manager knows, in any state, as systemctl prints them ("" when none).
std::string nerve_units();

// Waits (the user manager's UnitRemoved signals, subscribed to first) until no nerve-* unit is left:
// systemd removes an inactive scope on its own schedule. "" then; otherwise what is left at TIMEOUT
// (or when the signals cannot be heard, with why).
std::string await_no_nerve_units(milliseconds timeout = milliseconds{3000});

// The nerve-* units that are not inactive, as "UNIT ACTIVE SUB" lines.
std::vector<std::string> live_nerve_units();

}  // namespace nerve::itest
