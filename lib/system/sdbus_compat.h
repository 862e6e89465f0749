// SPDX-License-Identifier: LGPL-2.1-or-later
// What sdbus-c++ 1.2 (Debian 12 ships 1.2.0) cannot do and nerved needs, worked around in one place.
// Each workaround names the sdbus-c++ release whose own API makes it unnecessary; when nerve requires
// that release, the function here becomes a call of that API (or goes) and its callers stay as they are.
//
// 1. sd_bus_of: the sd-bus connection under an sdbus-c++ connection. The run objects (bus/run_objects.h)
//    are one sd-bus fallback vtable and node enumerator, which sdbus-c++ has no API for, so they are
//    registered on the sd_bus itself. sdbus-c++ 1.2 does not hand out its sd_bus; the one way to it is
//    a message made on the connection (Message::msg_, a protected member, read through a member
//    pointer named in a subclass) and sd_bus_message_get_bus. Retired by sdbus-c++ 1.4.0: its
//    createBusConnection(sd_bus*) makes the connection over an sd_bus that nerved opens (and keeps a
//    reference to) itself. No release up to 2.3.1 has an accessor of a connection's sd_bus.
//
// 2. create_direct_connection: a peer-to-peer connection (no Hello), for the user manager's private
//    socket (system/systemd_link.h). sdbus-c++ 1.2's createSessionBusConnectionWithAddress always makes
//    a bus client, which sends Hello first; the manager's private socket is no bus, answers Hello with
//    UnknownObject, and the connection fails ("Failed to flush bus on opening", EBADR). So this file
//    overrides sd_bus_set_bus_client, the libsystemd call by which sdbus-c++ makes a connection a bus
//    client: while create_direct_connection opens its connection (on this thread), the call turns the
//    flag off instead, as systemctl's own connection has it; every other connection is left as
//    sdbus-c++ makes it. sdbus-c++ 1.2 also leaks that sd_bus when sd_bus_start fails (no unref before
//    it throws), so this file's sd_bus_start frees it then, for that connection only. Retired by
//    sdbus-c++ 1.4.0: createDirectBusConnection(address).
//
// 3. add_match_async: a match rule added without waiting. sdbus-c++ 1.2's addMatch is sd-bus's
//    sd_bus_add_match, which sends AddMatch and waits for dbus-daemon's answer on nerved's one thread
//    (up to the connection's method call timeout, sd-bus's 25 s, when dbus-daemon stalls). This is
//    sd_bus_add_match_async on the connection's sd_bus (workaround 1): the rule is in place once
//    dbus-daemon has read the AddMatch, so a call sent after it on the same connection is answered
//    with the rule in place (dbus-daemon handles a connection's messages in order). Retired by
//    sdbus-c++ 1.5.0: IConnection::addMatchAsync.
#pragma once

#include <systemd/sd-bus.h>

#include <functional>
#include <memory>
#include <string>

namespace sdbus {
class IConnection;
}

namespace nerve {

// The sd_bus of 'bus', with a reference of its own (the caller sd_bus_unref's it). Throws
// std::runtime_error when it cannot be reached.
sd_bus* sd_bus_of(sdbus::IConnection& bus);

// A connection to the D-Bus peer at 'address' ("unix:path=..."), without Hello. Throws sdbus::Error.
std::unique_ptr<sdbus::IConnection> create_direct_connection(const std::string& address);

// Each message that matches 'rule' goes to 'on_message'; 'on_installed' gets dbus-daemon's answer to
// the AddMatch (null: the rule is in place; else the error). Both are called on the connection's
// thread, never after the returned slot is gone; an exception they throw is logged and dropped. The
// rule goes (RemoveMatch) with the slot. Throws sdbus::Error when the AddMatch cannot be sent.
std::shared_ptr<void> add_match_async(sd_bus* bus, const std::string& rule,
                                      std::function<void(sd_bus_message*)> on_message,
                                      std::function<void(const sd_bus_error*)> on_installed);

}  // namespace nerve
