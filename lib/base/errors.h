// SPDX-License-Identifier: LGPL-2.1-or-later
// Named bus errors of org.nerve.Lifecycle1, and how a bad value is quoted in their messages.
//
// Every error nerved returns over the bus has a name under org.nerve.Lifecycle1.Error and a message
// that quotes the value at fault and says what to do. docs/dbus-api.md lists them all. The logic
// returns them as Error values (result.h); the bus layer (bus_reply.h) sends them.
#pragma once

#include <string>
#include <string_view>

namespace nerve::error {

inline constexpr const char* kPrefix = "org.nerve.Lifecycle1.Error.";
inline constexpr const char* InvalidRunId = "org.nerve.Lifecycle1.Error.InvalidRunId";
inline constexpr const char* InvalidArgument = "org.nerve.Lifecycle1.Error.InvalidArgument";
inline constexpr const char* NoSuchRun = "org.nerve.Lifecycle1.Error.NoSuchRun";
inline constexpr const char* RunFinished = "org.nerve.Lifecycle1.Error.RunFinished";
inline constexpr const char* ContainmentUnavailable = "org.nerve.Lifecycle1.Error.ContainmentUnavailable";
inline constexpr const char* RecordFailed = "org.nerve.Lifecycle1.Error.RecordFailed";
inline constexpr const char* ScopeFailed = "org.nerve.Lifecycle1.Error.ScopeFailed";
inline constexpr const char* RunNotFinished = "org.nerve.Lifecycle1.Error.RunNotFinished";
inline constexpr const char* RunBusy = "org.nerve.Lifecycle1.Error.RunBusy";
inline constexpr const char* ExecFailed = "org.nerve.Lifecycle1.Error.ExecFailed";
inline constexpr const char* AccessDenied = "org.nerve.Lifecycle1.Error.AccessDenied";
inline constexpr const char* InvalidProperty = "org.nerve.Lifecycle1.Error.InvalidProperty";
inline constexpr const char* SealingUnavailable = "org.nerve.Lifecycle1.Error.SealingUnavailable";
// ReapAttempt of an attempt that a relaunch has already ended: the run is at a later attempt now.
inline constexpr const char* Superseded = "org.nerve.Lifecycle1.Error.Superseded";
// The caller (one bus connection) has too many calls in flight (call_gate.h): nothing was done.
inline constexpr const char* LimitExceeded = "org.nerve.Lifecycle1.Error.LimitExceeded";
// A fault inside nerved (an exception the handler did not expect): the call did nothing.
inline constexpr const char* Internal = "org.nerve.Lifecycle1.Error.Internal";

}  // namespace nerve::error

namespace nerve {

// 'value' in single quotes, with control characters, quotes and backslashes escaped (\n, \x01, ...),
// so that a bad value is shown exactly and cannot break the line it is printed on.
std::string quote_value(std::string_view value);

}  // namespace nerve
