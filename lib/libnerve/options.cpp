// SPDX-License-Identifier: LGPL-2.1-or-later
#include "libnerve/options.h"

#include <systemd/sd-bus.h>

#include <cerrno>
#include <new>

namespace nerve::lib {

namespace {

// One {sv} entry whose value is of the basic TYPE (one letter).
template <typename T>
int append_option(sd_bus_message* m, const char* key, const char* type, T value) {
  return sd_bus_message_append(m, "{sv}", key, type, value);
}

// "properties": a(ss) of the (KEY, VALUE) pairs.
int append_properties(sd_bus_message* m, const nerve_options& o) {
  int r = sd_bus_message_open_container(m, 'e', "sv");
  if (r >= 0) r = sd_bus_message_append(m, "s", "properties");
  if (r >= 0) r = sd_bus_message_open_container(m, 'v', "a(ss)");
  if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(ss)");
  for (const auto& [key, value] : o.properties)
    if (r >= 0) r = sd_bus_message_append(m, "(ss)", key.c_str(), value.c_str());
  for (int i = 0; i < 3 && r >= 0; ++i) r = sd_bus_message_close_container(m);
  return r;
}

// The entries both methods take, into an open a{sv}.
int append_common(sd_bus_message* m, const nerve_options& o) {
  int r = 0;
  if (o.keep) r = append_option(m, "keep", "b", 1);
  if (r >= 0 && o.sealed) r = append_option(m, "sealed", "b", 1);  // nerved refuses it where the host cannot seal
  if (r >= 0 && !o.properties.empty()) r = append_properties(m, o);
  if (r >= 0 && o.timeout_usec) r = append_option(m, "timeout_usec", "t", o.timeout_usec);
  if (r >= 0 && !o.slice.empty()) r = append_option(m, "slice", "s", o.slice.c_str());
  return r;
}

}  // namespace

int append_contain_options(sd_bus_message* m, const nerve_options* options) {
  int r = sd_bus_message_open_container(m, 'a', "{sv}");
  if (r >= 0 && options) r = append_common(m, *options);
  if (r >= 0) r = sd_bus_message_close_container(m);
  return r;
}

int append_launch_options(sd_bus_message* m, const nerve_options* options) {
  int r = sd_bus_message_open_container(m, 'a', "{sv}");
  if (r >= 0 && options) r = append_common(m, *options);
  if (r >= 0 && options && options->grace_usec) r = append_option(m, "grace_usec", "t", options->grace_usec);
  if (r >= 0 && options && options->reap_on_exit)
    r = append_option(m, "reap_on_exit", "b", static_cast<int>(*options->reap_on_exit));
  if (r >= 0) r = sd_bus_message_close_container(m);
  return r;
}

}  // namespace nerve::lib

extern "C" {

nerve_options* nerve_options_new(void) { return new (std::nothrow) nerve_options; }

void nerve_options_free(nerve_options* options) { delete options; }

int nerve_options_set_grace_usec(nerve_options* o, uint64_t grace_usec) {
  if (!o) return -EINVAL;
  o->grace_usec = grace_usec;
  return 0;
}

int nerve_options_set_timeout_usec(nerve_options* o, uint64_t timeout_usec) {
  if (!o) return -EINVAL;
  o->timeout_usec = timeout_usec;
  return 0;
}

int nerve_options_set_slice(nerve_options* o, const char* slice) {
  if (!o || !slice) return -EINVAL;
  try {
    o->slice = slice;
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  return 0;
}

int nerve_options_add_property(nerve_options* o, const char* key, const char* value) {
  if (!o || !key || !value) return -EINVAL;
  try {
    o->properties.emplace_back(key, value);
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  return 0;
}

int nerve_options_set_keep(nerve_options* o, int keep) {
  if (!o) return -EINVAL;
  o->keep = keep != 0;
  return 0;
}

int nerve_options_set_sealed(nerve_options* o, int sealed) {
  if (!o) return -EINVAL;
  o->sealed = sealed != 0;
  return 0;
}

int nerve_options_set_reap_on_exit(nerve_options* o, int reap_on_exit) {
  if (!o) return -EINVAL;
  o->reap_on_exit = reap_on_exit != 0;
  return 0;
}

}  // extern "C"
