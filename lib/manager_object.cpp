#include "manager_object.h"

#include "errors.h"
#include "owners.h"
#include "run_id.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

namespace nerve {

namespace {
constexpr std::uint64_t kMaxGraceUsec = 3600ull * 1'000'000;

void check_grace(std::uint64_t grace_usec) {
  if (grace_usec > kMaxGraceUsec)
    error::raise(error::InvalidArgument,
                 "grace " + std::to_string(grace_usec) + " us is longer than the limit of one hour");
}
}  // namespace

ManagerObject::ManagerObject(sdbus::IConnection& bus, Lifecycle& lifecycle)
    : AdaptorInterfaces(bus, kObjectPath), lifecycle_(lifecycle) {
  registerAdaptor();
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

void ManagerObject::Contain(sdbus::Result<std::string, std::string, std::string, uint32_t>&& result,
                            std::string run, uint64_t grace_usec, std::map<std::string, sdbus::Variant> options) {
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
  req.pid = pid;
  req.grace_usec = grace_usec ? grace_usec : kDefaultGraceUsec;
  for (const auto& [key, value] : options) {
    if (key == "keep") {
      try {
        req.keep = value.get<bool>();
      } catch (const sdbus::Error&) {
        error::raise(error::InvalidArgument, "option 'keep' must be a boolean");
      }
    } else {
      error::raise(error::InvalidArgument, "unknown option " + quote_value(key));
    }
  }
  // The owner of a run started by a wrapper is the wrapper's parent: the engine that ran it.
  req.owner = owner_of(pid);
  auto shared = std::make_shared<sdbus::Result<std::string, std::string, std::string, uint32_t>>(std::move(result));
  lifecycle_.contain(std::move(req), [shared](std::optional<ContainReply> reply, std::optional<BusError> err) {
    if (err) return shared->returnError(sdbus::Error(err->name, err->message));
    shared->returnResults(reply->unit, reply->invocation_id, reply->cgroup, reply->attempt);
  });
}

void ManagerObject::Reap(sdbus::Result<std::string, std::string>&& result, std::string run, uint64_t grace_usec) {
  require_valid_run_id(run);
  check_grace(grace_usec);
  auto shared = std::make_shared<sdbus::Result<std::string, std::string>>(std::move(result));
  lifecycle_.reap(run, grace_usec, [shared](std::optional<Receipt> receipt, std::optional<BusError> err) {
    if (err) return shared->returnError(sdbus::Error(err->name, err->message));
    shared->returnResults(to_string(receipt->outcome), to_json_text(*receipt));
  });
}

void ManagerObject::Reconcile(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>&& result) {
  auto shared = std::make_shared<sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>>(
      std::move(result));
  lifecycle_.reconcile([shared](std::vector<ReconcileLine> lines) {
    std::vector<sdbus::Struct<std::string, std::string, std::string>> out;
    for (auto& l : lines) out.emplace_back(l.run, l.action, l.detail);
    shared->returnResults(out);
  });
}

void ManagerObject::Forget(const std::string& run) { lifecycle_.forget(run); }

std::string ManagerObject::GetRun(const std::string& run) { return lifecycle_.status_json(run); }

std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> ManagerObject::ListRuns() {
  std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> out;
  for (auto& s : lifecycle_.list()) out.emplace_back(s.run, s.state, s.unit, s.outcome);
  return out;
}

std::string ManagerObject::RunsDirectory() { return lifecycle_.deps().store.path(); }
std::string ManagerObject::BootID() { return lifecycle_.deps().boot_id; }

}  // namespace nerve
