#include "systemd.h"

#include "host.h"

#include <sdbus-c++/sdbus-c++.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <map>

namespace nerve {

namespace {
constexpr const char* kService = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnit = "org.freedesktop.systemd1.Unit";
constexpr const char* kScope = "org.freedesktop.systemd1.Scope";
constexpr const char* kNoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit";
constexpr auto kQueryTimeout = std::chrono::seconds(5);
constexpr auto kJobCallTimeout = std::chrono::seconds(10);

using Property = sdbus::Struct<std::string, sdbus::Variant>;
using AuxUnit = sdbus::Struct<std::string, std::vector<Property>>;

std::string describe(const sdbus::Error& e) { return e.getName() + ": " + e.getMessage(); }
}  // namespace

struct SdbusSystemd::Impl {
  sdbus::IConnection& bus;
  std::unique_ptr<sdbus::IProxy> manager;
  // Jobs we wait for, by object path; and JobRemoved results that arrived before we knew the path
  // (kept briefly, in arrival order, so a reply processed after its signal still finds its result).
  std::map<std::string, std::function<void(JobOutcome)>> waiting;
  std::map<std::string, std::string> early;
  std::deque<std::string> early_order;
  bool pidfds_unsupported = false;

  explicit Impl(sdbus::IConnection& b) : bus(b), manager(sdbus::createProxy(b, kService, kPath)) {
    manager->uponSignal("JobRemoved")
        .onInterface(kManager)
        .call([this](uint32_t, const sdbus::ObjectPath& job, const std::string&, const std::string& result) {
          on_job_removed(job, result);
        });
    manager->finishRegistration();
  }

  void subscribe() {
    // Without Subscribe the manager does not send JobRemoved to us. Asked before every job, so a
    // restarted manager still reports to us; AlreadySubscribed is the usual answer, and fine.
    try {
      manager->callMethod("Subscribe").onInterface(kManager).withTimeout(kQueryTimeout);
    } catch (const sdbus::Error& e) {
      if (e.getName() != "org.freedesktop.systemd1.AlreadySubscribed") throw;
    }
  }

  void on_job_removed(const std::string& job, const std::string& result) {
    auto it = waiting.find(job);
    if (it == waiting.end()) {
      early[job] = result;
      early_order.push_back(job);
      while (early_order.size() > 512) {
        early.erase(early_order.front());
        early_order.pop_front();
      }
      return;
    }
    auto done = std::move(it->second);
    waiting.erase(it);
    done(JobOutcome{result == "done", result, "", false});
  }

  void await_job(const std::string& job, std::function<void(JobOutcome)> done) {
    if (auto it = early.find(job); it != early.end()) {
      std::string result = it->second;
      early.erase(it);
      done(JobOutcome{result == "done", result, "", false});
      return;
    }
    waiting[job] = std::move(done);
  }

  void start(const ScopeSpec& spec, bool use_pidfd, std::function<void(JobOutcome)> done) {
    std::vector<Property> props;
    props.emplace_back(std::string("Description"), sdbus::Variant(spec.description));
    int pidfd = -1;
    if (use_pidfd) pidfd = static_cast<int>(::syscall(SYS_pidfd_open, spec.pid, 0));
    if (pidfd >= 0) {
      std::vector<sdbus::UnixFd> fds;
      fds.emplace_back(pidfd, sdbus::adopt_fd);
      props.emplace_back(std::string("PIDFDs"), sdbus::Variant(fds));
    } else {
      props.emplace_back(std::string("PIDs"), sdbus::Variant(std::vector<uint32_t>{static_cast<uint32_t>(spec.pid)}));
    }
    props.emplace_back(std::string("KillMode"), sdbus::Variant(std::string("control-group")));
    props.emplace_back(std::string("TimeoutStopUSec"), sdbus::Variant(spec.stop_timeout_usec));
    props.emplace_back(std::string("CollectMode"), sdbus::Variant(std::string("inactive-or-failed")));
    std::vector<AuxUnit> aux;
    bool sent_pidfd = pidfd >= 0;
    try {
      subscribe();
    } catch (const sdbus::Error& e) {
      done(JobOutcome{false, "", describe(e), false});
      return;
    }
    manager->callMethodAsync("StartTransientUnit")
        .onInterface(kManager)
        .withArguments(spec.unit, std::string("fail"), props, aux)
        .withTimeout(kJobCallTimeout)
        .uponReplyInvoke([this, spec, sent_pidfd, done](const sdbus::Error* err, sdbus::ObjectPath job) {
          if (err) {
            // systemd before 255 has no PIDFDs: fall back to PIDs, as systemd-run does.
            if (sent_pidfd && (err->getName() == "org.freedesktop.DBus.Error.UnknownProperty" ||
                               err->getName() == "org.freedesktop.DBus.Error.PropertyReadOnly" ||
                               err->getMessage().find("PIDFDs") != std::string::npos)) {
              pidfds_unsupported = true;
              start(spec, false, done);
              return;
            }
            done(JobOutcome{false, "", describe(*err), err->getName() == kNoSuchUnit});
            return;
          }
          await_job(job, done);
        });
  }
};

SdbusSystemd::SdbusSystemd(sdbus::IConnection& bus) : impl_(std::make_unique<Impl>(bus)) {}
SdbusSystemd::~SdbusSystemd() = default;

std::string SdbusSystemd::version(std::string* error) {
  try {
    sdbus::Variant v;
    impl_->manager->callMethod("Get")
        .onInterface("org.freedesktop.DBus.Properties")
        .withArguments(std::string(kManager), std::string("Version"))
        .withTimeout(kQueryTimeout)
        .storeResultsTo(v);
    return v.get<std::string>();
  } catch (const sdbus::Error& e) {
    if (error) *error = describe(e);
    return "";
  }
}

Lookup SdbusSystemd::lookup(const std::string& unit) {
  Lookup out;
  try {
    sdbus::ObjectPath path;
    impl_->manager->callMethod("GetUnit").onInterface(kManager).withArguments(unit).withTimeout(kQueryTimeout).storeResultsTo(path);
    auto proxy = sdbus::createProxy(impl_->bus, kService, path);
    std::map<std::string, sdbus::Variant> props;
    proxy->callMethod("GetAll").onInterface("org.freedesktop.DBus.Properties").withArguments(std::string(kUnit)).withTimeout(kQueryTimeout).storeResultsTo(props);
    if (auto it = props.find("InvocationID"); it != props.end()) {
      auto bytes = it->second.get<std::vector<uint8_t>>();
      bool zero = true;
      for (auto b : bytes) zero = zero && b == 0;
      if (!zero) out.unit.invocation_id = hex(bytes.data(), bytes.size());
    }
    if (auto it = props.find("ActiveState"); it != props.end()) out.unit.active_state = it->second.get<std::string>();
    if (auto it = props.find("Description"); it != props.end()) out.unit.description = it->second.get<std::string>();
    // GetUnit and GetAll are two calls: a scope collected in between is loaded again by GetAll as a
    // stub with LoadState "not-found". That is no unit, not another unit with the name.
    if (auto it = props.find("LoadState"); it != props.end() && it->second.get<std::string>() == "not-found") {
      out.status = LookupStatus::NoSuchUnit;
      out.unit = UnitState{};
      return out;
    }
    if (unit.size() > 6 && unit.compare(unit.size() - 6, 6, ".scope") == 0) {
      sdbus::Variant cg;
      proxy->callMethod("Get").onInterface("org.freedesktop.DBus.Properties").withArguments(std::string(kScope), std::string("ControlGroup")).withTimeout(kQueryTimeout).storeResultsTo(cg);
      out.unit.control_group = cg.get<std::string>();
    }
    out.status = LookupStatus::Found;
  } catch (const sdbus::Error& e) {
    if (e.getName() == kNoSuchUnit) {
      out.status = LookupStatus::NoSuchUnit;
    } else {
      out.status = LookupStatus::Failed;
      out.error = describe(e);
    }
  }
  return out;
}

bool SdbusSystemd::list_scopes(const std::string& pattern, std::vector<std::string>* units, std::string* error) {
  try {
    using UnitRow = sdbus::Struct<std::string, std::string, std::string, std::string, std::string, std::string,
                                  sdbus::ObjectPath, uint32_t, std::string, sdbus::ObjectPath>;
    std::vector<UnitRow> rows;
    impl_->manager->callMethod("ListUnitsByPatterns")
        .onInterface(kManager)
        .withArguments(std::vector<std::string>{}, std::vector<std::string>{pattern})
        .withTimeout(kQueryTimeout)
        .storeResultsTo(rows);
    for (auto& r : rows) units->push_back(r.get<0>());
    return true;
  } catch (const sdbus::Error& e) {
    if (error) *error = describe(e);
    return false;
  }
}

void SdbusSystemd::start_scope(const ScopeSpec& spec, std::function<void(JobOutcome)> done) {
  impl_->start(spec, !impl_->pidfds_unsupported, std::move(done));
}

void SdbusSystemd::stop_unit(const std::string& unit, std::function<void(JobOutcome)> done) {
  try {
    impl_->subscribe();
  } catch (const sdbus::Error& e) {
    done(JobOutcome{false, "", describe(e), false});
    return;
  }
  impl_->manager->callMethodAsync("StopUnit")
      .onInterface(kManager)
      .withArguments(unit, std::string("replace"))
      .withTimeout(kJobCallTimeout)
      .uponReplyInvoke([this, done](const sdbus::Error* err, sdbus::ObjectPath job) {
        if (err) {
          done(JobOutcome{false, "", describe(*err), err->getName() == kNoSuchUnit});
          return;
        }
        impl_->await_job(job, done);
      });
}

std::string SdbusSystemd::kill_unit(const std::string& unit, int signo) {
  try {
    impl_->manager->callMethod("KillUnit").onInterface(kManager).withArguments(unit, std::string("all"), int32_t{signo}).withTimeout(kQueryTimeout);
    return "";
  } catch (const sdbus::Error& e) {
    return describe(e);
  }
}

}  // namespace nerve
