// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's unit properties (unit_properties.h) as the cgroup2 files systemd would have written for
// them, for the cgroup backend (cgroup_backend.h), which writes them itself: MemoryMax= is
// memory.max, CPUQuota= is cpu.max, TasksMax= is pids.max, and so on, in the units and with the
// rounding of systemd 252's src/core/cgroup.c; and back. Pure but for read_host_limits: the host's
// facts a percentage needs are given.
#pragma once

#include "base/result.h"
#include "base/unit_properties.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nerve {

// What a percentage is of: MemoryMax=50% of the machine's memory, TasksMax=10% of the kernel's
// pid limit (as systemd: physical_memory(), and the smaller of kernel.pid_max and threads-max).
struct HostLimits {
  std::uint64_t memory_bytes = 0;
  std::uint64_t tasks = 0;
};
HostLimits read_host_limits();

// One file of a cgroup folder and what to write to it.
struct CgroupWrite {
  std::string controller;  // the controller that must be enabled for the file to exist ("memory")
  std::string file;        // "memory.max"
  std::string text;        // "52428800", "max", "50000 100000"
  std::string key;         // the property's key as a user gives it ("MemoryMax"), for errors
  bool operator==(const CgroupWrite&) const = default;
};

// The write of 'property'. Error InvalidProperty for a property this backend cannot apply
// (RuntimeMaxUSec: a run's timeout is nerve's own deadline, and a slice has none here).
Result<CgroupWrite> cgroup_write_for(const UnitProperty& property, const HostLimits& host);
// The key a user gives for a property on the bus ("CPUQuotaPerSecUSec" -> "CPUQuota").
std::string property_key(const std::string& bus_name);

// The bus properties a slice's control files say, the inverse of cgroup_write_for for what can be
// read back (slice_properties.h checks what took): FILES maps a file's name ("memory.max") to its
// content. Files it does not know, or cannot parse, are left out.
std::map<std::string, PropertyValue> limits_from_files(const std::map<std::string, std::string>& files);
// The files limits_from_files reads.
const std::vector<std::string>& limit_files();

// "0-3,6" from the bitmask AllowedCPUs carries (byte i, bit j is CPU 8i+j), as cpuset.cpus takes it.
std::string cpu_list(const std::vector<std::uint8_t>& mask);

}  // namespace nerve
