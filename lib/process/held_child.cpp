// SPDX-License-Identifier: LGPL-2.1-or-later
#include "process/held_child.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>

namespace nerve {

bool await_word(int go, char word) {
  char c = 0;
  ssize_t n;
  do {
    n = ::read(go, &c, 1);
  } while (n < 0 && errno == EINTR);
  return n == 1 && c == word;
}

void exit_step_failed(int report, int err, const char* step) {
  // "ERRNO STEP", formatted without allocation.
  char buf[160];
  char num[16];
  int n = 0, k = 0;
  int e = err;
  do {
    num[k++] = static_cast<char>('0' + e % 10);
    e /= 10;
  } while (e && k < 15);
  while (k) buf[n++] = num[--k];
  buf[n++] = ' ';
  for (const char* p = step; *p && n < 150; ++p) buf[n++] = *p;
  (void)!::write(report, buf, static_cast<size_t>(n));
  ::_exit(exec_failure_exit_code(err));
}

bool send_word(const Fd& go, char word) {
  ssize_t n;
  do {
    n = ::write(go.get(), &word, 1);
  } while (n < 0 && errno == EINTR);
  return n == 1;
}

std::optional<StepFailure> parse_report(const std::string& report) {
  if (report.empty()) return std::nullopt;
  StepFailure f;
  f.err = std::atoi(report.c_str());
  auto space = report.find(' ');
  f.step = space == std::string::npos ? "" : report.substr(space + 1);
  return f;
}

std::string read_report(int fd) {
  std::string out;
  char buf[512];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

namespace detail {

bool make_held_pipes(int go[2], int report[2]) {
  if (::pipe2(go, O_CLOEXEC) < 0) return false;
  if (::pipe2(report, O_CLOEXEC) == 0) return true;
  int err = errno;
  ::close(go[0]);
  ::close(go[1]);
  errno = err;
  return false;
}

void close_all(const int go[2], const int report[2]) {
  int err = errno;
  for (int fd : {go[0], go[1], report[0], report[1]}) ::close(fd);
  errno = err;
}

}  // namespace detail

}  // namespace nerve
