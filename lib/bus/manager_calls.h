// SPDX-License-Identifier: LGPL-2.1-or-later
// How a method of the manager object is called (manager_object.h), for the files that implement its
// methods: admitted (call_gate.h), served in its client's turn or once its caller is known, and every
// exception turned into a named error reply. Only the manager object's files include this.
#pragma once

#include "base/errors.h"
#include "bus/manager_object.h"

#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>

namespace nerve {

// AccessDenied unless 'uid' is nerved's own.
void check_caller_uid(uid_t uid);

// In a handler's catch (...): a named bus error passes; any other exception becomes Error.Internal,
// naming the method, instead of leaving sdbus-c++ or the event loop to deal with it.
[[noreturn]] void rethrow_named(const char* method);

// Runs 'work'; an exception it throws becomes the error reply of 'method' (rethrow_named), so that
// work done after the handler returned (in a turn, once the caller is known) answers its call.
template <typename... Outs>
void answer_errors(const char* method, const AsyncReply<Outs...>& reply, const std::function<void()>& work) {
  try {
    try {
      work();
    } catch (...) {
      rethrow_named(method);
    }
  } catch (const sdbus::Error& e) {
    reply.error(Error{e.getName(), e.getMessage()});
  }
}

template <typename... Outs>
bool ManagerObject::admit(const AsyncReply<Outs...>& reply) {
  std::string sender = current_sender();
  auto ticket = gate_.admit(sender);
  if (ticket) {
    reply.hold(std::move(ticket));
    return true;
  }
  reply.error(Error{error::LimitExceeded, "client " + quote_value(sender) + " already has " +
                                              std::to_string(gate_.limit()) +
                                              " calls in flight, nerved's limit per client; nothing was done: "
                                              "wait for their replies, then call again"});
  return false;
}

template <typename... Outs>
void ManagerObject::in_turn(const char* method, AsyncReply<Outs...> reply, std::function<void()> work) {
  if (!admit(reply)) return;
  gate_.queue(current_sender(), [method, reply, work = std::move(work)] { answer_errors(method, reply, work); });
}

template <typename... Outs>
void ManagerObject::with_caller(const char* method, const AsyncReply<Outs...>& reply,
                                std::function<void(const BusCaller&)> work) {
  callers_.of(current_sender(), [method, reply, work = std::move(work)](Result<BusCaller> caller) {
    if (!caller) return reply.error(caller.error());
    answer_errors(method, reply, [&] { work(*caller); });
  });
}

template <typename... Outs>
void ManagerObject::with_own_caller(const char* method, const AsyncReply<Outs...>& reply, std::function<void()> work) {
  with_caller(method, reply, [work = std::move(work)](const BusCaller& caller) {
    check_caller_uid(caller.uid);
    work();
  });
}

template <typename... Outs>
void ManagerObject::count_start(const AsyncReply<Outs...>& reply, StartMethod method) {
  if (!metrics_) return;
  auto arrived = std::chrono::steady_clock::now();
  reply.on_answer([metrics = metrics_, changed = metrics_changed_, method, arrived](bool ok) {
    metrics->start_answered(method, ok, std::chrono::steady_clock::now() - arrived);
    if (changed) changed();
  });
}

}  // namespace nerve
