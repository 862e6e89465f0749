#include "ctl/lean_call.h"

#include <systemd/sd-bus.h>

#include <cerrno>
#include <cstdarg>

namespace nerve::ctl {

namespace {

// The reply (or the error reply sd-bus makes up for a timeout or a lost connection) of the call.
int on_reply(sd_bus_message* m, void* userdata, sd_bus_error*) {
  *static_cast<sd_bus_message**>(userdata) = sd_bus_message_ref(m);
  return 0;
}

}  // namespace

LeanCall::LeanCall(const char* method, std::uint64_t timeout_usec) : timeout_usec_(timeout_usec) {
  // sd_bus_open_user connects and queues the authentication and the Hello; nothing waits here.
  if (int r = sd_bus_open_user(&bus_); r < 0) {
    fail_errno(r, "Failed to open bus");
    return;
  }
  check(sd_bus_message_new_method_call(bus_, &call_, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1",
                                       "org.nerve.Lifecycle1.Manager", method));
}

LeanCall::~LeanCall() {
  sd_bus_message_unref(reply_);
  sd_bus_message_unref(call_);
  close();
}

void LeanCall::close() { bus_ = sd_bus_flush_close_unref(bus_); }

void LeanCall::check(int r) {
  if (r < 0 && !failed_) fail_errno(r, "Failed to make the call");
}

void LeanCall::fail_errno(int r, const char* what) {
  failed_ = true;
  sd_bus_error e = SD_BUS_ERROR_NULL;
  sd_bus_error_set_errno(&e, r);
  failure_ = {e.name ? e.name : "System.Error", std::string(what) + " (" + (e.message ? e.message : "") + ")"};
  sd_bus_error_free(&e);
}

bool LeanCall::wait_for_reply() {
  // Queued behind the Hello: both are written as soon as the authentication is accepted.
  if (int r = sd_bus_call_async(bus_, nullptr, call_, on_reply, &reply_, timeout_usec_); r < 0)
    return fail_errno(r, "Failed to send the call"), false;
  while (!reply_) {
    int r = sd_bus_process(bus_, nullptr);
    if (r > 0) continue;
    if (r == 0) r = sd_bus_wait(bus_, UINT64_MAX);  // sd-bus wakes up for the call's timeout
    if (r < 0 && r != -EINTR) return fail_errno(r, "Failed to get the reply"), false;
  }
  if (const sd_bus_error* e = sd_bus_message_get_error(reply_)) {
    failed_ = true;
    failure_ = {e->name ? e->name : "", e->message ? e->message : ""};
    return false;
  }
  return true;
}

bool LeanCall::read(const char* types, ...) {
  if (failed_ || !wait_for_reply()) return false;
  if (!*types) return true;  // an answer with nothing in it
  va_list ap;
  va_start(ap, types);
  int r = sd_bus_message_readv(reply_, types, ap);
  va_end(ap);
  if (r > 0) return true;
  failed_ = true;
  failure_ = {"org.freedesktop.DBus.Error.InvalidArgs",
              "unexpected reply (not " + std::string(types) + ") to " + sd_bus_message_get_member(call_)};
  return false;
}

}  // namespace nerve::ctl
