// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace nerve {

FsError::FsError(const std::string& what, const std::string& path, int err)
    : std::runtime_error(what + " '" + path + "': " + std::strerror(err)), path_(path), err_(err) {}

OpenedFolder open_dir_at(int dirfd, const std::string& name, IfMissing if_missing, const std::string& shown) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  OpenedFolder opened;
  // Opened first: the folder is there on every write but a run's first (no mkdirat to fail with EEXIST).
  int fd = ::openat(dirfd, name.c_str(), kFlags);
  if (fd < 0 && errno == ENOENT && if_missing == IfMissing::Create) {
    bool made = ::mkdirat(dirfd, name.c_str(), 0700) == 0;
    if (!made && errno != EEXIST) throw FsError("cannot create folder", shown, errno);
    if (made) opened.folder = Folder::Created;
    fd = ::openat(dirfd, name.c_str(), kFlags);
  }
  if (fd < 0) throw FsError("cannot open folder", shown, errno);
  opened.fd.reset(fd);
  return opened;
}

Fd open_dir_path(const std::string& path, IfMissing if_missing) {
  if (path.empty() || path.front() != '/') throw FsError("not an absolute path", path, EINVAL);
  Fd cur(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cur) throw FsError("cannot open folder", "/", errno);
  std::string shown;
  std::size_t pos = 1;
  while (pos <= path.size()) {
    auto next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    std::string part = path.substr(pos, next - pos);
    pos = next + 1;
    if (part.empty() || part == ".") continue;
    shown += "/" + part;
    if (if_missing == IfMissing::Create && ::mkdirat(cur.get(), part.c_str(), 0700) < 0 && errno != EEXIST)
      throw FsError("cannot create folder", shown, errno);
    // Components above the runs folder may be symlinks (e.g. /home -> /var/home): follow them here.
    int fd = ::openat(cur.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw FsError("cannot open folder", shown, errno);
    cur.reset(fd);
  }
  return cur;
}

namespace {
void write_all(int fd, std::string_view data, const std::string& shown) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FsError("cannot write", shown, errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string temp_name(const std::string& name) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return "." + name + ".tmp-" + buf;
}
}  // namespace

void write_file_atomic(int dirfd, const std::string& name, std::string_view data, const std::string& shown,
                       Sync sync, unsigned mode) {
  const bool durable = sync == Sync::Durable;
  const std::string tmp = temp_name(name);
  Fd fd(::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) throw FsError("cannot create", shown, errno);
  try {
    if (mode != 0600 && ::fchmod(fd.get(), static_cast<mode_t>(mode)) < 0) throw FsError("cannot chmod", shown, errno);
    write_all(fd.get(), data, shown);
    // fdatasync: the file is new, so its size and blocks (all it needs to be read) are synced with it.
    if (durable && ::fdatasync(fd.get()) < 0) throw FsError("cannot fsync", shown, errno);
    if (::close(fd.release()) < 0) throw FsError("cannot close", shown, errno);
    if (::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) < 0)
      throw FsError("cannot rename into place", shown, errno);
  } catch (...) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    throw;
  }
  if (durable && ::fsync(dirfd) < 0) throw FsError("cannot fsync the folder of", shown, errno);
}

std::optional<std::string> read_file_at(int dirfd, const std::string& name, const std::string& shown) {
  // Only regular files are read. A FIFO or device node is refused before it is opened, and the open
  // itself never blocks (O_NONBLOCK), should one be put there in between; fstat checks again.
  struct stat pre {};
  if (::fstatat(dirfd, name.c_str(), &pre, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(pre.st_mode) && !S_ISLNK(pre.st_mode))
    throw FsError("not a regular file", shown, EINVAL);
  Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return std::nullopt;
    throw FsError("cannot open", shown, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) throw FsError("cannot stat", shown, errno);
  if (!S_ISREG(st.st_mode)) throw FsError("not a regular file", shown, EINVAL);
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FsError("cannot read", shown, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > (1u << 20)) throw FsError("file too large", shown, EFBIG);
    // All of a regular file that has not grown since fstat: no second read just to see its end.
    if (out.size() == static_cast<std::size_t>(st.st_size) && out.size() < sizeof buf) break;
  }
  return out;
}

void remove_file_at(int dirfd, const std::string& name, const std::string& shown) {
  if (::unlinkat(dirfd, name.c_str(), 0) < 0 && errno != ENOENT)
    throw FsError("cannot remove", shown, errno);
  ::fsync(dirfd);
}

}  // namespace nerve
