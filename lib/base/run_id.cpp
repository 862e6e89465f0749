// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/run_id.h"

#include "base/errors.h"

#include <array>

namespace nerve {

namespace {
bool run_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}
}  // namespace

std::optional<std::string> run_id_problem(std::string_view id) {
  if (id.empty()) return "a run id must not be empty";
  if (id.size() > kRunIdMax)
    return "a run id has at most " + std::to_string(kRunIdMax) + " characters, this one has " +
           std::to_string(id.size());
  if (id.front() == '.') return "a run id must not start with '.'";
  for (char c : id)
    if (!run_char(c)) return "a run id may only contain letters, digits and . _ : -";
  return std::nullopt;
}

Result<void> check_run_id(std::string_view id) {
  if (auto why = run_id_problem(id)) return Error{error::InvalidRunId, "invalid run id " + quote_value(id) + ": " + *why};
  return {};
}

bool is_valid_unit_name(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  auto dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  static constexpr std::array<std::string_view, 11> suffixes = {
      "service", "socket", "target", "device", "mount", "automount",
      "swap",    "timer",  "path",   "slice",  "scope"};
  auto suffix = name.substr(dot + 1);
  bool known = false;
  for (auto s : suffixes) known = known || s == suffix;
  if (!known) return false;
  for (char c : name.substr(0, dot)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == ':' || c == '_' || c == '.' || c == '-' || c == '\\';
    if (!ok) return false;
  }
  return true;
}

std::string scope_unit_name(std::string_view run, std::string_view nonce) {
  return "nerve-" + std::string(run) + "-" + std::string(nonce) + ".scope";
}

}  // namespace nerve
