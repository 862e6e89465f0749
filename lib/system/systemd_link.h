// SPDX-License-Identifier: LGPL-2.1-or-later
// How nerved reaches the systemd user manager, and only while it needs it.
//
// Two ways. The manager's private socket ($XDG_RUNTIME_DIR/systemd/private, what systemctl and
// systemd-run use): no dbus-daemon hop, no Hello. Or the session bus, as any client. The private socket
// is used when it exists and takes the connection (--systemd-bus=auto, the default); otherwise, or with
// --systemd-bus=session, the session bus. Which one is logged, and so is a fall back.
//
// Idle, nerved hears nothing from the manager. The manager sends every signal (every unit's and job's
// change) to every private connection, and a subscribed client gets them on the session bus, so the
// link is "up" only while something holds it (a call in flight, a job awaited) and for kLinger after:
//   private: the connection is open (attached to the event loop), closed when the link goes down;
//   session: a JobRemoved match and Subscribe, removed and Unsubscribe when it goes down.
// Either way nerved's JobRemoved handler gets the manager's JobRemoved while the link is up.
#pragma once

#include "base/string_table.h"
#include "system/event_loop.h"

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace sdbus {
class IConnection;
class IProxy;
class Message;
}  // namespace sdbus

namespace nerve {

// How nerved reaches the manager; the names are nerved's --systemd-bus.
enum class SystemdBus { Auto, Private, Session };
constexpr auto string_table(SystemdBus) {
  return std::to_array<Named<SystemdBus>>({
      {SystemdBus::Auto, "auto"},
      {SystemdBus::Private, "private"},
      {SystemdBus::Session, "session"},
  });
}

// The way named 'text'; Auto for a name without a row.
SystemdBus parse_systemd_bus(const std::string& text);

// $XDG_RUNTIME_DIR/systemd/private, or "" when XDG_RUNTIME_DIR is not set.
std::string default_private_socket();

class SystemdLink {
 public:
  using JobRemoved = std::function<void(const std::string& job, const std::string& result)>;
  static constexpr auto kLinger = std::chrono::milliseconds(250);

  // 'call_timeout' bounds its own calls, none of which waits: Subscribe and Unsubscribe, and the
  // manager's Version on the first use of the private socket, to know whether it takes the connection.
  SystemdLink(sdbus::IConnection& session, EventLoop& loop, SystemdBus mode, std::string private_socket,
              std::chrono::milliseconds call_timeout, JobRemoved on_job_removed);
  ~SystemdLink();

  // Keeps the link up while the returned token lives. Throws sdbus::Error when the manager cannot be
  // reached the way the mode demands (private only: the socket refuses).
  std::shared_ptr<void> hold();
  // The manager object and the connection to use now; valid while a hold is alive.
  sdbus::IProxy& manager();
  sdbus::IConnection& connection();
  // "the private socket PATH" or "the session bus": how calls go now (or would go).
  std::string describe() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace nerve
