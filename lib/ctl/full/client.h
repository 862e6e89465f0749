// SPDX-License-Identifier: LGPL-2.1-or-later
// The generated org.nerve.Lifecycle1 proxy on its own session bus connection: what every verb calls.
#pragma once

#include "generated/nerve-proxy.h"

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <memory>
#include <string>

namespace nerve::ctl {

class Client : public sdbus::ProxyInterfaces<org::nerve::Lifecycle1::Manager_proxy> {
 public:
  explicit Client(std::unique_ptr<sdbus::IConnection> bus)
      : ProxyInterfaces(*bus, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1"), bus_(std::move(bus)) {
    // No registerProxy(): it would AddMatch RunExited, a synchronous round trip to dbus-daemon that no
    // verb needs (`events` has a match of its own). Calls work without it.
  }
  sdbus::IConnection& bus() { return *bus_; }

  // GetManagedObjects of the manager's org.freedesktop.DBus.ObjectManager: every run object with
  // all its properties, in one call.
  using ManagedObjects =
      std::map<sdbus::ObjectPath, std::map<std::string, std::map<std::string, sdbus::Variant>>>;
  ManagedObjects GetManagedObjects() {
    ManagedObjects objects;
    getProxy().callMethod("GetManagedObjects").onInterface("org.freedesktop.DBus.ObjectManager").storeResultsTo(objects);
    return objects;
  }

 private:
  // nervectl's verbs make calls only, and never hear this signal; engines that launch over the bus watch it.
  void onRunExited(const std::string&, const int32_t&, const int32_t&, const std::string&) override {}

  std::unique_ptr<sdbus::IConnection> bus_;
};

}  // namespace nerve::ctl
