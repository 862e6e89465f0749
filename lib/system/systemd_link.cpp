#include "system/systemd_link.h"

#include <dlfcn.h>
#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

struct sd_bus;

namespace {
thread_local bool g_direct_connection = false;
}  // namespace

// sdbus-c++ 1.2 (Debian 12) has no direct, peer-to-peer connection (createDirectBusConnection came in
// 1.4): createSessionBusConnectionWithAddress always makes a bus client, which sends Hello first, and
// the manager's private socket is no bus: it answers Hello with UnknownObject and the connection fails
// ("Failed to flush bus on opening", EBADR). So while SystemdLink opens that one connection, the call
// by which sdbus-c++ makes it a bus client makes it a plain peer connection instead, as systemctl's
// own is. Every other connection is left as sdbus-c++ makes it.
extern "C" int sd_bus_set_bus_client(sd_bus* bus, int b) {
  using Fn = int (*)(sd_bus*, int);
  static Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "sd_bus_set_bus_client"));
  return real(bus, g_direct_connection ? 0 : b);
}

namespace nerve {

namespace {
constexpr const char* kService = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kJobRemovedRule =
    "type='signal',sender='org.freedesktop.systemd1',path='/org/freedesktop/systemd1',"
    "interface='org.freedesktop.systemd1.Manager',member='JobRemoved'";

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

std::unique_ptr<sdbus::IConnection> connect_direct(const std::string& socket) {
  struct Direct {
    Direct() { g_direct_connection = true; }
    ~Direct() { g_direct_connection = false; }
  } direct;
  return sdbus::createSessionBusConnectionWithAddress("unix:path=" + address_escape(socket));
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
  // While up: the JobRemoved match, and on the private socket its connection and manager object.
  bool up = false;
  bool via_private = false;
  bool private_checked = false;  // the private socket answered once: a later failure is not a refusal
  std::unique_ptr<sdbus::IConnection> direct;
  std::unique_ptr<sdbus::IProxy> direct_manager;
  sdbus::Slot job_match;
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

  sdbus::Slot match_job_removed(sdbus::IConnection& bus) {
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
    // Subscribe again. AddMatch waits for its answer, so the match is in place before any job starts.
    job_match = match_job_removed(session);
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
