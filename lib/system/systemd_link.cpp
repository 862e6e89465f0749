// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/systemd_link.h"

#include "base/bus_names.h"
#include "system/sdbus_compat.h"

#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-bus.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace nerve {

namespace {
using systemd1::kManager;
using systemd1::kPath;
using systemd1::kService;
const std::string kJobRemovedRule = std::string("type='signal',sender='") + kService + "',path='" + kPath +
                                    "',interface='" + kManager + "',member='JobRemoved'";

// A D-Bus address value: every byte but [A-Za-z0-9_/.-] as %XX.
std::string address_escape(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '_' || c == '/' || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// Not a bus: sdbus-c++ 1.2 needs a workaround for that (sdbus_compat.h).
std::unique_ptr<sdbus::IConnection> connect_direct(const std::string& socket) {
  return create_direct_connection("unix:path=" + address_escape(socket));
}
}  // namespace

SystemdBus parse_systemd_bus(const std::string& text) {
  return from_string<SystemdBus>(text).value_or(SystemdBus::Auto);
}

std::string default_private_socket() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  return runtime && *runtime ? std::string(runtime) + "/systemd/private" : "";
}

struct SystemdLink::Impl : std::enable_shared_from_this<Impl> {
  sdbus::IConnection& session;
  EventLoop& loop;
  SystemdBus mode;
  std::string socket;
  std::chrono::milliseconds call_timeout;
  JobRemoved on_job_removed;
  std::unique_ptr<sdbus::IProxy> session_manager;
  std::unique_ptr<sd_bus, sd_bus* (*)(sd_bus*)> session_bus{nullptr, &::sd_bus_unref};  // for its match
  // While up: the JobRemoved match, and on the private socket its connection and manager object.
  bool up = false;
  bool via_private = false;
  bool private_checked = false;  // the private socket answered once: a later failure is not a refusal
  std::unique_ptr<sdbus::IConnection> direct;
  std::unique_ptr<sdbus::IProxy> direct_manager;
  std::shared_ptr<void> job_match;
  std::size_t holds = 0;
  TimerId linger = 0;

  Impl(sdbus::IConnection& s, EventLoop& l, SystemdBus m, std::string path, std::chrono::milliseconds timeout,
       JobRemoved on_removed)
      : session(s), loop(l), mode(m), socket(std::move(path)), call_timeout(timeout), on_job_removed(std::move(on_removed)),
        session_manager(sdbus::createProxy(s, kService, kPath)) {
    if (mode != SystemdBus::Session && socket.empty()) {
      if (mode == SystemdBus::Private) throw std::runtime_error("--systemd-bus=private: XDG_RUNTIME_DIR is not set");
      fall_back("is unknown (XDG_RUNTIME_DIR is not set)");
    }
  }

  std::string describe() const { return mode == SystemdBus::Session ? "the session bus" : "its private socket " + socket; }

  void fall_back(const std::string& why) {
    spdlog::warn("systemd user manager: its private socket {} {}; using the session bus", socket, why);
    mode = SystemdBus::Session;
  }

  // On the private connection: a match of sd-bus alone (no bus, no AddMatch).
  std::shared_ptr<void> match_job_removed(sdbus::IConnection& bus) {
    return bus.addMatch(kJobRemovedRule, [weak = weak_from_this()](sdbus::Message& m) {
      auto self = weak.lock();
      if (!self) return;
      uint32_t id = 0;
      sdbus::ObjectPath job;
      std::string unit, result;
      m >> id >> job >> unit >> result;
      self->on_job_removed(job, result);
    });
  }

  // On the session bus, added without waiting for dbus-daemon. Refused (dbus-daemon's limit of match
  // rules), it is logged and the link goes down, so that the next call brings it up with a new one.
  std::shared_ptr<void> match_job_removed_on_session() {
    if (!session_bus) session_bus.reset(sd_bus_of(session));
    auto on_message = [weak = weak_from_this()](sd_bus_message* m) {
      auto self = weak.lock();
      uint32_t id = 0;
      const char *job = nullptr, *unit = nullptr, *result = nullptr;
      if (!self || ::sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) < 0) return;
      self->on_job_removed(job, result);
    };
    auto on_installed = [weak = weak_from_this()](const sd_bus_error* e) {
      auto self = weak.lock();
      if (!e || !self) return;
      spdlog::error("systemd user manager: the session bus refused the JobRemoved match: {}", e->message ? e->message : e->name);
      self->loop.add_timer(Clock::duration::zero(), [weak] {  // not inside the match's own callback
        if (auto s = weak.lock(); s && s->up && !s->via_private) s->go_down();
      });
    };
    return add_match_async(session_bus.get(), kJobRemovedRule, on_message, on_installed);
  }

  void bring_up() {
    if (mode != SystemdBus::Session) {
      try {
        return open_private();
      } catch (const sdbus::Error& e) {
        close_private();
        if (mode == SystemdBus::Private) throw;
        fall_back("cannot be used (" + e.getMessage() + ")");
      }
    }
    // The manager sends JobRemoved on the session bus only to subscribers, and dbus-daemon passes it
    // on only to a match. A restarted manager forgets its subscribers: each time the link comes up,
    // Subscribe again. The AddMatch does not wait (sdbus_compat.h): it goes before any call that
    // starts a job on this same connection, so dbus-daemon has the match in place before the manager
    // even gets that call.
    job_match = match_job_removed_on_session();
    session_manager->callMethodAsync("Subscribe").onInterface(kManager).withTimeout(call_timeout).uponReplyInvoke(
        [](const sdbus::Error*) {});
    up = true;
    via_private = false;
  }

  void open_private() {
    direct = connect_direct(socket);
    direct_manager = sdbus::createProxy(*direct, kService, kPath);
    if (!private_checked) check_private();
    // A private connection gets every signal of the manager unasked (no Subscribe); the match only
    // picks JobRemoved out of them.
    job_match = match_job_removed(*direct);
    loop.attach_bus(*direct, [weak = weak_from_this(), failed = direct.get()] {
      if (auto self = weak.lock()) self->loop.add_timer(Clock::duration::zero(), [weak, failed] {
          if (auto s = weak.lock()) s->private_failed(failed);
        });
    });
    up = true;
    via_private = true;
  }

  // Does the manager take this connection (it refuses another user's)? A refusal shows only at the
  // first answer: ask for one, without waiting for it. Until it comes, a failure of the connection is
  // a refusal (auto: the session bus from then on); afterwards it is a broken connection (the next
  // call opens a new one).
  void check_private() {
    direct_manager->callMethodAsync("Get")
        .onInterface("org.freedesktop.DBus.Properties")
        .withArguments(std::string(kManager), std::string("Version"))
        .withTimeout(call_timeout)
        .uponReplyInvoke([weak = weak_from_this()](const sdbus::Error* err, sdbus::Variant) {
          auto self = weak.lock();
          if (!self || err || self->private_checked) return;
          self->private_checked = true;
          spdlog::info("systemd user manager: through its private socket {}", self->socket);
        });
  }

  // Only the connection that failed goes, if it is still the one in use.
  void private_failed(const sdbus::IConnection* failed) {
    if (!up || !via_private || direct.get() != failed) return;
    if (!private_checked && mode == SystemdBus::Auto) fall_back("refused the connection");
    go_down();
  }

  void close_private() {
    job_match.reset();
    if (direct) loop.detach_bus(*direct);
    direct_manager.reset();
    direct.reset();
  }

  void go_down() {
    if (!up) return;
    up = false;
    if (via_private) return close_private();
    job_match.reset();  // RemoveMatch
    session_manager->callMethodAsync("Unsubscribe").onInterface(kManager).withTimeout(call_timeout).uponReplyInvoke(
        [](const sdbus::Error*) {});
  }

  void release() {
    if (--holds > 0) return;
    linger = loop.add_timer(kLinger, [weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self) return;
      self->linger = 0;
      if (self->holds == 0) self->go_down();
    });
  }

  std::shared_ptr<void> hold() {
    if (!up) bring_up();
    if (linger) loop.cancel_timer(std::exchange(linger, 0));
    ++holds;
    return std::shared_ptr<void>(nullptr, [weak = weak_from_this()](void*) {
      if (auto self = weak.lock()) self->release();
    });
  }
};

SystemdLink::SystemdLink(sdbus::IConnection& session, EventLoop& loop, SystemdBus mode, std::string private_socket,
                         std::chrono::milliseconds call_timeout, JobRemoved on_job_removed)
    : impl_(std::make_shared<Impl>(session, loop, mode, std::move(private_socket), call_timeout,
                                   std::move(on_job_removed))) {
  if (impl_->mode == SystemdBus::Session) spdlog::info("systemd user manager: through the session bus");
}

SystemdLink::~SystemdLink() = default;

std::shared_ptr<void> SystemdLink::hold() { return impl_->hold(); }

sdbus::IProxy& SystemdLink::manager() { return impl_->via_private ? *impl_->direct_manager : *impl_->session_manager; }

sdbus::IConnection& SystemdLink::connection() { return impl_->via_private ? *impl_->direct : impl_->session; }

std::string SystemdLink::describe() const { return impl_->describe(); }

}  // namespace nerve
