// SPDX-License-Identifier: LGPL-2.1-or-later
#include "libnerve/lean_call.h"

#include "libnerve/error.h"

#include "base/conventions.h"

#include <systemd/sd-bus.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <ctime>
#include <string>

namespace nerve::lib {

namespace {

constexpr std::uint64_t kUsecPerSecond = 1000000;

std::uint64_t now_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * kUsecPerSecond + static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

// "70 s", "1.5 s": a bound for a message.
std::string seconds(std::uint64_t usec) {
  std::string s = std::to_string(usec / kUsecPerSecond);
  if (std::uint64_t tenths = usec % kUsecPerSecond * 10 / kUsecPerSecond) s += "." + std::to_string(tenths);
  return s + " s";
}

// The reply of the call, or the error reply sd-bus makes up when the connection is lost.
int on_reply(sd_bus_message* m, void* userdata, sd_bus_error*) {
  *static_cast<sd_bus_message**>(userdata) = sd_bus_message_ref(m);
  return 0;
}

int on_grace(sd_bus_message* m, void* userdata, sd_bus_error*) {
  static_cast<LeanCall*>(userdata)->grace_answered(m);
  return 0;
}

int on_default_grace(sd_bus_message* m, void* userdata, sd_bus_error*) {
  static_cast<LeanCall*>(userdata)->default_grace_answered(m);
  return 0;
}

// sd-bus's own answer when a query had none in its 25 s, or the connection was lost.
bool no_answer(sd_bus_message* m) {
  return sd_bus_message_is_method_error(m, "org.freedesktop.DBus.Error.Timeout") ||
         sd_bus_message_is_method_error(m, "org.freedesktop.DBus.Error.NoReply");
}

}  // namespace

LeanCall::LeanCall(const char* method, std::uint64_t timeout_usec) : timeout_usec_(timeout_usec) {
  bound_why_ = seconds(timeout_usec_);
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
  failure_ = {e.name ? e.name : "System.Error", std::string(what) + " (" + (e.message ? e.message : "") + ")", -r};
  sd_bus_error_free(&e);
}

// The run's grace came (or nerved answered that its object has none: then the longest grace a run may
// have, the only bound that holds for any run; nerved, which answered, is up).
void LeanCall::grace_answered(sd_bus_message* m) {
  // sd-bus's own answer when the query had none in its 25 s (or the connection was lost): nerved did
  // not answer, and the bound stays what it is, which has run out by then.
  if (no_answer(m)) return;
  std::uint64_t grace = 0;
  bool known = !sd_bus_message_is_method_error(m, nullptr) && sd_bus_message_read(m, "v", "t", &grace) > 0 && grace;
  timeout_usec_ = reap_call_timeout_usec(known ? grace : kMaxGraceUsec);
  bound_why_ = seconds(timeout_usec_) + (known ? ", the run's grace of " + seconds(grace) + " plus " +
                                                                 seconds(kReapCallMarginUsec)
                                                           : ", the longest grace plus " + seconds(kReapCallMarginUsec));
}

// nerved's default grace came: the call, which may be reaping an earlier attempt with that grace, is
// bounded by it from when it was made (never less than the bound that ran out). An error answer
// (a nerved without the property) leaves the bound as it is, which has run out.
void LeanCall::default_grace_answered(sd_bus_message* m) {
  std::uint64_t grace = 0;
  if (no_answer(m) || sd_bus_message_is_method_error(m, nullptr) || sd_bus_message_read(m, "v", "t", &grace) <= 0 ||
      !grace)
    return;
  std::uint64_t bound = reap_call_timeout_usec(grace > kMaxGraceUsec ? kMaxGraceUsec : grace);
  if (bound <= timeout_usec_) return;
  timeout_usec_ = bound;
  bound_why_ = seconds(bound) + ", nerved's default grace of " + seconds(grace) + " plus " + seconds(kReapCallMarginUsec);
}

bool LeanCall::ask_default_grace() {
  if (!ask_default_grace_) return false;
  ask_default_grace_ = false;
  // The query has a bound of its own, from now: a nerved that answers it is up.
  timeout_usec_ = now_usec() - sent_usec_ + kCallTimeoutUsec;
  bound_why_ = seconds(timeout_usec_) + " (the bound of the default grace, then the query of DefaultGraceUSec)";
  int r = sd_bus_call_method_async(bus_, nullptr, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1",
                                   "org.freedesktop.DBus.Properties", "Get", on_default_grace, this, "ss",
                                   "org.nerve.Lifecycle1.Manager", "DefaultGraceUSec");
  return r >= 0;
}

// The call and, for a bound by a run's grace, the query of it, queued behind the Hello: all are
// written as soon as the authentication is accepted. sd-bus sets no timeout of its own on either
// (UINT64_MAX); the wait's deadline is this object's.
bool LeanCall::send() {
  sent_usec_ = now_usec();
  if (int r = sd_bus_call_async(bus_, nullptr, call_, on_reply, &reply_, UINT64_MAX); r < 0)
    return fail_errno(r, "Failed to send the call"), false;
  if (grace_run_.empty()) return true;
  timeout_usec_ = kCallTimeoutUsec;
  bound_why_ = seconds(timeout_usec_) + " for the run's grace (GraceUSec)";
  char* path = nullptr;
  int r = sd_bus_path_encode("/org/nerve/Lifecycle1/run", grace_run_.c_str(), &path);
  if (r >= 0)
    r = sd_bus_call_method_async(bus_, nullptr, "org.nerve.Lifecycle1", path, "org.freedesktop.DBus.Properties",
                                 "Get", on_grace, this, "ss", "org.nerve.Lifecycle1.Run", "GraceUSec");
  std::free(path);
  if (r < 0) return fail_errno(r, "Failed to ask the run's grace"), false;
  return true;
}

bool LeanCall::timed_out() {
  failed_ = true;
  failure_ = {"org.freedesktop.DBus.Error.Timeout",
              std::string("no answer to ") + sd_bus_message_get_member(call_) + " within " + bound_why_, ETIMEDOUT};
  return false;
}

bool LeanCall::wait_for_reply() {
  if (!send()) return false;
  while (!reply_) {
    int r = sd_bus_process(bus_, nullptr);
    if (r > 0) continue;
    if (r == 0) {
      std::uint64_t now = now_usec(), deadline = sent_usec_ + timeout_usec_;
      if (now >= deadline) {
        if (ask_default_grace()) continue;
        return timed_out();
      }
      r = sd_bus_wait(bus_, deadline - now);
    }
    if (r < 0 && r != -EINTR) return fail_errno(r, "Failed to get the reply"), false;
  }
  if (const sd_bus_error* e = sd_bus_message_get_error(reply_)) {
    failed_ = true;
    failure_ = {e->name ? e->name : "", e->message ? e->message : "", sd_bus_error_get_errno(e)};
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
              "unexpected reply (not " + std::string(types) + ") to " + sd_bus_message_get_member(call_), EBADMSG};
  return false;
}

std::string LeanCall::reply_sender() const {
  const char* sender = reply_ ? sd_bus_message_get_sender(reply_) : nullptr;
  return sender ? sender : "";
}

int LeanCall::fail_into(nerve_error* error) const {
  return set_error(error, failure_.name, failure_.message, failure_.errno_value);
}

}  // namespace nerve::lib
