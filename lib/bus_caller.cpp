#include "bus_caller.h"

#include <sdbus-c++/sdbus-c++.h>

#include <map>

namespace nerve {

BusCaller bus_caller(sdbus::IConnection& bus, const std::string& sender) {
  auto dbus = sdbus::createProxy(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus");
  std::map<std::string, sdbus::Variant> creds;
  dbus->callMethod("GetConnectionCredentials").onInterface("org.freedesktop.DBus").withArguments(sender).storeResultsTo(creds);
  BusCaller caller;
  if (auto it = creds.find("UnixUserID"); it != creds.end()) caller.uid = it->second.get<uint32_t>();
  if (auto it = creds.find("ProcessID"); it != creds.end()) caller.pid = static_cast<pid_t>(it->second.get<uint32_t>());
  return caller;
}

}  // namespace nerve
