// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "run/contain.h"

#include "base/defaults.h"
#include "base/errors.h"
#include "run/fault.h"
#include "base/host.h"
#include "run/reap_decision.h"
#include "base/run_id.h"
#include "run/run_log.h"

namespace nerve {

void ContainOp::start(Deps& deps, ContainRequest req, unsigned attempt, Done<ContainReply> done) {
  auto op = std::make_shared<ContainOp>(deps, std::move(req), attempt, std::move(done));
  op->begin();
}

ContainOp::ContainOp(Deps& deps, ContainRequest req, unsigned attempt, Done<ContainReply> done)
    : deps_(deps), records_(deps.store), req_(std::move(req)), done_(std::move(done)) {
  record_.run = req_.run;
  record_.attempt = attempt;
  record_.nonce = random_hex(8);
  record_.unit = scope_unit_name(req_.run, record_.nonce);
  record_.boot_id = deps_.boot_id;
  record_.backend = deps_.backend;
  record_.state = RunState::Launching;
  record_.released = false;
  record_.leader_pid = req_.pid;
  record_.leader_start_time = deps_.cgroups.start_time(req_.pid).value_or(0);
  record_.reap_on_exit = req_.reap_on_exit;
  record_.grace_usec = req_.grace_usec;
  record_.keep = req_.keep;
  record_.owner = req_.owner;
  record_.properties = req_.controls.properties;
  record_.slice = req_.controls.slice;
  record_.timeout_usec = req_.controls.timeout.usec();
  record_.parent = req_.parent;
  record_.created_at = record_.updated_at = now_rfc3339();
}

Result<void> ContainOp::save(RunState state) {
  auto saved = records_.transition(record_, state);
  if (!saved)
    fail(error::RecordFailed, saved.error().message +
                                  "; the command was not started. Free space or fix the permissions of the runs folder.");
  return saved;
}

void ContainOp::begin() {
  if (!is_valid_unit_name(record_.unit))
    return fail(error::InvalidRunId, "run id " + quote_value(req_.run) + " does not make a valid unit name");
  // The pid and its start time name the process to contain: check() makes sure the
  // process in the scope is still that one, not a later one given the same pid.
  if (!record_.leader_start_time)
    return fail(error::ScopeFailed, "process " + std::to_string(req_.pid) + " to contain in run " +
                                        quote_value(req_.run) + " is gone; nothing was started");
  if (!save(RunState::Launching)) return;
  intent_saved_ = true;
  log_run(spdlog::level::debug, record_, "intent durable; StartTransientUnit");
  fault_point("after-intent");
  if (deps_.holders) {
    auto holder = deps_.holders->spawn();
    if (!holder)
      return fail(error::ContainmentUnavailable,
                  holder.error().message + "; the command was not started: without a holder its usage could not be read "
                                           "after it ends. Install nerve-hold next to nerve-held (LIBEXECDIR/nerve), "
                                           "or set NERVE_HOLD_HELPER to its path");
    holder_ = *holder;
  }
  // No RuntimeMaxUSec: the run's timeout is nerve's own deadline (deadlines.h).
  ScopeSpec spec{record_.unit, scope_description(record_), req_.pid, holder_, record_.grace_usec,
                 req_.controls.slice, 0, req_.controls.unit_properties};
  job_deadline_ = deps_.timers.add_timer(kStartJobTimeout, [self = shared_from_this()] {
    self->job_deadline_ = 0;
    self->job_expired_ = true;
    self->fail(error::ScopeFailed, "the start job of scope " + self->record_.unit + " for run " +
                                       quote_value(self->record_.run) + " did not finish within " +
                                       std::to_string(kStartJobTimeout.count()) + " ms; the command was not started");
  });
  deps_.systemd.start_scope(spec, [self = shared_from_this()](Result<void> job) { self->on_started(job); });
  fault_point("after-start-request");
}

void ContainOp::on_started(const Result<void>& job) {
  if (job_expired_) return log_run(spdlog::level::info, record_, "start job ended after its deadline; ignored");
  if (job_deadline_) deps_.timers.cancel_timer(job_deadline_);
  job_deadline_ = 0;
  fault_point("after-start");
  if (!job && refused_property(job.error()))
    return fail(error::InvalidProperty, "systemd refused the properties of run " + quote_value(record_.run) + " (" +
                                            quote_value(refused_properties(job.error().message)) +
                                            "): " + job.error().message);
  if (!job)
    return fail(error::ScopeFailed, "systemd did not start scope " + record_.unit + " for run " +
                                        quote_value(record_.run) + ": " + job.error().message);
  ask_lookup();
}

void ContainOp::ask_lookup() {
  --lookups_left_;
  deps_.systemd.lookup(record_.unit, [self = shared_from_this()](Result<UnitState> l) { self->on_lookup(l); });
}

// An error of StartTransientUnit itself (not of its job) about the properties the run asked for.
bool ContainOp::refused_property(const Error& e) const {
  const RunControls& c = req_.controls;
  if (c.properties.empty() && c.slice.empty() && c.timeout.is_zero()) return false;
  return e.name == "org.freedesktop.DBus.Error.InvalidArgs" || e.name == "org.freedesktop.DBus.Error.PropertyReadOnly" ||
         e.name == "org.freedesktop.DBus.Error.UnknownProperty";
}

std::string ContainOp::refused_properties(const std::string& message) const {
  RunControls c = req_.controls;
  if (!c.slice.empty()) c.properties.push_back("Slice=" + c.slice);
  return refused_assignment(c, message);
}

void ContainOp::on_lookup(const Result<UnitState>& l) {
  if (!l && is_call_timeout(l.error()) && lookups_left_ > 0) {
    log_run(spdlog::level::warn, record_, "scope not read within the call's deadline (" + l.error().message + "); asking again");
    return ask_lookup();
  }
  if (!l)
    return fail(error::ScopeFailed, "scope " + record_.unit + " cannot be read after its start: " +
                                        (is_no_such_unit(l.error()) ? "unit not found" : l.error().message));
  auto cgroup_id = check(*l);
  if (!cgroup_id) return fail(error::ScopeFailed, cgroup_id.error().message);
  record_.invocation_id = l->invocation_id;
  record_.cgroup = l->control_group;
  record_.cgroup_id = *cgroup_id;
  if (auto leaves = make_leaves(*l); !leaves) return fail(error::ScopeFailed, leaves.error().message);
  fault_point("before-running");
  log_run(spdlog::level::debug, record_, "membership checked; writing the running record");
  if (!release()) return;
  log_run(spdlog::level::info, record_,
          "pid " + std::to_string(req_.pid) + " contained (cgroup " + record_.cgroup + ")", message_id::Launch);
  holder_ = 0;  // in hold/: from now on the reap ends it, with the scope
  auto done = std::move(done_);
  // The caller's own cgroup, which it checks before it execs: run/ once the scope has its leaves.
  done(ContainReply{record_.unit, record_.invocation_id, has_leaf(record_) ? record_.leaf : record_.cgroup, record_.attempt});
}

Result<std::uint64_t> ContainOp::check(const UnitState& u) {
  auto wrong = [](std::string why) { return Error{error::ScopeFailed, std::move(why)}; };
  if (u.active_state != "active") return wrong("scope " + record_.unit + " is " + u.active_state + ", not active");
  if (u.invocation_id.size() != 32 || u.control_group.empty())
    return wrong("scope " + record_.unit + " has no InvocationID or ControlGroup");
  auto member = deps_.cgroups.member_of(req_.pid);
  if (!member || *member != u.control_group)
    return wrong("process " + std::to_string(req_.pid) + " is in cgroup " +
                 (member ? quote_value(*member) : std::string("(gone)")) + ", not in " + u.control_group +
                 " of its scope");
  // systemd 252 takes the pid as a number (PIDs, no PIDFDs): if the process ended meanwhile and its pid
  // was reused, systemd moved the other process. Its start time tells; it is then not contained (and
  // not killed: it is not ours; the scope that holds it is left to systemd).
  if (auto start = deps_.cgroups.start_time(req_.pid); start != record_.leader_start_time)
    return wrong("process " + std::to_string(req_.pid) + " in scope " + record_.unit +
                 " is not the one to contain: its start time is " + (start ? std::to_string(*start) : "(gone)") +
                 ", not " + std::to_string(record_.leader_start_time) + " (the pid was reused)");
  auto id = deps_.cgroups.id(u.control_group);
  if (!id) return wrong("cgroup " + u.control_group + " of scope " + record_.unit + " is not visible");
  return *id;
}

Result<void> ContainOp::make_leaves(const UnitState& u) {
  if (!deps_.holders) return {};
  auto not_started = [&](const std::string& why) {
    return Error{error::ScopeFailed, why + "; the command of run " + quote_value(record_.run) +
                                         " was not started, as its usage could not be read after it ends. "
                                         "Check that the user manager delegates scopes (Delegate=yes) and try again"};
  };
  if (auto member = deps_.cgroups.member_of(holder_); !member || *member != u.control_group)
    return not_started("the holder " + std::to_string(holder_) + " of scope " + record_.unit + " is in cgroup " +
                       (member ? quote_value(*member) : std::string("(gone)")) + ", not in " + u.control_group);
  auto leaves = deps_.cgroups.make_leaves(record_.cgroup, record_.cgroup_id, req_.pid, holder_);
  if (!leaves) return not_started(leaves.error().message);
  record_.leaf = leaf_of(record_.cgroup);
  record_.leaf_id = leaves->run_id;
  log_run(spdlog::level::debug, record_,
          "leaves made; controllers for run/: " + (leaves->controllers.empty() ? "none" : leaves->controllers));
  if (!leaves->controllers_error.empty())
    log_run(spdlog::level::info, record_, "some controllers are not enabled for run/: " + leaves->controllers_error);
  return {};
}

Result<void> ContainOp::release() {
  // One lazy write says both: running, and released. Lazy: a crash of nerved keeps it (the page
  // cache), a crash of the machine ends the run anyway. Without it a later nerved could not tell this
  // run's end from one that never started, so the command does not start without it; a nerved that
  // dies before it leaves the intent, whose attempt is cleaned as never started (reconcile.h).
  record_.released = true;
  return save(RunState::Running);
}

void ContainOp::fail(const char* name, std::string message) {
  log_run(spdlog::level::err, record_, message);
  if (holder_) deps_.holders->kill(holder_);  // the scope must empty once the caller exits
  holder_ = 0;
  record_.released = false;  // every failure comes before the reply: the caller was never told to exec
  // No stop here: the scope, if one was made, holds only the caller, which gets this error, does not
  // exec, and exits; systemd then collects the empty scope. The record keeps naming the unit, so a
  // later attempt or reap can still find it.
  if (intent_saved_ && record_.state != RunState::Failed) {
    if (auto marked = records_.transition(record_, RunState::Failed); !marked)
      log_run(spdlog::level::err, record_, marked.error().message + ", ignoring");
  }
  auto done = std::move(done_);
  done(Error{name, std::move(message)});
}

}  // namespace nerve
