// SPDX-License-Identifier: LGPL-2.1-or-later
#include "libnerve/error.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nerve::lib {

char* dup(const std::string& s) { return ::strndup(s.data(), s.size()); }

int set_error(nerve_error* error, const std::string& name, const std::string& message, int errno_value) {
  if (errno_value <= 0) errno_value = EIO;
  if (error && !error->name) {
    error->name = dup(name);
    error->message = dup(message);
  }
  return -errno_value;
}

int own_error(nerve_error* error, const char* what, const std::string& message, int errno_value) {
  return set_error(error, std::string(kErrorPrefix) + what, message, errno_value);
}

}  // namespace nerve::lib

extern "C" {

void nerve_error_free(nerve_error* error) {
  if (!error) return;
  std::free(error->name);
  std::free(error->message);
  *error = nerve_error NERVE_ERROR_NULL;
}

int nerve_error_has_name(const nerve_error* error, const char* name) {
  return error && error->name && name && std::strcmp(error->name, name) == 0;
}

}  // extern "C"
