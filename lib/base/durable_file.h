// SPDX-License-Identifier: LGPL-2.1-or-later
// Files that survive a crash, read and written relative to a folder fd.
//
// write_file_atomic: write a temporary file in the same folder, fdatasync it, rename it over the
// target, fsync the folder. After it returns, a crash of anyone (this process, the machine) leaves
// either the old content or the new one, never a mix or nothing. With Sync::Lazy the two syncs are
// left out: a crash of the process still leaves the old content or the new one (the rename is
// atomic), but after a crash of the machine the new content may be missing or, on file systems that
// do not order a rename after the data it names, empty. Every open uses O_NOFOLLOW and is relative to a
// folder fd, so a symlink planted under the runs folder is never followed. Failures throw FsError,
// which names the path and the cause (ENOSPC, EROFS, EACCES, ...).
#pragma once

#include "base/fd.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nerve {

class FsError : public std::runtime_error {
 public:
  FsError(const std::string& what, const std::string& path, int err);
  const std::string& path() const { return path_; }
  int err() const { return err_; }

 private:
  std::string path_;
  int err_;
};

// Durable: on the disk when the write returns. Lazy: atomic, on the disk when the kernel writes it back.
enum class Sync { Durable, Lazy };

// What opening a folder does when it does not exist: fail (FsError, ENOENT), or make it (mode 0700).
enum class IfMissing { Fail, Create };
// Whether the folder opened was there already or was made by this open.
enum class Folder { Found, Created };

struct OpenedFolder {
  Fd fd;
  Folder folder = Folder::Found;
};

// Opens the folder 'name' in 'dirfd', making it first if it is missing and IfMissing::Create. A
// symlink is refused (ELOOP/ENOTDIR). 'shown' is the path used in error messages.
OpenedFolder open_dir_at(int dirfd, const std::string& name, IfMissing if_missing, const std::string& shown);

// Opens the absolute 'path', making every missing folder of it (mode 0700) if IfMissing::Create.
Fd open_dir_path(const std::string& path, IfMissing if_missing);

// Atomically replaces 'name' in 'dirfd' with 'data' (mode 0600, or 'mode' whatever the umask),
// durably unless Sync::Lazy. The temporary file is ".NAME.tmp-<random>" in the same folder.
void write_file_atomic(int dirfd, const std::string& name, std::string_view data, const std::string& shown,
                       Sync sync = Sync::Durable, unsigned mode = 0600);

// The whole content of 'name' in 'dirfd', or nullopt if it does not exist. Throws FsError otherwise.
std::optional<std::string> read_file_at(int dirfd, const std::string& name, const std::string& shown);

// Removes 'name' (a file) from 'dirfd' durably; a missing file is not an error.
void remove_file_at(int dirfd, const std::string& name, const std::string& shown);

}  // namespace nerve
