// SPDX-License-Identifier: LGPL-2.1-or-later
// Context: the bus connection of one nervectl call, opened on first use (ctl.h).
#include "ctl/full/client.h"
#include "ctl/ctl.h"

namespace nerve::ctl {

Client& Context::client() {
  if (!client_) {
    client_ = std::make_unique<Client>(sdbus::createSessionBusConnection());
    if (timeout_usec_) client_->bus().setMethodCallTimeout(timeout_usec_);
  }
  return *client_;
}

void Context::disconnect() { client_.reset(); }

void Context::set_call_timeout_usec(std::uint64_t usec) {
  timeout_usec_ = usec;
  if (client_) client_->bus().setMethodCallTimeout(usec);
}

Context::Context() = default;
Context::~Context() = default;

}  // namespace nerve::ctl
