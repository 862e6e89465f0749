// SPDX-License-Identifier: LGPL-2.1-or-later
// The D-Bus names of the services nerve talks to besides its own: the systemd user manager and the bus
// itself (dbus-daemon). Defined once, for nerved and nervectl alike.
#pragma once

#include <chrono>

namespace nerve {

namespace systemd1 {
inline constexpr const char* kService = "org.freedesktop.systemd1";
inline constexpr const char* kPath = "/org/freedesktop/systemd1";
inline constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
inline constexpr const char* kUnit = "org.freedesktop.systemd1.Unit";
inline constexpr const char* kScope = "org.freedesktop.systemd1.Scope";
}  // namespace systemd1

namespace dbus_daemon {
inline constexpr const char* kService = "org.freedesktop.DBus";
inline constexpr const char* kPath = "/org/freedesktop/DBus";
inline constexpr const char* kInterface = "org.freedesktop.DBus";
// The deadline of nerved's calls to dbus-daemon, which answers at once unless it is stalled.
inline constexpr std::chrono::milliseconds kCallTimeout{5000};
}  // namespace dbus_daemon

}  // namespace nerve
