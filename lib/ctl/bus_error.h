// SPDX-License-Identifier: LGPL-2.1-or-later
// What nervectl says when a call to nerved failed, by the D-Bus error's name, and the exit code it
// gives (ctl.h): nerved not running or not answering, the bus unreachable (69), nerved's own named
// errors (1). A launch whose call failed says that its command was not started (125).
#pragma once

#include "ctl/ctl.h"

#include <string>

namespace nerve::ctl {

// Why a call failed, as D-Bus names it (the bus's error, nerved's org.nerve.Lifecycle1.Error.*, or
// the errno of a connection that could not be made, e.g. System.Error.ECONNREFUSED).
struct BusFailure {
  std::string name;
  std::string message;
};

// Prints "nervectl VERB: <explanation>" on stderr; returns the exit code.
int report_bus_error(const Verb& verb, const BusFailure& failure);

}  // namespace nerve::ctl
