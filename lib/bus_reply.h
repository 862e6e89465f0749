// Where an Error (result.h) becomes a D-Bus error reply: only here, in the bus layer.
#pragma once

#include "result.h"

#include <sdbus-c++/Error.h>
#include <sdbus-c++/MethodResult.h>

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
template <typename... Outs>
class AsyncReply {
 public:
  explicit AsyncReply(sdbus::Result<Outs...>&& result)
      : result_(std::make_shared<sdbus::Result<Outs...>>(std::move(result))) {}
  void error(const Error& e) const { result_->returnError(sdbus::Error(e.name, e.message)); }
  void operator()(const Outs&... outs) const { result_->returnResults(outs...); }

 private:
  std::shared_ptr<sdbus::Result<Outs...>> result_;
};

}  // namespace nerve
