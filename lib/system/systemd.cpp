// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/systemd.h"

#include "system/event_loop.h"
#include "base/bus_label.h"
#include "base/bus_names.h"
#include "base/host.h"
#include "system/systemd_link.h"

#include <sdbus-c++/sdbus-c++.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <deque>
#include <map>

namespace nerve {

namespace {
using systemd1::kManager;
using systemd1::kPath;
using systemd1::kScope;
using systemd1::kService;
using systemd1::kUnit;
constexpr const char* kProperties = "org.freedesktop.DBus.Properties";

using Property = sdbus::Struct<std::string, sdbus::Variant>;
using AuxUnit = sdbus::Struct<std::string, std::vector<Property>>;

Error from(const sdbus::Error& e) { return {e.getName(), e.getName() + ": " + e.getMessage()}; }

Result<void> job_result(const std::string& result) {
  if (result == "done") return {};
  return Error{systemd_error::JobFailed, "its job ended with result '" + result + "'"};
}

// systemd before 255 has no PIDFDs property for scopes. With the run's own properties in the same
// call, only an error that names PIDFDs is about it.
bool pidfds_refused(const sdbus::Error& e, const ScopeSpec& spec) {
  if (e.getMessage().find("PIDFDs") != std::string::npos) return true;
  return spec.properties.empty() && (e.getName() == "org.freedesktop.DBus.Error.UnknownProperty" ||
                                     e.getName() == "org.freedesktop.DBus.Error.PropertyReadOnly");
}

sdbus::Variant to_variant(const PropertyValue& value) {
  return std::visit([](const auto& v) { return sdbus::Variant(v); }, value);
}

std::vector<Property> to_properties(const std::vector<UnitProperty>& properties) {
  std::vector<Property> props;
  for (const auto& p : properties) props.emplace_back(p.name, to_variant(p.value));
  return props;
}

std::vector<Property> scope_properties(const ScopeSpec& spec, int pidfd, int holder_pidfd) {
  std::vector<Property> props;
  props.emplace_back(std::string("Description"), sdbus::Variant(spec.description));
  if (pidfd >= 0) {
    std::vector<sdbus::UnixFd> fds;
    fds.emplace_back(pidfd, sdbus::adopt_fd);
    if (holder_pidfd >= 0) fds.emplace_back(holder_pidfd, sdbus::adopt_fd);
    props.emplace_back(std::string("PIDFDs"), sdbus::Variant(fds));
  } else {
    std::vector<uint32_t> pids{static_cast<uint32_t>(spec.pid)};
    if (spec.holder > 0) pids.push_back(static_cast<uint32_t>(spec.holder));
    props.emplace_back(std::string("PIDs"), sdbus::Variant(pids));
  }
  if (spec.holder > 0) props.emplace_back(std::string("Delegate"), sdbus::Variant(true));
  props.emplace_back(std::string("KillMode"), sdbus::Variant(std::string("control-group")));
  props.emplace_back(std::string("TimeoutStopUSec"), sdbus::Variant(spec.stop_timeout_usec));
  props.emplace_back(std::string("CollectMode"), sdbus::Variant(std::string("inactive-or-failed")));
  if (!spec.slice.empty()) props.emplace_back(std::string("Slice"), sdbus::Variant(spec.slice));
  if (spec.runtime_max_usec) props.emplace_back(std::string("RuntimeMaxUSec"), sdbus::Variant(spec.runtime_max_usec));
  for (auto& p : to_properties(spec.properties)) props.push_back(std::move(p));
  return props;
}

// The answers of one lookup's pipelined property Gets, put together once the last has come.
struct Gather {
  std::size_t pending = 0;
  std::string load_state;
  UnitState unit;
  std::optional<Error> error;
  Done<UnitState> done;

  void got_error(const sdbus::Error& e) {
    if (!error) error = from(e);
  }
  void finish() {
    // A unit that is not loaded comes back as a stub with LoadState "not-found": no unit.
    if (load_state == "not-found" || (error && error->name == systemd_error::NoSuchUnit))
      return done(Error{systemd_error::NoSuchUnit, "unit not found"});
    if (error) return done(*error);
    done(std::move(unit));
  }
};
}  // namespace

std::string unit_object_path(const std::string& unit) {
  return std::string(kPath) + "/unit/" + (unit.empty() ? "_" : bus_path_label(unit, LeadingDigit::Escaped));
}

struct SdbusSystemd::Impl {
  Timers& timers;
  SystemdOptions options;
  SystemdLink link;
  // Jobs we wait for, by object path; and JobRemoved results that arrived before we knew the path
  // (kept briefly, in arrival order, so a reply processed after its signal still finds its result).
  struct Waiting {
    Done<void> done;
    TimerId deadline = 0;
  };
  std::map<std::string, Waiting> waiting;
  std::map<std::string, std::string> early;
  std::deque<std::string> early_order;
  bool pidfds_unsupported = false;

  Impl(sdbus::IConnection& b, EventLoop& loop, SystemdOptions o)
      : timers(loop),
        options(o),
        link(b, loop, o.bus, o.private_socket, o.call_timeout,
             [this](const std::string& job, const std::string& result) { on_job_removed(job, result); }) {}

  sdbus::IProxy& manager() { return link.manager(); }

  // Sends what 'send' sends with the link to the manager held until 'done' has run (a call in flight
  // or a job awaited keeps it up); the link's or the send's failure goes to 'done', once.
  template <typename T>
  void with_link(Done<T> done, const std::function<void(Done<T>)>& send) {
    std::shared_ptr<void> token;
    try {
      token = link.hold();
    } catch (const sdbus::Error& e) {
      return done(from(e));
    }
    auto once = std::make_shared<bool>(false);
    Done<T> held = [token, once, done](Result<T> r) mutable {
      if (std::exchange(*once, true)) return;
      auto keep = std::move(token);
      done(std::move(r));
    };
    try {
      send(held);
    } catch (const sdbus::Error& e) {
      held(from(e));
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
    auto done = std::move(it->second.done);
    if (it->second.deadline) timers.cancel_timer(it->second.deadline);
    waiting.erase(it);
    done(job_result(result));
  }

  // Completes when the job's JobRemoved arrives (or has arrived), or with JobTimeout after 'deadline'.
  void await_job(const std::string& job, Done<void> done, std::optional<std::chrono::milliseconds> deadline) {
    if (auto it = early.find(job); it != early.end()) {
      std::string result = it->second;
      early.erase(it);
      return done(job_result(result));
    }
    TimerId timer = 0;
    if (deadline)
      timer = timers.add_timer(*deadline, [this, job, ms = deadline->count()] {
        auto it = waiting.find(job);
        if (it == waiting.end()) return;
        auto late = std::move(it->second.done);
        waiting.erase(it);
        late(Error{systemd_error::JobTimeout, "job " + job + " did not end within " + std::to_string(ms) + " ms"});
      });
    waiting[job] = Waiting{std::move(done), timer};
  }

  // Calls 'method' (which starts a job) and completes when the job is removed.
  template <typename... Args>
  void call_job(const char* method, std::optional<std::chrono::milliseconds> deadline,
                std::function<bool(const sdbus::Error&)> retry, Done<void> done, Args... args) {
    with_link<void>(std::move(done), [=, this](Done<void> held) {
      send_job(method, deadline, retry, std::move(held), args...);
    });
  }

  template <typename... Args>
  void send_job(const char* method, std::optional<std::chrono::milliseconds> deadline,
                std::function<bool(const sdbus::Error&)> retry, Done<void> done, Args... args) {
    manager().callMethodAsync(method)
        .onInterface(kManager)
        .withArguments(args...)
        .withTimeout(kSystemdJobCallTimeout)
        .uponReplyInvoke([this, deadline, retry, done](const sdbus::Error* err, sdbus::ObjectPath job) {
          if (!err) return await_job(job, done, deadline);
          if (retry && retry(*err)) return;
          done(from(*err));
        });
  }

  void start(const ScopeSpec& spec, bool use_pidfd, Done<void> done) {
    int pidfd = use_pidfd ? static_cast<int>(::syscall(SYS_pidfd_open, spec.pid, 0)) : -1;
    int holder_pidfd = pidfd >= 0 && spec.holder > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, spec.holder, 0)) : -1;
    if (pidfd >= 0 && spec.holder > 0 && holder_pidfd < 0) pidfd = (::close(pidfd), -1);  // both by pidfd, or by pid
    bool sent_pidfd = pidfd >= 0;
    auto retry = [this, spec, sent_pidfd, done](const sdbus::Error& e) {
      // systemd before 255 has no PIDFDs: fall back to PIDs, as systemd-run does.
      if (!sent_pidfd || !pidfds_refused(e, spec)) return false;
      pidfds_unsupported = true;
      start(spec, false, done);
      return true;
    };
    call_job("StartTransientUnit", options.start_job_timeout, retry, std::move(done), spec.unit, std::string("fail"),
             scope_properties(spec, pidfd, holder_pidfd), std::vector<AuxUnit>{});
  }

  // The per-unit proxies of lookups in flight, each destroyed on a later turn of the loop (never in its reply handler).
  std::map<std::uint64_t, std::unique_ptr<sdbus::IProxy>> unit_proxies;
  std::uint64_t next_lookup = 1;

  void lookup(const std::string& unit, Done<UnitState> done);
  void call(const char* method, Done<void> done, const std::function<void(sdbus::MethodCall&)>& args);
  void get(sdbus::IProxy& proxy, const char* iface, const char* name, const std::shared_ptr<Gather>& g,
           std::function<void(Gather&, const sdbus::Variant&)> store);
};

void SdbusSystemd::Impl::get(sdbus::IProxy& proxy, const char* iface, const char* name,
                             const std::shared_ptr<Gather>& g, std::function<void(Gather&, const sdbus::Variant&)> store) {
  ++g->pending;
  proxy.callMethodAsync("Get")
      .onInterface(kProperties)
      .withArguments(std::string(iface), std::string(name))
      .withTimeout(options.call_timeout)
      .uponReplyInvoke([g, store](const sdbus::Error* err, sdbus::Variant v) {
        if (err) {
          g->got_error(*err);
        } else {
          try {
            store(*g, v);
          } catch (const sdbus::Error& e) {
            g->got_error(e);
          }
        }
        if (--g->pending == 0) g->finish();
      });
}

void SdbusSystemd::Impl::lookup(const std::string& unit, Done<UnitState> done) {
  // Pipelined Gets on the unit's object: one round trip. Asking for a unit that is not loaded loads a
  // "not-found" stub, which LoadState tells apart. LoadState is asked last: the manager answers in
  // order, so a unit collected between two of these Gets is a stub by the last one, and the whole
  // answer is "no such unit" rather than a mix of the unit and its stub.
  std::uint64_t id = next_lookup++;
  auto g = std::make_shared<Gather>();
  g->done = [this, id, done = std::move(done)](Result<UnitState> r) {
    if (auto node = unit_proxies.extract(id))
      timers.add_timer(Clock::duration::zero(), [p = std::shared_ptr<sdbus::IProxy>(std::move(node.mapped()))] {});
    done(std::move(r));
  };
  auto proxy_of = sdbus::createProxy(link.connection(), kService, unit_object_path(unit));
  auto& proxy = *unit_proxies.emplace(id, std::move(proxy_of)).first->second;
  get(proxy, kUnit, "InvocationID", g, [](Gather& g, const sdbus::Variant& v) {
    auto bytes = v.get<std::vector<uint8_t>>();
    bool zero = true;
    for (auto b : bytes) zero = zero && b == 0;
    if (!zero) g.unit.invocation_id = hex(bytes.data(), bytes.size());
  });
  get(proxy, kUnit, "ActiveState", g, [](Gather& g, const sdbus::Variant& v) { g.unit.active_state = v.get<std::string>(); });
  get(proxy, kUnit, "Description", g, [](Gather& g, const sdbus::Variant& v) { g.unit.description = v.get<std::string>(); });
  if (unit.ends_with(".scope"))
    get(proxy, kScope, "ControlGroup", g, [](Gather& g, const sdbus::Variant& v) { g.unit.control_group = v.get<std::string>(); });
  get(proxy, kUnit, "LoadState", g, [](Gather& g, const sdbus::Variant& v) { g.load_state = v.get<std::string>(); });
}

// A manager method whose answer has no value worth keeping: done({}) or its error.
void SdbusSystemd::Impl::call(const char* method, Done<void> done, const std::function<void(sdbus::MethodCall&)>& args) {
  with_link<void>(std::move(done), [this, method, &args](Done<void> held) {
    auto call = manager().createMethodCall(kManager, method);
    args(call);
    manager().callMethod(call, [held](sdbus::MethodReply&, const sdbus::Error* err) {
      if (err) return held(from(*err));
      held({});
    }, std::chrono::duration_cast<std::chrono::microseconds>(options.call_timeout).count());
  });
}

SdbusSystemd::SdbusSystemd(sdbus::IConnection& bus, EventLoop& loop, SystemdOptions options)
    : impl_(std::make_unique<Impl>(bus, loop, options)) {}
SdbusSystemd::~SdbusSystemd() = default;

void SdbusSystemd::version(Done<std::string> done) {
  impl_->with_link<std::string>(std::move(done), [this](Done<std::string> held) {
    impl_->manager()
        .callMethodAsync("Get")
        .onInterface(kProperties)
        .withArguments(std::string(kManager), std::string("Version"))
        .withTimeout(impl_->options.call_timeout)
        .uponReplyInvoke([held](const sdbus::Error* err, sdbus::Variant v) {
          if (err) return held(from(*err));
          try {
            held(v.get<std::string>());
          } catch (const sdbus::Error& e) {
            held(from(e));
          }
        });
  });
}

void SdbusSystemd::lookup(const std::string& unit, Done<UnitState> done) {
  impl_->with_link<UnitState>(std::move(done), [this, unit](Done<UnitState> held) { impl_->lookup(unit, std::move(held)); });
}

void SdbusSystemd::list_scopes(const std::string& pattern, Done<std::vector<std::string>> done) {
  using UnitRow = sdbus::Struct<std::string, std::string, std::string, std::string, std::string, std::string,
                                sdbus::ObjectPath, uint32_t, std::string, sdbus::ObjectPath>;
  impl_->with_link<std::vector<std::string>>(std::move(done), [this, pattern](Done<std::vector<std::string>> held) {
    impl_->manager()
        .callMethodAsync("ListUnitsByPatterns")
        .onInterface(kManager)
        .withArguments(std::vector<std::string>{}, std::vector<std::string>{pattern})
        .withTimeout(impl_->options.call_timeout)
        .uponReplyInvoke([held](const sdbus::Error* err, std::vector<UnitRow> rows) {
          if (err) return held(from(*err));
          std::vector<std::string> units;
          for (auto& r : rows) units.push_back(r.get<0>());
          held(std::move(units));
        });
  });
}

void SdbusSystemd::start_scope(const ScopeSpec& spec, Done<void> done) {
  impl_->start(spec, !impl_->pidfds_unsupported, std::move(done));
}

void SdbusSystemd::stop_unit(const std::string& unit, Done<void> done) {
  impl_->call_job("StopUnit", std::nullopt, nullptr, std::move(done), unit, std::string("replace"));
}

void SdbusSystemd::kill_unit(const std::string& unit, int signo, Done<void> done) {
  impl_->call("KillUnit", std::move(done), [&](sdbus::MethodCall& m) { m << unit << std::string("all") << int32_t{signo}; });
}

void SdbusSystemd::set_unit_properties(const std::string& unit, const std::vector<UnitProperty>& properties,
                                       Done<void> done) {
  impl_->call("SetUnitProperties", std::move(done),
              [&](sdbus::MethodCall& m) { m << unit << false << to_properties(properties); });
}

void SdbusSystemd::freezer(const std::string& unit, bool freeze, Done<void> done) {
  impl_->call(freeze ? "FreezeUnit" : "ThawUnit", std::move(done), [&](sdbus::MethodCall& m) { m << unit; });
}

namespace {
// A value of one of the types a UnitProperty has, or nullopt for any other type.
std::optional<PropertyValue> property_value(const sdbus::Variant& v) {
  std::string type = v.peekValueType();
  if (type == "t") return PropertyValue(v.get<std::uint64_t>());
  if (type == "u") return PropertyValue(v.get<std::uint32_t>());
  if (type == "ay") return PropertyValue(v.get<std::vector<std::uint8_t>>());
  return std::nullopt;
}
}  // namespace

void SdbusSystemd::read_properties(const std::string& unit, const std::string& interface,
                                   Done<std::map<std::string, PropertyValue>> done) {
  using Values = std::map<std::string, PropertyValue>;
  impl_->with_link<Values>(std::move(done), [impl = impl_.get(), unit, interface](Done<Values> held) {
    std::uint64_t id = impl->next_lookup++;
    auto& proxy =
        *impl->unit_proxies.emplace(id, sdbus::createProxy(impl->link.connection(), kService, unit_object_path(unit)))
             .first->second;
    proxy.callMethodAsync("GetAll")
        .onInterface(kProperties)
        .withArguments(interface)
        .withTimeout(impl->options.call_timeout)
        .uponReplyInvoke([impl, id, held](const sdbus::Error* err, std::map<std::string, sdbus::Variant> all) {
          // The proxy goes on a later turn of the loop, never inside its own reply handler.
          auto node = impl->unit_proxies.extract(id);
          impl->timers.add_timer(Clock::duration::zero(),
                                 [p = std::shared_ptr<sdbus::IProxy>(std::move(node.mapped()))] {});
          if (err) return held(from(*err));
          Values values;
          for (const auto& [name, v] : all)
            if (auto value = property_value(v)) values.emplace(name, std::move(*value));
          held(std::move(values));
        });
  });
}

}  // namespace nerve
