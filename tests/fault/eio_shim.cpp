// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve_fault_eio: an LD_PRELOAD library that makes write(2), pwrite(2) and fsync(2)/fdatasync(2)
// fail with EIO on the files a test names, while a switch file exists. The kernel gives ENOSPC (a
// small tmpfs), EMFILE (setrlimit) and a stalled peer (SIGSTOP) for real; it gives no EIO on demand.
//
//   NERVE_FAULT_EIO_MATCH   fnmatch(3) pattern on the file's path (/proc/self/fd/N), e.g.
//                           "*/r1/*lifecycle.json*" (temp files of an atomic write match too)
//   NERVE_FAULT_EIO_SWITCH  the faults happen only while this file exists (unset: always)
//
// Only regular files are affected: the bus socket, pipes and eventfds never fail.
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace {
int should_fail(int fd) {
  const char* pattern = getenv("NERVE_FAULT_EIO_MATCH");
  if (!pattern || !*pattern) return 0;
  const char* sw = getenv("NERVE_FAULT_EIO_SWITCH");
  if (sw && *sw && access(sw, F_OK) != 0) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  return fnmatch(pattern, target, 0) == 0;
}
}  // namespace

template <typename F>
F* next(F*, const char* name) {
  return reinterpret_cast<F*>(dlsym(RTLD_NEXT, name));
}
#define NEXT(name) next(&name, #name)

extern "C" {

ssize_t write(int fd, const void* buf, size_t count) {
  if (should_fail(fd)) {
    errno = EIO;
    return -1;
  }
  return NEXT(write)(fd, buf, count);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  if (should_fail(fd)) {
    errno = EIO;
    return -1;
  }
  return NEXT(pwrite)(fd, buf, count, offset);
}

int fsync(int fd) {
  if (should_fail(fd)) {
    errno = EIO;
    return -1;
  }
  return NEXT(fsync)(fd);
}

int fdatasync(int fd) {
  if (should_fail(fd)) {
    errno = EIO;
    return -1;
  }
  return NEXT(fdatasync)(fd);
}

}  // extern "C"
