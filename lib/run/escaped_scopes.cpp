// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/escaped_scopes.h"

#include "base/host.h"
#include "run/reaper.h"
#include "run/run_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <limits>
#include <memory>

namespace nerve {

namespace {

// How far up the parent chain a process is followed to find an ancestor in the run's cgroup.
constexpr int kMaxAncestors = 64;

// The NUL-separated environment of 'pid' (empty when gone or unreadable).
std::string environ_of(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/environ";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

bool has_variable(const std::string& env, const std::string& entry) {
  // Entries are NUL-separated: match a whole entry, at the start or after a NUL.
  std::string whole = entry + '\0';
  if (env.compare(0, whole.size(), whole) == 0) return true;
  return env.find('\0' + whole) != std::string::npos;
}

bool carries_run(pid_t pid, const Record& record, const std::string& scope_invocation_id) {
  if (record.invocation_id.empty()) return false;
  std::string env = environ_of(pid);
  if (!has_variable(env, "NERVE_RUN=" + record.run)) return false;
  if (has_variable(env, "INVOCATION_ID=" + record.invocation_id)) return true;
  // `systemd-run --scope` replaces INVOCATION_ID with its new scope's before it execs the command.
  return !scope_invocation_id.empty() && has_variable(env, "INVOCATION_ID=" + scope_invocation_id) &&
         has_variable(env, "NERVE_RUN_ATTEMPT=" + std::to_string(record.attempt));
}

// Every process of a run was started by the run's first process or below it, so none started
// before it: a process that did (or whose ancestor did, for everything above it is older still) was
// never forked inside the run. Start times are clock ticks; one started in the same tick is looked at.
bool older_than_run(const ProcStat& p, const Record& record) {
  return record.leader_start_time != 0 && p.start_time < record.leader_start_time;
}

bool ancestor_in_run(const ProcStat& self, const Record& record, Cgroups& cgroups) {
  if (record.cgroup.empty()) return false;
  pid_t p = self.parent;
  for (int i = 0; i < kMaxAncestors && p > 1; ++i) {
    auto parent = cgroups.process(p);
    if (!parent || older_than_run(*parent, record)) return false;
    if (auto member = cgroups.member_of(p); member && within_run(record, *member)) return true;
    p = parent->parent;
  }
  return false;
}

// One search and its reaps: lives as long as one of its callbacks holds it.
struct Search : std::enable_shared_from_this<Search> {
  Search(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Cause cause,
         std::function<void(EscapedReaps)> done)
      : deps(deps), record(record), grace_usec(grace_usec), signal(signal), cause(cause), done(std::move(done)) {}

  Deps& deps;
  Record record;
  std::uint64_t grace_usec;
  int signal;
  Cause cause;
  std::function<void(EscapedReaps)> done;
  EscapedReaps result;
  std::vector<Record> found;  // one record per escaped scope, as ReapOp takes it
  std::size_t pending = 0;

  void start() {
    deps.systemd.list_scopes("*.scope", [self = shared_from_this()](Result<std::vector<std::string>> units) {
      if (!units) {
        self->result.error = "cannot list the user manager's scopes to look for escaped ones: " + units.error().message;
        return self->finish();
      }
      self->look_up(*units);
    });
  }

  void look_up(const std::vector<std::string>& units) {
    std::vector<std::string> others;
    for (const auto& u : units)
      if (!never_escaped(u) && u != record.unit) others.push_back(u);
    if (others.empty()) return finish();
    pending = others.size();
    for (const auto& unit : others)
      deps.systemd.lookup(unit, [self = shared_from_this(), unit](Result<UnitState> state) {
        self->looked_up(unit, state);
        if (--self->pending == 0) self->reap_found();
      });
  }

  void looked_up(const std::string& unit, const Result<UnitState>& state) {
    if (!state) {
      // A scope that went between the listing and its lookup is no longer anyone's.
      if (!is_no_such_unit(state.error()) && result.error.empty())
        result.error = "cannot look up scope " + unit + " to see whether it escaped the run: " + state.error().message;
      return;
    }
    if (state->control_group.empty()) return;
    auto pids = deps.cgroups.pids(state->control_group);
    bool ours = false;
    for (pid_t p : pids) ours = ours || process_of_run(p, record, deps.cgroups, state->invocation_id);
    if (!ours) return;
    auto id = deps.cgroups.id(state->control_group);
    if (!id) return;  // emptied and gone meanwhile
    Record r;
    r.run = record.run;
    r.attempt = record.attempt;
    r.unit = unit;
    r.boot_id = deps.boot_id;
    r.backend = deps.backend;
    r.invocation_id = state->invocation_id;
    r.cgroup = state->control_group;
    r.cgroup_id = *id;
    r.state = RunState::Running;
    // Above any grace: ReapOp then stops the scope with StopUnit, its own timers sending SIGKILL.
    r.grace_usec = std::numeric_limits<std::uint64_t>::max();
    found.push_back(std::move(r));
    result.scopes.push_back({unit, std::vector<int>(pids.begin(), pids.end())});
    log_run(spdlog::level::warn, record, "scope " + unit + " holds processes of the run (escaped): reaping it first");
  }

  void reap_found() {
    if (found.empty()) return finish();
    pending = found.size();
    std::uint64_t grace = grace_usec ? grace_usec : record.grace_usec;
    if (grace == 0) grace = 1;  // 0 would mean "the record's grace", which ReapOp takes from these records
    for (const auto& r : found)
      ReapOp::start(deps, r, grace, signal, cause, [self = shared_from_this()](Receipt receipt) {
        bool gone = receipt.outcome == Outcome::Complete || receipt.outcome == Outcome::NoScope;
        if (!gone && self->result.error.empty())
          self->result.error = "escaped scope " + receipt.unit + " was not reaped: " + receipt.error;
        if (--self->pending == 0) self->finish();
      });
  }

  void finish() {
    auto d = std::move(done);
    d(std::move(result));
  }
};

}  // namespace

bool never_escaped(const std::string& unit) { return unit.starts_with("nerve-") || unit == "init.scope"; }

bool process_of_run(pid_t pid, const Record& record, Cgroups& cgroups, const std::string& scope_invocation_id) {
  // Most processes of other scopes are older than the run: one read of /proc/PID/stat settles them.
  auto self = cgroups.process(pid);
  if (!self || older_than_run(*self, record)) return false;
  return carries_run(pid, record, scope_invocation_id) || ancestor_in_run(*self, record, cgroups);
}

void reap_escaped_scopes(Deps& deps, const Record& record, std::uint64_t grace_usec, int signal, Cause cause,
                         std::function<void(EscapedReaps)> done) {
  bool ran = record.boot_id == deps.boot_id && (!record.invocation_id.empty() || !record.cgroup.empty());
  if (!ran) return done({});
  std::make_shared<Search>(deps, record, grace_usec, signal, cause, std::move(done))->start();
}

}  // namespace nerve
