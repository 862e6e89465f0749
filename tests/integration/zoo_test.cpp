// SPDX-License-Identifier: LGPL-2.1-or-later
// The escaper zoo: real third-party programs that leave their parent's reach (they daemonize, call
// setsid, double fork, hold the run's stdout pipe, ignore SIGTERM), each started by a run's command.
// Each member is proven started (a marker that it, or the running program asked for its pid, writes
// only once it runs), escaped (it outlived the command that started it, or left its session or
// process group, or ignores TERM) and contained (it is still in the run's cgroup); then `nervectl
// reap` must end every process of the run, say complete, close the run's stdout pipe, and leave no
// cgroup folder and no unit. On both backends; a member whose program is not installed is skipped,
// visibly (scripts/install-deps.sh installs them all).
#include "nerved_fixture.h"

#include "base/host.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace nerve::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::StartsWith;
using namespace std::chrono_literals;

// How long a member may take to be up: Xvfb and a gpg-agent take a while on a loaded machine.
constexpr milliseconds kUpTimeout{30'000};

// How a marked process got away, each checked before the reap.
enum Escape : unsigned {
  kOwnSession = 1u << 0,   // setsid: another session than the test's, which the run's command has
  kOwnGroup = 1u << 1,     // another process group than the command's (ninja's jobs)
  kIgnoresTerm = 1u << 2,  // SIGTERM ignored: only the SIGKILL after the grace ends it
  kIgnoresHup = 1u << 3,   // SIGHUP ignored (nohup, trap '' HUP)
  kHoldsStdout = 1u << 4,  // its stdout is the run's stdout pipe, kept open after the command ended
};

// ZOO/NAME.pid: the pids of COUNT processes, one a line, written (temp file, then rename) by each
// process itself or from the running program's own answer, so only once it runs.
struct Marker {
  Marker(std::string n, unsigned e, std::size_t c = 1, std::string p = "")
      : name(std::move(n)), escapes(e), count(c), program(std::move(p)) {}
  std::string name;
  unsigned escapes = 0;
  std::size_t count = 1;
  std::string program;  // /proc/PID/comm starts with it: the marked process is the program ("": not checked)
};

// One member, written with designated initializers (the fields with a default may be left out).
struct Member {
  std::string name;                            // the test's name
  std::vector<std::string> programs;           // each must be installed (in PATH, or a path), else skipped
  std::string package;                         // the Debian packages that bring them
  std::string script;                          // the run's command for /bin/sh -c; @Z@: the zoo folder, @D@: a display
  std::vector<Marker> markers;                 // all of them must come
  bool command_exits = true;                   // the command ends once its escapers are up, leaving them
  std::map<std::string, std::string> files{};  // written into the zoo folder first (@Z@, @D@ filled in)
  std::vector<std::string> leftovers{};        // files it leaves outside the test's folder, removed after
};

void PrintTo(const Member& m, std::ostream* os) { *os << m.name; }

// `mark NAME [PID...]`: ZOO/NAME.pid holds the PIDs, or the pid of the shell that ran mark.
const char* const kMarkScript = R"zoo(#!/bin/sh
d=${0%/*}
n=$1
shift
[ $# -gt 0 ] || set -- "$PPID"
printf '%s\n' "$@" >"$d/$n.pid.tmp" && mv "$d/$n.pid.tmp" "$d/$n.pid"
)zoo";

// Programs that daemonize by themselves, each asked for its pid once it answers.
std::vector<Member> daemons() {
  std::vector<Member> z;
  // No tmux.conf is read (-f /dev/null); the pane's shell is $SHELL, which launch() sets.
  z.push_back({.name = "tmux", .programs = {"tmux"}, .package = "tmux", .script = R"zoo(unset TMUX
tmux -S @Z@/tmux.sock -f /dev/null new-session -d -s zoo '@Z@/mark tmux-pane; exec sleep 300'
@Z@/mark tmux-server "$(tmux -S @Z@/tmux.sock display-message -p '#{pid}')"
)zoo",
               .markers = {{"tmux-server", kOwnSession, 1, "tmux"}, {"tmux-pane", kOwnSession}}});
  z.push_back({.name = "screen", .programs = {"screen"}, .package = "screen", .script = R"zoo(mkdir -m 700 @Z@/screen
SCREENDIR=@Z@/screen screen -dmS zoo sh -c '@Z@/mark screen-server $PPID; @Z@/mark screen-window; exec sleep 300'
)zoo",
               .markers = {{"screen-server", kOwnSession, 1, "screen"}, {"screen-window", kOwnSession}}});
  z.push_back({.name = "gpg_agent", .programs = {"gpg-agent", "gpg-connect-agent"}, .package = "gpg-agent (gnupg)",
               .script = R"zoo(export GNUPGHOME=@Z@/gnupg
mkdir -m 700 "$GNUPGHOME"
gpg-agent --daemon >/dev/null
pid=$(gpg-connect-agent --no-autostart 'getinfo pid' /bye | sed -n 's/^D //p')
@Z@/mark gpg-agent "$pid"
)zoo",
               .markers = {{"gpg-agent", kOwnSession, 1, "gpg-agent"}}});
  z.push_back({.name = "ssh_agent", .programs = {"ssh-agent", "ssh-add"}, .package = "openssh-client",
               .script = R"zoo(eval "$(ssh-agent -s -a @Z@/ssh.sock)" >/dev/null
status=0
ssh-add -l >/dev/null 2>&1 || status=$?
[ "$status" = 1 ]  # the agent answered that it holds no key (2: no agent to ask)
@Z@/mark ssh-agent "$SSH_AGENT_PID"
)zoo",
               .markers = {{"ssh-agent", kOwnSession, 1, "ssh-agent"}}});
  z.push_back({.name = "dbus_daemon", .programs = {"dbus-daemon", "dbus-send"}, .package = "dbus-daemon, dbus-bin",
               .script = R"zoo(bus=unix:path=@Z@/bus
pid=$(dbus-daemon --session --fork --nopidfile --address=$bus --print-pid)
dbus-send --bus=$bus --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
  org.freedesktop.DBus.GetId >/dev/null
@Z@/mark dbus-daemon "$pid"
)zoo",
               .markers = {{"dbus-daemon", kOwnSession, 1, "dbus-daemon"}}});
  // -displayfd: Xvfb writes its display's number once it accepts clients.
  z.push_back({.name = "Xvfb", .programs = {"Xvfb", "setsid", "mkfifo"}, .package = "xvfb",
               .script = R"zoo(mkfifo @Z@/xvfb.fifo
setsid Xvfb :@D@ -nolisten tcp -displayfd 3 3>@Z@/xvfb.fifo &
xvfb=$!
read -r display <@Z@/xvfb.fifo
[ "$display" = @D@ ]
@Z@/mark xvfb "$xvfb"
)zoo",
               .markers = {{"xvfb", kOwnSession, 1, "Xvfb"}},
               .leftovers = {"/tmp/.X@D@-lock", "/tmp/.X11-unix/X@D@"}});
  return z;
}

// The shell's and the interpreters' ways to leave: detach, setsid, double fork, ignore TERM, keep a pipe.
std::vector<Member> detachers() {
  std::vector<Member> z;
  z.push_back({.name = "start_stop_daemon", .programs = {"start-stop-daemon"}, .package = "dpkg",
               .script = "start-stop-daemon --start --background --make-pidfile --pidfile @Z@/ssd.pidfile "
                         "--startas /bin/sh -- -c '@Z@/mark start-stop-daemon; exec sleep 300'\n",
               .markers = {{"start-stop-daemon", kOwnSession}}});
  z.push_back({.name = "nohup_setsid", .programs = {"nohup", "setsid"}, .package = "coreutils, util-linux",
               .script = "nohup setsid sh -c '(@Z@/mark nohup-setsid; exec sleep 300) &' >/dev/null 2>&1 &\n",
               .markers = {{"nohup-setsid", kOwnSession | kIgnoresHup}}});
  z.push_back({.name = "python_double_fork", .programs = {"/usr/bin/python3"}, .package = "python3",
               .script = R"zoo(/usr/bin/python3 - <<'EOF'
import os, signal
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
os.chdir("/")
os.closerange(0, 65536)
fd = os.open(os.devnull, os.O_RDWR)
os.dup2(fd, 1)
os.dup2(fd, 2)
with open("@Z@/python-daemon.pid.tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename("@Z@/python-daemon.pid.tmp", "@Z@/python-daemon.pid")
while True:
    signal.pause()
EOF
)zoo",
               .markers = {{"python-daemon", kOwnSession, 1, "python3"}}});
  z.push_back({.name = "perl_ignoring_term", .programs = {"perl"}, .package = "perl-base",
               .script = R"zoo(perl - <<'EOF'
use POSIX ();
$SIG{TERM} = 'IGNORE';
exit 0 if fork;
POSIX::setsid() or die "setsid: $!";
open(my $f, '>', '@Z@/perl.pid.tmp') or die; print $f "$$\n"; close($f) or die;
rename('@Z@/perl.pid.tmp', '@Z@/perl.pid') or die;
POSIX::pause() while 1;
EOF
)zoo",
               .markers = {{"perl", kOwnSession | kIgnoresTerm | kHoldsStdout, 1, "perl"}}});
  z.push_back({.name = "stdout_pipe_holder", .programs = {}, .package = "dash",
               .script = "(trap '' HUP TERM; @Z@/mark stdout-holder; exec sleep 300) &\n"
                         "echo the command ends, its child keeps this pipe\n",
               .markers = {{"stdout-holder", kIgnoresTerm | kIgnoresHup | kHoldsStdout}}});
  return z;
}

// Many processes at once, and build tools whose jobs outlive them or that wait for them.
std::vector<Member> crowds() {
  std::vector<Member> z;
  z.push_back({.name = "fork_loop_of_200", .programs = {"sleep"}, .package = "coreutils", .script = R"zoo(i=0 pids=
while [ $i -lt 200 ]; do sleep 300 & pids="$pids $!"; i=$((i + 1)); done
@Z@/mark forks $pids
)zoo",
               .markers = {{"forks", kHoldsStdout, 200}}});
  std::vector<Marker> jobs;
  for (const char* j : {"make-j1", "make-j2", "make-j3", "make-j4"}) jobs.push_back({j, kIgnoresHup | kHoldsStdout});
  z.push_back({.name = "make_j4", .programs = {"make"}, .package = "make", .script = "make -j4 -f @Z@/Makefile\n",
               .markers = jobs,
               .files = {{"Makefile", "all: j1 j2 j3 j4\n"
                                      "j1 j2 j3 j4:\n"
                                      "\t(trap '' HUP; @Z@/mark make-$@; exec sleep 300) &\n"
                                      ".PHONY: all j1 j2 j3 j4\n"}}});
  // A pool of two sleeping jobs (c waits for a, which never ends) and a job that daemonizes; ninja
  // runs on, waiting for its jobs.
  z.push_back({.name = "ninja_pool", .programs = {"ninja", "setsid"}, .package = "ninja-build",
               .script = "exec ninja -C @Z@ -j 4\n",
               .markers = {{"ninja-a", kOwnGroup}, {"ninja-b", kOwnGroup}, {"ninja-d", kOwnSession}},
               .command_exits = false,
               .files = {{"build.ninja", R"zoo(pool sleepers
  depth = 2
rule sleep
  command = @Z@/mark ninja-$out && exec sleep 300
  pool = sleepers
rule daemon
  command = setsid sh -c '@Z@/mark ninja-$out; exec sleep 300' </dev/null >/dev/null 2>&1 &
build a: sleep
build b: sleep
build c: sleep | a
build d: daemon
)zoo"}}});
  return z;
}

std::vector<Member> all_members() {
  std::vector<Member> z;
  for (auto part : {daemons(), detachers(), crowds()})
    for (auto& m : part) z.push_back(std::move(m));
  return z;
}

// The first of PROGRAMS that is not installed, if any.
std::optional<std::string> missing_program(const std::vector<std::string>& programs) {
  const char* path = std::getenv("PATH");
  for (const auto& program : programs) {
    bool found = false;
    if (program.find('/') != std::string::npos) {
      found = ::access(program.c_str(), X_OK) == 0;
    } else {
      std::istringstream dirs(path ? path : "/usr/bin:/bin");
      for (std::string dir; !found && std::getline(dirs, dir, ':');)
        found = !dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0;
    }
    if (!found) return program;
  }
  return std::nullopt;
}

// What fd FD of PID is ("pipe:[1234]"), or "" when it cannot be read.
std::string fd_target(pid_t pid, int fd) {
  std::error_code ec;
  auto target = fs::read_symlink("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd), ec);
  return ec ? "" : target.string();
}

// The name PID runs under ("python3", "tmux: server"), or "?" when it cannot be read. Not the
// program's path (/proc/PID/exe): gpg-agent and ssh-agent make themselves undumpable, which hides
// it from their own user.
std::string comm_of(pid_t pid) {
  auto comm = lines_of(read_file("/proc/" + std::to_string(pid) + "/comm").value_or(""));
  return comm.empty() ? "?" : comm[0];
}

// The pids of a marker file, one a line; none (and a failure) when a line is not a pid.
std::vector<pid_t> read_pids(const std::string& file) {
  std::vector<pid_t> pids;
  for (const auto& line : lines_of(read_file(file).value_or(""))) {
    char* end = nullptr;
    long pid = std::strtol(line.c_str(), &end, 10);
    if (line.empty() || *end != '\0' || pid <= 0) {
      ADD_FAILURE() << file << " holds '" << line << "', not a pid";
      return {};
    }
    pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

// Every process in FOLDER and the cgroups below it.
std::set<pid_t> processes_in(const std::string& folder) {
  std::set<pid_t> pids;
  std::vector<std::string> folders = {folder};
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(folder, ec))
    if (e.is_directory(ec)) folders.push_back(e.path().string());
  for (const auto& f : folders)
    for (const auto& line : lines_of(read_file(f + "/cgroup.procs").value_or("")))
      if (!line.empty()) pids.insert(static_cast<pid_t>(std::stol(line)));
  return pids;
}

// What PIDS run, by name with a count ("sleep x200, nerve-hold"), for the test's note.
std::string census(const std::set<pid_t>& pids) {
  std::map<std::string, int> names;
  for (pid_t pid : pids) ++names[comm_of(pid)];
  std::string out;
  for (const auto& [name, n] : names) out += (out.empty() ? "" : ", ") + name + (n > 1 ? " x" + std::to_string(n) : "");
  return out;
}

class TheEscaperZoo : public NervedTest, public ::testing::WithParamInterface<Member> {
 protected:
  void TearDown() override {
    if (out_ >= 0) ::close(out_);
    NervedTest::TearDown();  // ends, by pid, whatever the test started and is still there
    for (const auto& file : GetParam().leftovers) ::unlink(fill(file).c_str());
  }

  // TEXT with the zoo folder for @Z@ and the display number for @D@.
  std::string fill(std::string text) const {
    const std::pair<std::string, std::string> fills[] = {{"@Z@", zoo_}, {"@D@", std::to_string(display_)}};
    for (const auto& [key, value] : fills)
      for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
        text.replace(at, key.size(), value);
    return text;
  }

  // The zoo folder with the mark script and the member's files.
  void prepare_zoo() {
    zoo_ = path("zoo");
    ASSERT_EQ(::mkdir(zoo_.c_str(), 0755), 0);
    std::ofstream(zoo_ + "/mark") << kMarkScript;
    ASSERT_EQ(::chmod((zoo_ + "/mark").c_str(), 0755), 0);
    for (const auto& [name, text] : GetParam().files) std::ofstream(zoo_ + "/" + name) << fill(text);
  }

  // Launches r1 (kept when its command ends: the run is over when the test reaps it) with the member's
  // script as its command and a pipe of the test's as its stdout; the command's pid. Every member gets
  // SHELL=/bin/sh, whatever the caller's environment has: a program that starts a shell (tmux's panes)
  // takes $SHELL, else the account's login shell, /usr/sbin/nologin for the test account, which ends
  // at once; and CI's environment has no SHELL.
  pid_t launch() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    out_ = p[0];
    pid_t command = ctl_background("launch", {"launch", "--keep", "--grace", kShortGraceArg, "r1", "--", "/bin/sh",
                                              "-c", fill("set -e\ncd @Z@\nexport SHELL=/bin/sh\n" + GetParam().script)},
                                   p[1]);
    ::close(p[1]);
    return command;
  }

  // Waits (bounded) for every marker of the member and reads its pids, each tracked at once.
  std::map<std::string, std::vector<pid_t>> await_marked() {
    std::map<std::string, std::vector<pid_t>> marked;
    auto deadline = Clock::now() + kUpTimeout;
    for (const auto& m : GetParam().markers) {
      std::string file = zoo_ + "/" + m.name + ".pid";
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      if (!wait_for_file(file, std::max(left, milliseconds{0}))) {
        ADD_FAILURE() << "no marker " << m.name << ".pid within " << kUpTimeout.count() << " ms: the member never ran; "
                      << zoo_ << " holds " << ::testing::PrintToString(list_folder(zoo_));
        continue;
      }
      auto pids = read_pids(file);
      for (pid_t pid : pids) track(pid, true);
      EXPECT_EQ(pids.size(), m.count) << m.name << ".pid";
      marked[m.name] = pids;
    }
    return marked;
  }

  // PID, marked as M, is running in the run and got away as M says.
  void expect_escaped_and_contained(const Marker& m, pid_t pid, const Record& rec) const {
    std::string who = m.name + " " + describe_process(pid);
    EXPECT_TRUE(alive(pid)) << who;
    EXPECT_TRUE(within_run(rec, proc_cgroup(pid).value_or("(gone)")))
        << who << " is not in the run's cgroup " << rec.cgroup;
    if (m.escapes & kOwnSession) {
      EXPECT_NE(session_of(pid), ::getsid(0)) << who << " did not leave its session";
    }
    if (m.escapes & kOwnGroup) {
      EXPECT_NE(::getpgid(pid), ::getpgrp()) << who << " is in the command's process group";
    }
    if (m.escapes & kIgnoresTerm) {
      EXPECT_TRUE(ignores_signal(pid, SIGTERM)) << who << " does not ignore SIGTERM";
    }
    if (m.escapes & kIgnoresHup) {
      EXPECT_TRUE(ignores_signal(pid, SIGHUP)) << who << " does not ignore SIGHUP";
    }
    if (m.escapes & kHoldsStdout) {
      EXPECT_EQ(fd_target(pid, 1), fd_target(::getpid(), out_)) << who << " does not hold the run's stdout";
    }
    if (!m.program.empty()) {
      EXPECT_THAT(comm_of(pid), StartsWith(m.program)) << who;
    }
  }

  // Reaps r1 and expects every one of PIDS gone, a complete receipt (killed when IGNORER: a process
  // that ignores SIGTERM), the run's stdout at its end and nothing of the run left. Every process of
  // the run is gone when the reap answers; nerved's own holder (nerve-hold, no process of the run),
  // which it kills last, may still be ending then and must be gone within the event bound (a reap
  // is complete once only the killed holder is left: seen here on a loaded machine).
  void expect_reaped_with_nothing_left(const Record& rec, const std::set<pid_t>& pids, bool ignorer) {
    std::string before = census(pids);
    std::set<pid_t> holders;
    for (pid_t pid : pids)
      if (comm_of(pid).rfind("nerve-hold", 0) == 0) holders.insert(pid);
    Output reap = ctl({"reap", "--grace", kShortGraceArg, "r1"});
    EXPECT_EQ(reap.exit_code, 0) << reap.out << reap.err;
    for (pid_t pid : pids) {
      if (holders.count(pid)) {
        EXPECT_TRUE(wait_gone(pid, kEventTimeout)) << "the holder is left after the reap: " << describe_process(pid);
      } else {
        EXPECT_FALSE(alive(pid)) << "left after the reap: " << describe_process(pid);
      }
    }
    Receipt r = receipt("r1");
    EXPECT_EQ(to_string(r.outcome), "complete") << r.error;
    // A Reap of a run whose command has ended is cause exited (docs/records.md, "Receipt: cause and usage").
    EXPECT_EQ(r.cause ? to_string(*r.cause) : "(none)", GetParam().command_exits ? "exited" : "reaped");
    if (ignorer) {
      EXPECT_TRUE(r.killed) << "a process ignored SIGTERM, yet the receipt says killed false";
    }
    EXPECT_TRUE(wait_folder_gone(cgroup_folder(rec.cgroup), 2000ms)) << cgroup_folder(rec.cgroup) << " is left";
    expect_no_run_left("after the reap");
    EXPECT_EQ(to_string(record("r1").state), "reaped");
    bool eof = false;
    read_until_eof(out_, 2000ms, &eof);
    EXPECT_TRUE(eof) << "something still holds the run's stdout 2 s after the reap";
    std::cerr << "note: zoo " << GetParam().name << ": " << pids.size() << " processes in the run (" << before
              << "), reap took " << reap.took.count() << " ms, killed " << r.killed << "\n";
  }

  std::string zoo_;
  int display_ = 1000 + ::getpid() % 30000;  // Xvfb's: a display number no one else uses
  int out_ = -1;                             // the read end of the run's stdout
};

TEST_P(TheEscaperZoo, IsStartedEscapedContainedThenReapedWithNothingLeft) {
  const Member& member = GetParam();
  if (auto missing = missing_program(member.programs))
    GTEST_SKIP() << member.name << " needs " << *missing << ", which is not installed (Debian: " << member.package
                 << "; scripts/install-deps.sh installs it)";
  ASSERT_NO_FATAL_FAILURE(prepare_zoo());
  auto t0 = Clock::now();
  pid_t command = launch();
  auto marked = await_marked();
  ASSERT_FALSE(HasFailure()) << "the member did not start";
  if (member.command_exits) {
    // Every marked process outlives the command that started it.
    auto code = wait_child(command, kUpTimeout);
    ASSERT_TRUE(code) << "the command did not end: " << describe_process(command);
    ASSERT_EQ(*code, 0) << "the member's script failed: " << read_file(path("launch.err")).value_or("");
  } else {
    EXPECT_TRUE(alive(command)) << "the command waits for its jobs: " << describe_process(command);
  }
  auto up = since(t0);
  Record rec = record("r1");
  ASSERT_EQ(to_string(rec.state), "running");
  bool ignorer = false;
  for (const auto& m : member.markers) {
    ignorer = ignorer || (m.escapes & kIgnoresTerm);
    for (pid_t pid : marked[m.name]) expect_escaped_and_contained(m, pid, rec);
  }
  // Everything of the run, not only what is marked, must be gone after the reap.
  std::set<pid_t> pids = processes_in(cgroup_folder(rec.cgroup));
  for (pid_t pid : pids) track(pid, true);
  for (const auto& [name, list] : marked) pids.insert(list.begin(), list.end());
  ASSERT_FALSE(HasFailure()) << "the member is not escaped and contained as it should be; not reaping";
  std::cerr << "note: zoo " << member.name << ": up in " << up.count() << " ms\n";
  expect_reaped_with_nothing_left(rec, pids, ignorer);
}

INSTANTIATE_TEST_SUITE_P(Members, TheEscaperZoo, ::testing::ValuesIn(all_members()),
                         [](const ::testing::TestParamInfo<Member>& info) { return info.param.name; });

}  // namespace
}  // namespace nerve::itest
