// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/sdbus_compat.h"

#include <dlfcn.h>
#include <sdbus-c++/sdbus-c++.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-bus.h>

#include <stdexcept>

namespace {
// True only while create_direct_connection opens its connection on this thread.
thread_local bool g_direct_connection = false;
}  // namespace

// Workaround 2 (sdbus_compat.h): libsystemd's own sd_bus_set_bus_client, except for the connection
// create_direct_connection opens, which stays a peer connection.
extern "C" int sd_bus_set_bus_client(sd_bus* bus, int b) {
  using Fn = int (*)(sd_bus*, int);
  static Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "sd_bus_set_bus_client"));
  return real(bus, g_direct_connection ? 0 : b);
}

// Workaround 2, continued: sdbus-c++ 1.2 drops that connection's sd_bus without an unref when
// sd_bus_start fails (the socket is missing or refuses): 1.8 KB lost each time the private socket
// cannot be used (LeakSanitizer). For that one connection, the failed start frees it: sdbus-c++ only
// throws the error after it, and never touches the bus again.
extern "C" int sd_bus_start(sd_bus* bus) {
  using Fn = int (*)(sd_bus*);
  static Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "sd_bus_start"));
  int r = real(bus);
  if (r < 0 && g_direct_connection) ::sd_bus_unref(bus);
  return r;
}

namespace nerve {

namespace {
struct Match {
  std::function<void(sd_bus_message*)> on_message;
  std::function<void(const sd_bus_error*)> on_installed;
  sd_bus_slot* slot = nullptr;
};

// Runs 'fn' for a callback of sd-bus, which must not see an exception.
template <typename Fn>
int guarded(const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    spdlog::error("a match's {} failed: {}", what, e.what());
  } catch (...) {
    spdlog::error("a match's {} failed (unknown exception)", what);
  }
  return 0;
}

int match_message(sd_bus_message* m, void* userdata, sd_bus_error*) {
  auto* match = static_cast<Match*>(userdata);
  return guarded("handler", [&] { match->on_message(m); });
}

int match_installed(sd_bus_message* m, void* userdata, sd_bus_error*) {
  auto* match = static_cast<Match*>(userdata);
  const sd_bus_error* error = ::sd_bus_message_get_error(m);  // null for a method return
  return guarded("installation", [&] {
    if (match->on_installed) match->on_installed(error);
  });
}

// Workaround 1 (sdbus_compat.h): a member pointer named through a subclass reads the protected msg_.
struct MessageAccess : sdbus::Message {
  static void* raw(const sdbus::Message& m) { return m.*(&MessageAccess::msg_); }
};
}  // namespace

sd_bus* sd_bus_of(sdbus::IConnection& bus) {
  // A signal is made on the connection (never sent): its sd_bus_message knows its sd_bus.
  auto object = sdbus::createObject(bus, "/org/nerve/Lifecycle1/run");
  sdbus::Signal probe = object->createSignal("org.nerve.Lifecycle1.Run", "Probe");
  sd_bus* raw = ::sd_bus_message_get_bus(static_cast<sd_bus_message*>(MessageAccess::raw(probe)));
  if (!raw) throw std::runtime_error("cannot reach the sd-bus connection under the sdbus-c++ one");
  return ::sd_bus_ref(raw);
}

std::shared_ptr<void> add_match_async(sd_bus* bus, const std::string& rule,
                                      std::function<void(sd_bus_message*)> on_message,
                                      std::function<void(const sd_bus_error*)> on_installed) {
  auto* match = new Match{std::move(on_message), std::move(on_installed)};
  int r = ::sd_bus_add_match_async(bus, &match->slot, rule.c_str(), &match_message, &match_installed, match);
  if (r < 0) {
    delete match;
    throw sdbus::createError(-r, "cannot add the match " + rule);
  }
  return std::shared_ptr<void>(match, [](void* p) {
    auto* m = static_cast<Match*>(p);
    ::sd_bus_slot_unref(m->slot);
    delete m;
  });
}

std::unique_ptr<sdbus::IConnection> create_direct_connection(const std::string& address) {
  struct Direct {
    Direct() { g_direct_connection = true; }
    ~Direct() { g_direct_connection = false; }
  } direct;
  return sdbus::createSessionBusConnectionWithAddress(address);
}

}  // namespace nerve
