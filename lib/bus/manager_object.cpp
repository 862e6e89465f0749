// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bus/manager_object.h"

#include "base/errors.h"
#include "bus/manager_calls.h"
#include "generated/nerve_version.h"
#include "process/sealing.h"

#include <unistd.h>

namespace nerve {

void check_caller_uid(uid_t uid) {
  if (uid != ::getuid())
    throw_bus_error(error::AccessDenied,
                    "caller uid " + std::to_string(uid) + " is not nerved's uid " + std::to_string(::getuid()));
}

[[noreturn]] void rethrow_named(const char* method) {
  try {
    throw;
  } catch (const sdbus::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw_bus_error(error::Internal, std::string(method) + " failed inside nerved: " + e.what() +
                                         "; nothing was changed by this call, see nerved's log");
  } catch (...) {
    throw_bus_error(error::Internal, std::string(method) +
                                         " failed inside nerved (unknown exception); nothing was changed by this "
                                         "call, see nerved's log");
  }
}

ManagerObject::ManagerObject(sdbus::IConnection& bus, Timers& timers, Lifecycle& lifecycle, ProcessLauncher& launcher,
                             Systemd& systemd, ManagerSettings settings)
    : AdaptorInterfaces(bus, kObjectPath),
      lifecycle_(lifecycle),
      launcher_(launcher),
      systemd_(systemd),
      settings_(std::move(settings)),
      gate_(timers, settings_.calls_per_client),
      callers_(bus) {
  registerAdaptor();
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

std::string ManagerObject::current_sender() { return getObject().getCurrentlyProcessedMessage()->getSender(); }

ContainRequest ManagerObject::run_defaults(const std::string& run) const {
  ContainRequest req;
  req.run = run;
  req.grace_usec = settings_.default_grace_usec;
  req.controls.slice = settings_.default_slice;
  req.controls.properties = settings_.default_properties;
  req.controls.unit_properties = value_or_throw(parse_unit_properties(req.controls.properties));  // checked at start
  return req;
}

std::string ManagerObject::Version() { return NERVE_VERSION; }

bool ManagerObject::SealingAvailable() { return sealing_status().available; }
std::string ManagerObject::SealingDetail() { return sealing_status().detail; }

}  // namespace nerve
