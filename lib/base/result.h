// SPDX-License-Identifier: LGPL-2.1-or-later
// The one error convention of nerve's logic: a fallible call returns Result<T> (a value or an Error),
// or passes one to its completion callback (Done<T>). Nothing in the logic throws to its caller.
//
// Error.name is a bus error name (org.nerve.Lifecycle1.Error.*, errors.h) when the error is meant for
// a caller, or another dotted name for errors between the layers (org.freedesktop.systemd1.NoSuchUnit,
// nerve.Store.Corrupt, ...). Only the bus layer (manager_object.h, run_objects.h) turns an Error into
// an sdbus::Error reply.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace nerve {

struct Error {
  std::string name;
  std::string message;
};

// A value or an Error; a hand-written subset of std::expected (C++23, not in g++ 12).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT: implicit on purpose

  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

// The completion of an asynchronous call: called exactly once, on the event loop.
template <typename T>
using Done = std::function<void(Result<T>)>;

// Calls the wrapped completion at most once; later calls (a second answer, a late timer) are dropped.
template <typename T>
class ReplyOnce {
 public:
  ReplyOnce() = default;
  explicit ReplyOnce(Done<T> done) : done_(std::move(done)) {}
  bool pending() const { return static_cast<bool>(done_); }
  void operator()(Result<T> result) {
    if (!done_) return;
    auto done = std::move(done_);
    done_ = nullptr;
    done(std::move(result));
  }

 private:
  Done<T> done_;
};

}  // namespace nerve
