// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bus/bus_caller.h"

#include "base/bus_names.h"

#include <sdbus-c++/sdbus-c++.h>

#include <map>

namespace nerve {

namespace {
using Credentials = std::map<std::string, sdbus::Variant>;

Result<BusCaller> caller_of(const Credentials& creds) {
  try {
    BusCaller caller;
    if (auto it = creds.find("UnixUserID"); it != creds.end()) caller.uid = it->second.get<uint32_t>();
    if (auto it = creds.find("ProcessID"); it != creds.end()) caller.pid = static_cast<pid_t>(it->second.get<uint32_t>());
    return caller;
  } catch (const sdbus::Error& e) {
    return Error{e.getName(), e.getMessage()};
  }
}
}  // namespace

BusCallers::BusCallers(sdbus::IConnection& bus)
    : dbus_(sdbus::createProxy(bus, dbus_daemon::kService, dbus_daemon::kPath)) {
  ask_ = [dbus = dbus_.get()](const std::string& sender, Done done) {
    try {
      dbus->callMethodAsync("GetConnectionCredentials")
          .onInterface(dbus_daemon::kInterface)
          .withArguments(sender)
          .withTimeout(dbus_daemon::kCallTimeout)
          .uponReplyInvoke([done](const sdbus::Error* e, Credentials creds) {
            if (e) return done(Error{e->getName(), e->getMessage()});
            done(caller_of(creds));
          });
    } catch (const sdbus::Error& e) {  // not even sent
      done(Error{e.getName(), e.getMessage()});
    }
  };
}

BusCallers::BusCallers(Ask ask) : ask_(std::move(ask)) {}

BusCallers::~BusCallers() = default;

void BusCallers::of(const std::string& sender, Done done) {
  if (auto it = known_.find(sender); it != known_.end()) return done(it->second);
  auto [it, first] = waiting_.try_emplace(sender);
  it->second.push_back(std::move(done));
  if (!first) return;  // asked already: this call waits for the same answer
  ask_(sender, [this, sender](Result<BusCaller> caller) { answered(sender, caller); });
}

void BusCallers::answered(const std::string& sender, const Result<BusCaller>& caller) {
  if (caller && !sender.empty() && sender.front() == ':' && !known_.count(sender)) {  // only unique names are kept
    if (order_.size() >= kKept) {
      known_.erase(order_.front());
      order_.pop_front();
    }
    known_.emplace(sender, *caller);
    order_.push_back(sender);
  }
  auto node = waiting_.extract(sender);
  if (node.empty()) return;
  for (auto& done : node.mapped()) done(caller);
}

}  // namespace nerve
