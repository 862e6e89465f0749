#include "manager_object.h"

#include "errors.h"
#include "host.h"
#include "owners.h"
#include "run_id.h"
#include "run_objects.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nerve {

namespace {
constexpr std::uint64_t kMaxGraceUsec = 3600ull * 1'000'000;

// The catch of every handler: a named error stays as it is; any other exception (a bug, or a resource
// failure such as no fds left) becomes Error.Internal for this one call, and nerved goes on.
[[noreturn]] void rethrow_named(const char* method) {
  try {
    throw;
  } catch (const sdbus::Error&) {
    throw;
  } catch (const std::exception& e) {
    spdlog::error("{}: unexpected failure: {}", method, e.what());
    error::raise(error::Internal, std::string(method) + " failed inside nerved: " + e.what() +
                                      "; nothing more was done for this call, try again");
  }
}

void check_grace(std::uint64_t grace_usec) {
  if (grace_usec > kMaxGraceUsec)
    error::raise(error::InvalidArgument,
                 "grace " + std::to_string(grace_usec) + " us is longer than the limit of one hour");
}
}  // namespace

ManagerObject::ManagerObject(sdbus::IConnection& bus, Lifecycle& lifecycle, ProcessLauncher& launcher)
    : AdaptorInterfaces(bus, kObjectPath), lifecycle_(lifecycle), launcher_(launcher) {
  registerAdaptor();
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

void ManagerObject::Contain(sdbus::Result<std::string, std::string, std::string, uint32_t>&& result,
                            std::string run, uint64_t grace_usec, std::map<std::string, sdbus::Variant> options) try {
  require_valid_run_id(run);
  check_grace(grace_usec);
  const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage();
  pid_t pid = msg->getCredsPid();
  uid_t uid = msg->getCredsUid();
  if (pid <= 0) error::raise(error::AccessDenied, "the caller's pid is unknown; it cannot be contained");
  if (uid != ::getuid())
    error::raise(error::AccessDenied, "caller uid " + std::to_string(uid) + " is not nerved's uid " +
                                          std::to_string(::getuid()));
  ContainRequest req;
  req.run = run;
  req.owner.kind = "none";
  req.pid = pid;
  req.grace_usec = grace_usec ? grace_usec : kDefaultGraceUsec;
  for (const auto& [key, value] : options) {
    if (key == "keep") {
      try {
        req.keep = value.get<bool>();
      } catch (const sdbus::Error&) {
        error::raise(error::InvalidArgument, "option 'keep' must be a boolean");
      }
    } else if (key == "owner_bus_name") {
      std::string name;
      try {
        name = value.get<std::string>();
      } catch (const sdbus::Error&) {
        error::raise(error::InvalidArgument, "option 'owner_bus_name' must be a string");
      }
      pid_t owner_pid = name.rfind(':', 0) == 0 ? pid_of_bus_name(name) : 0;
      auto parent = proc_parent(pid);
      if (owner_pid <= 0 || !parent || owner_pid != *parent)
        error::raise(error::InvalidArgument, "owner_bus_name " + quote_value(name) +
                                                 " is not a unique bus name of the caller's parent process");
      req.owner.kind = "bus";
      req.owner.name = name;
    } else {
      error::raise(error::InvalidArgument, "unknown option " + quote_value(key));
    }
  }
  // The owner of a run started by a wrapper is the wrapper's parent: the engine that ran it.
  if (req.owner.kind != "bus") req.owner = owner_of(pid);
  auto shared = std::make_shared<sdbus::Result<std::string, std::string, std::string, uint32_t>>(std::move(result));
  lifecycle_.contain(std::move(req), [shared](std::optional<ContainReply> reply, std::optional<BusError> err) {
    if (err) return shared->returnError(sdbus::Error(err->name, err->message));
    shared->returnResults(reply->unit, reply->invocation_id, reply->cgroup, reply->attempt);
  });
} catch (...) {
  rethrow_named("Contain");
}

void ManagerObject::Reap(sdbus::Result<std::string, std::string>&& result, std::string run, uint64_t grace_usec) try {
  require_valid_run_id(run);
  require_same_uid("Reap");
  check_grace(grace_usec);
  auto shared = std::make_shared<sdbus::Result<std::string, std::string>>(std::move(result));
  lifecycle_.reap(run, grace_usec, [shared](std::optional<Receipt> receipt, std::optional<BusError> err) {
    if (err) return shared->returnError(sdbus::Error(err->name, err->message));
    shared->returnResults(to_string(receipt->outcome), to_json_text(*receipt));
  });
} catch (...) {
  rethrow_named("Reap");
}

void ManagerObject::Cancel(sdbus::Result<std::string, std::string>&& result, std::string run, int32_t signal,
                           uint64_t grace_usec) try {
  require_valid_run_id(run);
  require_same_uid("Cancel");
  check_grace(grace_usec);
  if (signal < 1 || signal > 64)
    error::raise(error::InvalidArgument, "signal " + std::to_string(signal) + " is not a signal number (1..64)");
  auto shared = std::make_shared<sdbus::Result<std::string, std::string>>(std::move(result));
  lifecycle_.cancel(run, signal, grace_usec, [shared](std::optional<Receipt> receipt, std::optional<BusError> err) {
    if (err) return shared->returnError(sdbus::Error(err->name, err->message));
    shared->returnResults(to_string(receipt->outcome), to_json_text(*receipt));
  });
} catch (...) {
  rethrow_named("Cancel");
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

void ManagerObject::Launch(sdbus::Result<sdbus::ObjectPath, uint32_t>&& result, std::string run,
                           std::vector<std::string> argv, std::vector<std::string> env, std::string cwd,
                           std::vector<sdbus::UnixFd> stdio, std::map<std::string, sdbus::Variant> options) try {
  require_valid_run_id(run);
  if (argv.empty() || argv[0].empty()) error::raise(error::InvalidArgument, "argv must name a command");
  for (const auto& e : env)
    if (e.find('=') == std::string::npos || e.front() == '=')
      error::raise(error::InvalidArgument, "environment entry " + quote_value(e) + " is not KEY=VALUE");
  if (cwd.empty() || cwd.front() != '/')
    error::raise(error::InvalidArgument, "cwd " + quote_value(cwd) + " is not an absolute path");
  if (struct stat st {}; ::stat(cwd.c_str(), &st) < 0)
    error::raise(error::InvalidArgument, "cwd " + quote_value(cwd) + " cannot be used: " + std::strerror(errno));
  else if (!S_ISDIR(st.st_mode))
    error::raise(error::InvalidArgument, "cwd " + quote_value(cwd) + " is not a folder");
  if (stdio.size() != 3)
    error::raise(error::InvalidArgument, "stdio must hold exactly 3 fds (stdin, stdout, stderr), not " +
                                             std::to_string(stdio.size()));
  LaunchRequest req;
  req.run = run;
  req.spawn.argv = std::move(argv);
  req.spawn.env = std::move(env);
  req.spawn.cwd = std::move(cwd);
  for (int i = 0; i < 3; ++i) req.spawn.stdio[i] = stdio[static_cast<std::size_t>(i)].get();
  for (const auto& [key, value] : options) {
    try {
      if (key == "grace_usec") {
        req.grace_usec = value.get<uint64_t>();
        check_grace(req.grace_usec);
        if (req.grace_usec == 0) req.grace_usec = kDefaultGraceUsec;
      } else if (key == "reap_on_exit") {
        req.reap_on_exit = value.get<bool>();
      } else if (key == "keep") {
        req.keep = value.get<bool>();
      } else {
        error::raise(error::InvalidArgument, "unknown option " + quote_value(key));
      }
    } catch (const sdbus::Error& e) {
      if (e.getName().rfind(error::kPrefix, 0) == 0) throw;
      error::raise(error::InvalidArgument, "option " + quote_value(key) + " has the wrong type");
    }
  }
  const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage();
  if (msg->getCredsUid() != ::getuid())
    error::raise(error::AccessDenied, "caller uid " + std::to_string(msg->getCredsUid()) + " is not nerved's uid");
  // The caller's connection owns the run: if the engine dies, its runs are reaped.
  req.owner.kind = "bus";
  req.owner.name = msg->getSender();
  auto shared = std::make_shared<sdbus::Result<sdbus::ObjectPath, uint32_t>>(std::move(result));
  launcher_.launch(std::move(req), [shared, run](std::optional<pid_t> pid, std::optional<BusError> err) {
    if (err) return shared->returnError(sdbus::Error(err->name, err->message));
    shared->returnResults(sdbus::ObjectPath(run_object_path(run)), static_cast<uint32_t>(*pid));
  });
} catch (...) {
  rethrow_named("Launch");
}

sdbus::ObjectPath ManagerObject::GetRunPath(const std::string& run) try {
  require_valid_run_id(run);
  std::optional<Record> rec;
  try {
    rec = lifecycle_.deps().store.load(run);
  } catch (const std::exception& e) {
    error::raise(error::RecordFailed, "the record of run " + quote_value(run) + " cannot be read: " + e.what());
  }
  if (!rec) error::raise(error::NoSuchRun, "no run " + quote_value(run));
  return sdbus::ObjectPath(run_object_path(run));
} catch (...) {
  rethrow_named("GetRunPath");
}

void ManagerObject::Reconcile(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>&& result) try {
  require_same_uid("Reconcile");
  auto shared = std::make_shared<sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>>(
      std::move(result));
  lifecycle_.reconcile([shared](std::vector<ReconcileLine> lines) {
    std::vector<sdbus::Struct<std::string, std::string, std::string>> out;
    for (auto& l : lines) out.emplace_back(l.run, l.action, l.detail);
    shared->returnResults(out);
  });
} catch (...) {
  rethrow_named("Reconcile");
}

void ManagerObject::Forget(const std::string& run) try {
  require_same_uid("Forget");
  lifecycle_.forget(run);
} catch (...) {
  rethrow_named("Forget");
}

std::string ManagerObject::GetRun(const std::string& run) try {
  return lifecycle_.status_json(run);
} catch (...) {
  rethrow_named("GetRun");
}

void ManagerObject::require_same_uid(const char* method) {
  // A per-user bus lets only this uid connect; the check is cheap and says so if that ever changes.
  uid_t uid = getObject().getCurrentlyProcessedMessage()->getCredsUid();
  if (uid != ::getuid())
    error::raise(error::AccessDenied, std::string(method) + ": caller uid " + std::to_string(uid) +
                                          " is not nerved's uid " + std::to_string(::getuid()));
}

std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> ManagerObject::ListRuns() try {
  std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> out;
  for (auto& s : lifecycle_.list()) out.emplace_back(s.run, s.state, s.unit, s.outcome);
  return out;
} catch (...) {
  rethrow_named("ListRuns");
}

std::string ManagerObject::RunsDirectory() { return lifecycle_.deps().store.path(); }
std::string ManagerObject::BootID() { return lifecycle_.deps().boot_id; }

}  // namespace nerve
