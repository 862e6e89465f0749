#include "bus/bus_caller.h"

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

BusCaller BusCallers::of(const std::string& sender) {
  if (auto it = known_.find(sender); it != known_.end()) return it->second;
  BusCaller caller = bus_caller(bus_, sender);
  if (sender.empty() || sender.front() != ':') return caller;  // only unique names are kept
  if (order_.size() >= kKept) {
    known_.erase(order_.front());
    order_.pop_front();
  }
  known_.emplace(sender, caller);
  order_.push_back(sender);
  return caller;
}

}  // namespace nerve
