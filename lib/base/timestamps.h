// SPDX-License-Identifier: LGPL-2.1-or-later
// Times as nerve writes them in records and prints them: RFC 3339 in UTC with milliseconds,
// "2026-11-02T09:20:44.050Z". One format for the records (created_at, updated_at, reaped_at), the
// quarantine names and nervectl's ages and events.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace nerve {

// Now, as "2026-11-02T09:20:44.050Z".
std::string now_rfc3339();
// AT in the same format (UTC, milliseconds truncated), e.g. a time relative to now.
std::string rfc3339(std::chrono::system_clock::time_point at);
// "2026-11-02T09:20:44.050Z" (what now_rfc3339 writes; UTC only; fractions optional) as a time point,
// or nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

}  // namespace nerve
