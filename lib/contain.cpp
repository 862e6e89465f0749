#include "contain.h"

#include "durable_file.h"
#include "errors.h"
#include "fault.h"
#include "host.h"
#include "reap_decision.h"
#include "run_id.h"

#include <spdlog/spdlog.h>

namespace nerve {

void ContainOp::start(Deps& deps, ContainRequest req, unsigned attempt, Done done) {
  std::shared_ptr<ContainOp> op(new ContainOp(deps, std::move(req), attempt, std::move(done)));
  op->self_ = op;
  op->begin();
}

ContainOp::ContainOp(Deps& deps, ContainRequest req, unsigned attempt, Done done)
    : deps_(deps), req_(std::move(req)), done_(std::move(done)) {
  record_.run = req_.run;
  record_.attempt = attempt;
  record_.nonce = random_hex(8);
  record_.unit = scope_unit_name(req_.run, record_.nonce);
  record_.boot_id = deps_.boot_id;
  record_.state = RunState::Launching;
  record_.leader_pid = req_.pid;
  record_.grace_usec = req_.grace_usec;
  record_.keep = req_.keep;
  record_.owner = req_.owner;
  record_.created_at = record_.updated_at = now_rfc3339();
}

bool ContainOp::save(const char* step) {
  record_.updated_at = now_rfc3339();
  try {
    deps_.store.save(record_);
    return true;
  } catch (const FsError& e) {
    spdlog::error("run {} unit {}: cannot write the {} record: {}", record_.run, record_.unit, step, e.what());
    fail(error::RecordFailed,
         std::string("cannot make the record of run ") + quote_value(record_.run) + " durable: " + e.what() +
             "; the command was not started. Free space or fix the permissions of the runs folder.");
    return false;
  }
}

void ContainOp::begin() {
  if (!is_valid_unit_name(record_.unit))
    return fail(error::InvalidRunId, "run id " + quote_value(req_.run) + " does not make a valid unit name");
  spdlog::debug("run {} attempt {}: writing the intent record", record_.run, record_.attempt);
  if (!save("intent")) return;
  intent_saved_ = true;
  spdlog::debug("run {} attempt {}: intent durable; StartTransientUnit {}", record_.run, record_.attempt, record_.unit);
  fault_point("after-intent");
  ScopeSpec spec{record_.unit, scope_description(record_), req_.pid, record_.grace_usec};
  auto self = self_;
  deadline_ = deps_.timers.add_timer(kStartJobTimeout, [this, self] { on_start_timeout(); });
  deps_.systemd.start_scope(spec, [this, self](JobOutcome job) { on_started(std::move(job)); });
  fault_point("after-start-request");
}

void ContainOp::on_start_timeout() {
  deadline_ = 0;
  if (finished_) return;
  fail(error::ScopeFailed, "the start job of scope " + record_.unit + " for run " + quote_value(record_.run) +
                               " did not finish within " + std::to_string(kStartJobTimeout.count()) +
                               " s (is the user manager stalled?); the command was not started");
}

void ContainOp::on_started(JobOutcome job) {
  if (finished_) return;  // too late: the deadline already failed this attempt
  if (deadline_) deps_.timers.cancel_timer(deadline_);
  deadline_ = 0;
  fault_point("after-start");
  spdlog::debug("run {} attempt {}: start job ended: {}", record_.run, record_.attempt, job.ok ? "done" : job.result);
  if (!job.ok) {
    std::string why = job.error.empty() ? "its job ended with result '" + job.result + "'" : job.error;
    return fail(error::ScopeFailed, "systemd did not start scope " + record_.unit + " for run " + quote_value(record_.run) +
                                         ": " + why);
  }
  Lookup l = deps_.systemd.lookup(record_.unit);
  if (l.status != LookupStatus::Found)
    return fail(error::ScopeFailed, "scope " + record_.unit + " cannot be read after its start: " +
                                        (l.status == LookupStatus::NoSuchUnit ? "unit not found" : l.error));
  if (l.unit.active_state != "active")
    return fail(error::ScopeFailed, "scope " + record_.unit + " is " + l.unit.active_state + ", not active");
  if (l.unit.invocation_id.size() != 32 || l.unit.control_group.empty())
    return fail(error::ScopeFailed, "scope " + record_.unit + " has no InvocationID or ControlGroup");
  auto member = deps_.cgroups.member_of(req_.pid);
  if (!member || *member != l.unit.control_group)
    return fail(error::ScopeFailed, "process " + std::to_string(req_.pid) + " is in cgroup " +
                                        (member ? quote_value(*member) : std::string("(gone)")) + ", not in " +
                                        l.unit.control_group + " of its scope");
  auto id = deps_.cgroups.id(l.unit.control_group);
  if (!id)
    return fail(error::ScopeFailed, "cgroup " + l.unit.control_group + " of scope " + record_.unit + " is not visible");
  record_.invocation_id = l.unit.invocation_id;
  record_.cgroup = l.unit.control_group;
  record_.cgroup_id = *id;
  record_.state = RunState::Running;
  spdlog::debug("run {} attempt {}: membership checked; writing the running record", record_.run, record_.attempt);
  if (!save("running")) return;
  fault_point("after-running");
  spdlog::info("run {} attempt {}: pid {} contained in {} (invocation {}, cgroup {})", record_.run,
               record_.attempt, req_.pid, record_.unit, record_.invocation_id, record_.cgroup);
  ContainReply reply{record_.unit, record_.invocation_id, record_.cgroup, record_.attempt};
  finished_ = true;
  auto keep = std::move(self_);
  done_(reply, std::nullopt);
}

void ContainOp::fail(const char* name, std::string message) {
  spdlog::error("run {} attempt {} unit {}: {}", record_.run, record_.attempt, record_.unit, message);
  finished_ = true;
  if (deadline_) deps_.timers.cancel_timer(deadline_);
  deadline_ = 0;
  auto keep = std::move(self_);
  // No stop here: the scope, if one was made, holds only the caller, which gets this error, does not
  // exec, and exits; systemd then collects the empty scope. The record keeps naming the unit, so a
  // later attempt or reap can still find it.
  if (intent_saved_) {
    record_.state = RunState::Failed;
    record_.updated_at = now_rfc3339();
    try {
      deps_.store.save(record_);
    } catch (const FsError& e) {
      spdlog::error("run {}: cannot mark the record failed: {}, ignoring", record_.run, e.what());
    }
  }
  done_(std::nullopt, BusError{name, std::move(message)});
}

}  // namespace nerve
