// SPDX-License-Identifier: LGPL-2.1-or-later
// The properties of a slice set through systemd (SetSliceProperties, `nervectl slice set`): the one
// cap over all the runs in it. systemd's answer to SetUnitProperties is not the proof that a value
// took, so each one is read back from the slice afterwards.
#pragma once

#include "base/result.h"
#include "base/run_controls.h"
#include "system/systemd.h"

#include <map>
#include <string>

namespace nerve {

inline constexpr const char* kSliceInterface = "org.freedesktop.systemd1.Slice";

// SetUnitProperties(slice, persistent) with the parsed properties of CONTROLS, then their values read
// back (Properties.GetAll of the slice's Slice interface) and checked with check_applied. Error
// InvalidProperty when systemd refused them or one did not take.
void set_slice_properties(Systemd& systemd, const std::string& slice, const RunControls& controls, Done<void> done);

// Whether each of CONTROLS.unit_properties has the value sent in READ (what the slice has now).
// A percentage (MemoryMaxScale and the like) is not compared: systemd keeps it as bytes of the
// host's memory. AllowedCPUs is compared as a set (systemd pads the mask). Error InvalidProperty
// naming the assignment as given and quoting what systemd has instead.
Result<void> check_applied(const std::string& slice, const RunControls& controls,
                           const std::map<std::string, PropertyValue>& read);

}  // namespace nerve
