#include "bus/manager_object.h"

#include "bus/bus_reply.h"
#include "base/conventions.h"
#include "base/errors.h"
#include "base/host.h"
#include "generated/nerve_version.h"
#include "bus/bus_caller.h"
#include "system/owners.h"
#include "base/run_id.h"
#include "base/run_controls.h"
#include "bus/run_objects.h"
#include "process/sealing.h"
#include "system/slice_properties.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nerve {

namespace {
void check_grace(std::uint64_t grace_usec) {
  if (grace_usec > kMaxGraceUsec)
    throw_bus_error(error::InvalidArgument,
                    "grace " + std::to_string(grace_usec) + " us is longer than the limit of one hour");
}

template <typename T>
T option_value(const std::string& key, const sdbus::Variant& value, const char* type) {
  try {
    return value.get<T>();
  } catch (const sdbus::Error&) {
    throw_bus_error(error::InvalidArgument, "option '" + key + "' must be " + type);
  }
}

// A sealed run is refused before anything is recorded or started where the host cannot seal.
void require_sealing(const std::string& run) {
  SealingStatus s = sealing_status();
  if (!s.available)
    throw_bus_error(error::SealingUnavailable, "run " + quote_value(run) + " cannot be sealed on this host: " + s.detail);
}

using PropertyPairs = std::vector<sdbus::Struct<std::string, std::string>>;

// The options of Contain and Launch that set a run's controls (run_controls.h); false for others.
// A bad property is refused here, before anything is recorded or started.
bool run_control_option(const std::string& key, const sdbus::Variant& value, RunControls& c) {
  if (key == "properties") {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (auto& p : option_value<PropertyPairs>(key, value, "an array of (KEY, VALUE) string pairs (a(ss))"))
      pairs.emplace_back(p.get<0>(), p.get<1>());
    auto parsed = parse_property_pairs(pairs);
    if (!parsed) throw_bus_error(parsed.error().name, parsed.error().message);
    // After nerved's default properties (already in c), so that the run's own win for the same key.
    c.properties.insert(c.properties.end(), parsed->properties.begin(), parsed->properties.end());
    c.unit_properties = value_or_throw(parse_unit_properties(c.properties));
  } else if (key == "timeout_usec") {
    c.timeout = Duration::from_usec(option_value<uint64_t>(key, value, "an unsigned 64-bit integer (t)"));
  } else if (key == "slice") {
    c.slice = option_value<std::string>(key, value, "a string");
    value_or_throw(check_slice_name(c.slice));
  } else {
    return false;
  }
  return true;
}

[[noreturn]] void rethrow_named(const char* method);

// Runs 'work'; any exception leaves it as a named bus error (rethrow_named).
void rethrow_named_from(const char* method, const std::function<void()>& work) {
  try {
    work();
  } catch (...) {
    rethrow_named(method);
  }
}

void check_caller_uid(uid_t uid) {
  if (uid != ::getuid())
    throw_bus_error(error::AccessDenied,
                    "caller uid " + std::to_string(uid) + " is not nerved's uid " + std::to_string(::getuid()));
}

// In a handler's catch (...): a named bus error passes; any other exception becomes Error.Internal,
// naming the method, instead of leaving sdbus-c++ or the event loop to deal with it (issue 8 item 3).
[[noreturn]] void rethrow_named(const char* method) {
  try {
    throw;
  } catch (const sdbus::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw_bus_error(error::Internal, std::string(method) + " failed inside nerved: " + e.what() +
                                         "; nothing was changed by this call, see nerved's log");
  } catch (...) {
    throw_bus_error(error::Internal, std::string(method) +
                                         " failed inside nerved (unknown exception); nothing was changed by this "
                                         "call, see nerved's log");
  }
}
}  // namespace

void ManagerObject::check_current_caller() {
  check_caller_uid(callers_.of(current_sender()).uid);
}

ManagerObject::ManagerObject(sdbus::IConnection& bus, Timers& timers, Lifecycle& lifecycle, ProcessLauncher& launcher,
                             Systemd& systemd, ManagerSettings settings)
    : AdaptorInterfaces(bus, kObjectPath),
      lifecycle_(lifecycle),
      launcher_(launcher),
      systemd_(systemd),
      settings_(std::move(settings)),
      gate_(timers, settings_.calls_per_client),
      callers_(bus) {
  registerAdaptor();
}

std::string ManagerObject::current_sender() { return getObject().getCurrentlyProcessedMessage()->getSender(); }

template <typename... Outs>
bool ManagerObject::admit(const AsyncReply<Outs...>& reply) {
  std::string sender = current_sender();
  auto ticket = gate_.admit(sender);
  if (ticket) {
    reply.hold(std::move(ticket));
    return true;
  }
  reply.error(Error{error::LimitExceeded, "client " + quote_value(sender) + " already has " +
                                              std::to_string(gate_.limit()) +
                                              " calls in flight, nerved's limit per client; nothing was done: "
                                              "wait for their replies, then call again"});
  return false;
}

template <typename... Outs>
void ManagerObject::in_turn(const char* method, AsyncReply<Outs...> reply, std::function<void()> work) {
  if (!admit(reply)) return;
  gate_.queue(current_sender(), [method, reply, work = std::move(work)] {
    try {
      rethrow_named_from(method, work);
    } catch (const sdbus::Error& e) {
      reply.error(Error{e.getName(), e.getMessage()});
    }
  });
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

RunControls ManagerObject::default_controls() const {
  RunControls c;
  c.slice = settings_.default_slice;
  c.properties = settings_.default_properties;
  c.unit_properties = value_or_throw(parse_unit_properties(c.properties));  // checked when nerved started
  return c;
}

void ManagerObject::Contain(sdbus::Result<std::string, std::string, std::string, uint32_t>&& result,
                            std::string run, uint64_t grace_usec, std::map<std::string, sdbus::Variant> options) try {
  AsyncReply reply(std::move(result));
  if (!admit(reply)) return;
  lifecycle_.prime_migration();  // first: its grace period runs while nerved does everything up to the start job
  value_or_throw(check_run_id(run));
  check_grace(grace_usec);
  ContainRequest req = contain_request(run, grace_usec, options);
  lifecycle_.contain(std::move(req), [reply](Result<ContainReply> r) {
    if (!r) return reply.error(r.error());
    reply(r->unit, r->invocation_id, r->cgroup, r->attempt);
  });
} catch (...) {
  rethrow_named("Contain");
}

ContainRequest ManagerObject::contain_request(const std::string& run, uint64_t grace_usec,
                                              const std::map<std::string, sdbus::Variant>& options) {
  BusCaller caller = callers_.of(current_sender());
  pid_t pid = caller.pid;
  if (pid <= 0) throw_bus_error(error::AccessDenied, "the caller's pid is unknown; it cannot be contained");
  check_caller_uid(caller.uid);
  ContainRequest req;
  req.run = run;
  req.pid = pid;
  req.grace_usec = grace_usec ? grace_usec : settings_.default_grace_usec;
  req.controls = default_controls();
  for (const auto& [key, value] : options) {
    if (run_control_option(key, value, req.controls))
      continue;
    else if (key == "keep")
      req.keep = option_value<bool>(key, value, "a boolean");
    else if (key == "sealed" && option_value<bool>(key, value, "a boolean"))
      require_sealing(run);  // the caller seals itself; nerved only checks
    else if (key == "sealed")
      continue;
    else if (key == "owner_bus_name")
      req.owner = bus_owner(value, pid);
    else
      throw_bus_error(error::InvalidArgument, "unknown option " + quote_value(key));
  }
  // The owner of a run started by a wrapper is the wrapper's parent: the engine that ran it.
  if (req.owner.kind != OwnerKind::Bus) req.owner = owner_of(pid);
  return req;
}

Owner ManagerObject::bus_owner(const sdbus::Variant& value, pid_t pid) {
  auto name = option_value<std::string>("owner_bus_name", value, "a string");
  pid_t owner_pid = name.rfind(':', 0) == 0 ? pid_of_bus_name(name) : 0;
  auto parent = proc_parent(pid);
  if (owner_pid <= 0 || !parent || owner_pid != *parent)
    throw_bus_error(error::InvalidArgument,
                    "owner_bus_name " + quote_value(name) + " is not a unique bus name of the caller's parent process");
  Owner owner;
  owner.kind = OwnerKind::Bus;
  owner.name = name;
  return owner;
}

pid_t ManagerObject::pid_of_bus_name(const std::string& name) {
  try {
    auto dbus = sdbus::createProxy(getObject().getConnection(), "org.freedesktop.DBus", "/org/freedesktop/DBus");
    uint32_t pid = 0;
    dbus->callMethod("GetConnectionUnixProcessID").onInterface("org.freedesktop.DBus").withArguments(name).storeResultsTo(pid);
    return static_cast<pid_t>(pid);
  } catch (const sdbus::Error&) {
    return 0;
  }
}

void ManagerObject::Reap(sdbus::Result<std::string, std::string>&& result, std::string run, uint64_t grace_usec) try {
  final_reap(std::move(result), run, 0, grace_usec, Cause::Reaped);
} catch (...) {
  rethrow_named("Reap");
}

void ManagerObject::freezer(sdbus::Result<>&& result, const std::string& run, bool freeze) try {
  AsyncReply<> reply(std::move(result));
  if (!admit(reply)) return;
  value_or_throw(check_run_id(run));
  check_current_caller();
  lifecycle_.freezer(run, freeze, [this, reply, run](Result<void> r) {
    if (!r) return reply.error(r.error());
    if (frozen_changed_) frozen_changed_(run);
    reply();
  });
} catch (...) {
  rethrow_named(freeze ? "Freeze" : "Thaw");
}

void ManagerObject::Cancel(sdbus::Result<std::string, std::string>&& result, std::string run, int32_t signal,
                           uint64_t grace_usec) try {
  value_or_throw(check_run_id(run));
  check_grace(grace_usec);
  if (signal < 1 || signal > 64)
    throw_bus_error(error::InvalidArgument, "signal " + std::to_string(signal) + " is not a signal number (1..64)");
  final_reap(std::move(result), run, signal, grace_usec, Cause::Cancelled);
} catch (...) {
  rethrow_named("Cancel");
}

void ManagerObject::ReapAttempt(sdbus::Result<std::string, std::string>&& result, std::string run, uint32_t attempt,
                                int32_t signal, uint64_t grace_usec) try {
  if (signal < 0 || signal > 64)
    throw_bus_error(error::InvalidArgument, "signal " + std::to_string(signal) + " is not 0 or a signal number (1..64)");
  if (attempt == 0) throw_bus_error(error::InvalidArgument, "attempt 0 does not exist; attempts count from 1");
  final_reap(std::move(result), run, signal, grace_usec, signal ? Cause::Cancelled : Cause::Reaped, attempt);
} catch (...) {
  rethrow_named("ReapAttempt");
}

void ManagerObject::final_reap(sdbus::Result<std::string, std::string>&& result, const std::string& run, int signal,
                               uint64_t grace_usec, Cause cause, unsigned attempt) {
  AsyncReply reply(std::move(result));
  if (!admit(reply)) return;
  value_or_throw(check_run_id(run));
  check_grace(grace_usec);
  check_current_caller();
  auto answer = [reply](Result<Receipt> receipt) {
    if (!receipt) return reply.error(receipt.error());
    reply(to_string(receipt->outcome), to_json_text(*receipt));
  };
  if (attempt) return lifecycle_.final_reap_attempt(run, attempt, signal, grace_usec, cause, answer);
  lifecycle_.final_reap(run, signal, grace_usec, cause, answer);
}

void ManagerObject::Launch(sdbus::Result<sdbus::ObjectPath, uint32_t>&& result, std::string run,
                           std::vector<std::string> argv, std::vector<std::string> env, std::string cwd,
                           std::vector<sdbus::UnixFd> stdio, std::map<std::string, sdbus::Variant> options) try {
  AsyncReply reply(std::move(result));
  if (!admit(reply)) return;
  lifecycle_.prime_migration();  // first: before the credentials, the spawn of the child and the intent write
  LaunchRequest req = launch_request(run, std::move(argv), std::move(env), std::move(cwd), stdio, options);
  launcher_.launch(std::move(req), [reply, run](Result<pid_t> pid) {
    if (!pid) return reply.error(pid.error());
    reply(sdbus::ObjectPath(run_object_path(run)), static_cast<uint32_t>(*pid));
  });
} catch (...) {
  rethrow_named("Launch");
}

LaunchRequest ManagerObject::launch_request(const std::string& run, std::vector<std::string> argv,
                                            std::vector<std::string> env, std::string cwd,
                                            const std::vector<sdbus::UnixFd>& stdio,
                                            const std::map<std::string, sdbus::Variant>& options) {
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
  LaunchRequest req;
  req.run = run;
  req.grace_usec = settings_.default_grace_usec;
  req.spawn.argv = std::move(argv);
  req.spawn.env = std::move(env);
  req.spawn.cwd = std::move(cwd);
  for (int i = 0; i < 3; ++i) req.spawn.stdio[i] = stdio[static_cast<std::size_t>(i)].get();
  req.controls = default_controls();
  set_launch_options(req, options);
  if (req.grace_usec == 0) req.grace_usec = settings_.default_grace_usec;
  std::string sender = current_sender();
  BusCaller caller = callers_.of(sender);
  check_caller_uid(caller.uid);
  if (req.spawn.sealed) require_sealing(run);
  req.caller_pid = caller.pid;
  // The caller's connection owns the run: if the engine dies, its runs are reaped.
  req.owner.kind = OwnerKind::Bus;
  req.owner.name = sender;
  return req;
}

void ManagerObject::set_launch_options(LaunchRequest& req, const std::map<std::string, sdbus::Variant>& options) {
  for (const auto& [key, value] : options) {
    try {
      if (run_control_option(key, value, req.controls)) {
        continue;
      } else if (key == "grace_usec") {
        req.grace_usec = value.get<uint64_t>();
        check_grace(req.grace_usec);  // 0: the default, set by launch_request
      } else if (key == "reap_on_exit") {
        req.reap_on_exit = value.get<bool>();
      } else if (key == "keep") {
        req.keep = value.get<bool>();
      } else if (key == "sealed") {
        req.spawn.sealed = value.get<bool>();
      } else {
        throw_bus_error(error::InvalidArgument, "unknown option " + quote_value(key));
      }
    } catch (const sdbus::Error& e) {
      if (e.getName().rfind(error::kPrefix, 0) == 0) throw;
      throw_bus_error(error::InvalidArgument, "option " + quote_value(key) + " has the wrong type");
    }
  }
}

void ManagerObject::GetRunPath(sdbus::Result<sdbus::ObjectPath>&& result, std::string run) try {
  AsyncReply reply(std::move(result));
  in_turn("GetRunPath", reply, [this, reply, run] {
    value_or_throw(lifecycle_.exists(run));
    reply(sdbus::ObjectPath(run_object_path(run)));
  });
} catch (...) {
  rethrow_named("GetRunPath");
}

void ManagerObject::Reconcile(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>&& result) try {
  AsyncReply reply(std::move(result));
  if (!admit(reply)) return;
  check_current_caller();
  lifecycle_.reconcile([reply](std::vector<ReconcileLine> lines) {
    std::vector<sdbus::Struct<std::string, std::string, std::string>> out;
    for (auto& l : lines) out.emplace_back(l.run, to_string(l.action), l.detail);
    reply(out);
  });
} catch (...) {
  rethrow_named("Reconcile");
}

std::string ManagerObject::Version() { return NERVE_VERSION; }

void ManagerObject::Forget(sdbus::Result<>&& result, std::string run) try {
  AsyncReply<> reply(std::move(result));
  if (!admit(reply)) return;
  check_current_caller();
  value_or_throw(lifecycle_.forget(run));
  reply();
} catch (...) {
  rethrow_named("Forget");
}

void ManagerObject::GetRun(sdbus::Result<std::string>&& result, std::string run) try {
  AsyncReply reply(std::move(result));
  in_turn("GetRun", reply, [this, reply, run] {
    lifecycle_.status_json(run, [reply](Result<std::string> status) {
      if (!status) return reply.error(status.error());
      reply(*status);
    });
  });
} catch (...) {
  rethrow_named("GetRun");
}

void ManagerObject::ListRuns(
    sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>>&& result) try {
  AsyncReply reply(std::move(result));
  in_turn("ListRuns", reply, [this, reply] {
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> out;
    for (auto& s : value_or_throw(lifecycle_.list())) out.emplace_back(s.run, s.state, s.unit, s.outcome);
    reply(out);
  });
} catch (...) {
  rethrow_named("ListRuns");
}

void ManagerObject::SetSliceProperties(sdbus::Result<>&& result, std::string slice,
                                       std::vector<sdbus::Struct<std::string, std::string>> properties) try {
  AsyncReply<> reply(std::move(result));
  if (!admit(reply)) return;
  value_or_throw(check_slice_name(slice));
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto& p : properties) pairs.emplace_back(p.get<0>(), p.get<1>());
  auto parsed = parse_property_pairs(pairs);
  if (!parsed) throw_bus_error(parsed.error().name, parsed.error().message);
  if (parsed->unit_properties.empty()) throw_bus_error(error::InvalidArgument, "no properties to set on " + quote_value(slice));
  set_slice_properties(systemd_, slice, *parsed, [reply](Result<void> set) {
    if (set) return reply();
    reply.error(set.error());
  });
} catch (...) {
  rethrow_named("SetSliceProperties");
}

bool ManagerObject::SealingAvailable() { return sealing_status().available; }
std::string ManagerObject::SealingDetail() { return sealing_status().detail; }

}  // namespace nerve
