// SPDX-License-Identifier: LGPL-2.1-or-later
// What a run used: a snapshot of its cgroup's accounting files, taken by the reap before systemd
// removes the cgroup (systemd itself forgets a scope's figures once its cgroup is gone).
//
// Each figure comes from the kernel file that holds it: cpu.stat (usage, user, system: always there
// on cgroup2), memory.peak and memory.events' oom_kill (the memory controller), pids.peak (the pids
// controller), io.stat's rbytes/wbytes summed over devices (the io controller). A figure whose file
// the kernel does not offer for this cgroup (its controller not enabled in the parent's subtree) is
// absent, written as null: never 0.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

namespace nerve {

struct Usage {
  std::optional<std::uint64_t> cpu_usage_usec;
  std::optional<std::uint64_t> cpu_user_usec;
  std::optional<std::uint64_t> cpu_system_usec;
  std::optional<std::uint64_t> memory_peak_bytes;
  std::optional<std::uint64_t> tasks_peak;
  std::optional<std::uint64_t> io_read_bytes;
  std::optional<std::uint64_t> io_write_bytes;
  std::optional<std::uint64_t> oom_kills;
  bool operator==(const Usage&) const = default;
};

// Reads the files below an open cgroup folder. Files that are missing or unreadable leave their
// figures absent.
Usage read_usage(int cgroup_dir_fd);

// The parsers, on the kernel's text formats ("key value" lines; io.stat's "MAJ:MIN rbytes=N ...").
std::optional<std::uint64_t> flat_key(std::string_view text, std::string_view key);
void parse_io_stat(std::string_view text, Usage& out);

// {"cpu_usage_usec": N|null, ...}: every figure, null when absent.
void to_json(nlohmann::json& j, const Usage& u);
void from_json(const nlohmann::json& j, Usage& u);

}  // namespace nerve
