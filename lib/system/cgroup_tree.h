// SPDX-License-Identifier: LGPL-2.1-or-later
// The few file operations on a cgroup2 tree that the cgroup backend (cgroup_backend.h) and its
// subtree check (cgroup_subtree.h) make by path: folders made and removed, control files written and
// read, controllers enabled. Errors name the path and the errno's text.
#pragma once

#include "base/result.h"

#include <string>
#include <vector>

namespace nerve {

namespace cgroup_tree_error {
inline constexpr const char* Io = "nerve.Cgroup.Io";
}

// mkdir PATH (0755). *existed (if given) says whether it was already there, which is then no error.
Result<void> make_folder(const std::string& path, bool* existed = nullptr);
// rmdir of PATH and of every folder below it, deepest first. A folder already gone is no error; one
// that still holds a process is (EBUSY).
Result<void> remove_tree(const std::string& path);
// Writes TEXT to the control file PATH in one write(2), as the kernel wants.
Result<void> write_control(const std::string& path, const std::string& text);
// The whole content of PATH.
Result<std::string> read_control(const std::string& path);
// The names of the folders right below PATH (none if it is gone).
std::vector<std::string> subfolders(const std::string& path);
// Enables in PATH's cgroup.subtree_control every controller its cgroup.controllers offers, all at
// once, else one by one. Returns what is enabled now, space separated; *refused (if given) names each
// that could not be, with why (EBUSY: a process in PATH itself, the kernel's no-internal-process rule).
std::string enable_controllers(const std::string& path, std::string* refused = nullptr);
// The controllers enabled for the folders below PATH (its cgroup.subtree_control), as words.
std::vector<std::string> enabled_controllers(const std::string& path);

}  // namespace nerve
