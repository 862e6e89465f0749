// SPDX-License-Identifier: LGPL-2.1-or-later
// Where an Error (result.h) becomes a D-Bus error reply: only here, in the bus layer.
#pragma once

#include "base/result.h"

#include <sdbus-c++/Error.h>
#include <sdbus-c++/MethodResult.h>

#include <functional>
#include <memory>
#include <string>

namespace nerve {

// Ends the current method handler with the error reply 'name' / 'message'.
[[noreturn]] inline void throw_bus_error(const std::string& name, const std::string& message) {
  throw sdbus::Error(name, message);
}
[[noreturn]] inline void throw_bus_error(const Error& e) { throw_bus_error(e.name, e.message); }

// The value of 'r', or the error reply.
template <typename T>
T value_or_throw(Result<T> r) {
  if (!r) throw_bus_error(r.error());
  return std::move(r).value();
}
inline void value_or_throw(const Result<void>& r) {
  if (!r) throw_bus_error(r.error());
}

// An asynchronous method's reply slot that completion callbacks can share (sdbus::Result is move-only).
// It may hold the call's ticket (call_gate.h), given back as soon as the reply is sent, and a watcher
// told once whether the call was answered with results (true) or not (false: an error reply, or the
// slot dropped unanswered because the handler threw and sdbus-c++ answered the error).
template <typename... Outs>
class AsyncReply {
 public:
  explicit AsyncReply(sdbus::Result<Outs...>&& result) : state_(std::make_shared<State>(std::move(result))) {}
  void hold(std::shared_ptr<void> ticket) const { state_->ticket = std::move(ticket); }
  void on_answer(std::function<void(bool ok)> fn) const { state_->answered = std::move(fn); }
  void error(const Error& e) const {
    state_->result.returnError(sdbus::Error(e.name, e.message));
    state_->ticket.reset();
    state_->tell(false);
  }
  void operator()(const Outs&... outs) const {
    state_->result.returnResults(outs...);
    state_->ticket.reset();
    state_->tell(true);
  }

 private:
  struct State {
    explicit State(sdbus::Result<Outs...>&& r) : result(std::move(r)) {}
    ~State() { tell(false); }
    void tell(bool ok) noexcept {
      if (!answered) return;
      auto fn = std::move(answered);
      answered = nullptr;
      try {
        fn(ok);
      } catch (...) {  // a watcher only counts; it never changes the answer
      }
    }
    sdbus::Result<Outs...> result;
    std::shared_ptr<void> ticket;
    std::function<void(bool)> answered;
  };
  std::shared_ptr<State> state_;
};

}  // namespace nerve
