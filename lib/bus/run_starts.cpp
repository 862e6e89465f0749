// SPDX-License-Identifier: LGPL-2.1-or-later
// Contain and Launch: the methods that start a run (manager_object.h).
#include "bus/manager_calls.h"

#include "base/errors.h"
#include "base/host.h"
#include "base/run_id.h"
#include "bus/run_objects.h"
#include "process/sealing.h"
#include "system/owners.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace nerve {

namespace {
// A sealed run is refused before anything is recorded or started where the host cannot seal.
void require_sealing(const std::string& run) {
  SealingStatus s = sealing_status();
  if (!s.available)
    throw_bus_error(error::SealingUnavailable, "run " + quote_value(run) + " cannot be sealed on this host: " + s.detail);
}

// Launch's arguments but its options, checked before anything is recorded or started.
void check_launch_arguments(const std::string& run, const std::vector<std::string>& argv,
                            const std::vector<std::string>& env, const std::string& cwd,
                            const std::vector<sdbus::UnixFd>& stdio) {
  value_or_throw(check_run_id(run));
  if (argv.empty() || argv[0].empty()) throw_bus_error(error::InvalidArgument, "argv must name a command");
  for (const auto& e : env)
    if (e.find('=') == std::string::npos || e.front() == '=')
      throw_bus_error(error::InvalidArgument, "environment entry " + quote_value(e) + " is not KEY=VALUE");
  if (cwd.empty() || cwd.front() != '/')
    throw_bus_error(error::InvalidArgument, "cwd " + quote_value(cwd) + " is not an absolute path");
  if (struct stat st {}; ::stat(cwd.c_str(), &st) < 0)
    throw_bus_error(error::InvalidArgument, "cwd " + quote_value(cwd) + " cannot be used: " + std::strerror(errno));
  else if (!S_ISDIR(st.st_mode))
    throw_bus_error(error::InvalidArgument, "cwd " + quote_value(cwd) + " is not a folder");
  if (stdio.size() != 3)
    throw_bus_error(error::InvalidArgument,
                    "stdio must hold exactly 3 fds (stdin, stdout, stderr), not " + std::to_string(stdio.size()));
}
}  // namespace

void ManagerObject::Contain(sdbus::Result<std::string, std::string, std::string, uint32_t>&& result,
                            std::string run, uint64_t grace_usec, std::map<std::string, sdbus::Variant> options) try {
  AsyncReply reply(std::move(result));
  count_start(reply, StartMethod::Contain);
  if (!admit(reply)) return;
  lifecycle_.prime_migration();  // first: its grace period runs while nerved does everything up to the start job
  value_or_throw(check_run_id(run));
  value_or_throw(check_grace(grace_usec));
  ContainRequest defaults = run_defaults(run);
  if (grace_usec) defaults.grace_usec = grace_usec;
  RunOptions opts = value_or_throw(parse_run_options(RunMethod::Contain, options, defaults));
  with_caller("Contain", reply, [this, reply, opts = std::move(opts)](const BusCaller& caller) {
    contain_as(reply, opts, caller);
  });
} catch (...) {
  rethrow_named("Contain");
}

void ManagerObject::contain_as(const AsyncReply<std::string, std::string, std::string, uint32_t>& reply,
                               RunOptions opts, const BusCaller& caller) {
  if (caller.pid <= 0) throw_bus_error(error::AccessDenied, "the caller's pid is unknown; it cannot be contained");
  check_caller_uid(caller.uid);
  if (opts.sealed) require_sealing(opts.contain.run);  // the caller seals itself; nerved only checks
  ContainRequest req = std::move(opts.contain);
  req.pid = caller.pid;
  auto contain = [this, reply](ContainRequest req) {
    lifecycle_.contain(std::move(req), [reply](Result<ContainReply> r) {
      if (!r) return reply.error(r.error());
      reply(r->unit, r->invocation_id, r->cgroup, r->attempt);
    });
  };
  if (!opts.owner_bus_name) {
    // The owner of a run started by a wrapper is the wrapper's parent: the engine that ran it.
    req.owner = owner_of(req.pid);
    return contain(std::move(req));
  }
  bus_owner(*opts.owner_bus_name, req.pid, [reply, contain, req](Result<Owner> owner) mutable {
    if (!owner) return reply.error(owner.error());
    req.owner = std::move(*owner);
    answer_errors("Contain", reply, [&] { contain(std::move(req)); });
  });
}

void ManagerObject::bus_owner(const std::string& name, pid_t caller, std::function<void(Result<Owner>)> done) {
  Error refused{error::InvalidArgument,
                "owner_bus_name " + quote_value(name) + " is not a unique bus name of the caller's parent process"};
  if (name.rfind(':', 0) != 0) return done(refused);
  // Its pid as dbus-daemon knows it, kept like a caller's (a unique name is never another's).
  callers_.of(name, [name, caller, refused, done = std::move(done)](Result<BusCaller> named) {
    auto parent = proc_parent(caller);
    if (!named || named->pid <= 0 || !parent || named->pid != *parent) return done(refused);
    Owner owner;
    owner.kind = OwnerKind::Bus;
    owner.name = name;
    done(owner);
  });
}

void ManagerObject::Launch(sdbus::Result<sdbus::ObjectPath, uint32_t>&& result, std::string run,
                           std::vector<std::string> argv, std::vector<std::string> env, std::string cwd,
                           std::vector<sdbus::UnixFd> stdio, std::map<std::string, sdbus::Variant> options) try {
  AsyncReply reply(std::move(result));
  count_start(reply, StartMethod::Launch);
  if (!admit(reply)) return;
  lifecycle_.prime_migration();  // first: before the credentials, the spawn of the child and the intent write
  check_launch_arguments(run, argv, env, cwd, stdio);
  RunOptions opts = value_or_throw(parse_run_options(RunMethod::Launch, options, run_defaults(run)));
  LaunchRequest req;
  req.contain = std::move(opts.contain);
  req.spawn.argv = std::move(argv);
  req.spawn.env = std::move(env);
  req.spawn.cwd = std::move(cwd);
  req.spawn.sealed = opts.sealed;
  // The caller's fds stay open here until the child is spawned with them (launch_as).
  auto fds = std::make_shared<std::vector<sdbus::UnixFd>>(std::move(stdio));
  for (std::size_t i = 0; i < 3; ++i) req.spawn.stdio[i] = (*fds)[i].get();
  with_caller("Launch", reply, [this, reply, req, fds, sender = current_sender()](const BusCaller& caller) {
    launch_as(reply, req, sender, caller);
  });
} catch (...) {
  rethrow_named("Launch");
}

void ManagerObject::launch_as(const AsyncReply<sdbus::ObjectPath, uint32_t>& reply, LaunchRequest req,
                              const std::string& sender, const BusCaller& caller) {
  check_caller_uid(caller.uid);
  if (req.spawn.sealed) require_sealing(req.contain.run);
  req.contain.caller_pid = caller.pid;
  // The caller's connection owns the run: if the engine dies, its runs are reaped.
  req.contain.owner.kind = OwnerKind::Bus;
  req.contain.owner.name = sender;
  std::string run = req.contain.run;
  launcher_.launch(std::move(req), [reply, run](Result<pid_t> pid) {
    if (!pid) return reply.error(pid.error());
    reply(sdbus::ObjectPath(run_object_path(run)), static_cast<uint32_t>(*pid));
  });
}

}  // namespace nerve
