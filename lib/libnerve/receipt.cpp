// SPDX-License-Identifier: LGPL-2.1-or-later
#include "libnerve/receipt.h"

#include "libnerve/error.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace nerve::lib {

namespace {

using nlohmann::json;

std::int64_t figure(const json& usage, const char* key) {
  auto it = usage.find(key);
  if (it == usage.end() || !it->is_number()) return NERVE_USAGE_UNKNOWN;
  return it->get<std::int64_t>();
}

nerve_usage* usage_from_json(const json& u) {
  auto* usage = static_cast<nerve_usage*>(std::calloc(1, sizeof(nerve_usage)));
  if (!usage) return nullptr;
  usage->cpu_usage_usec = figure(u, "cpu_usage_usec");
  usage->cpu_user_usec = figure(u, "cpu_user_usec");
  usage->cpu_system_usec = figure(u, "cpu_system_usec");
  usage->memory_peak_bytes = figure(u, "memory_peak_bytes");
  usage->tasks_peak = figure(u, "tasks_peak");
  usage->io_read_bytes = figure(u, "io_read_bytes");
  usage->io_write_bytes = figure(u, "io_write_bytes");
  usage->oom_kills = figure(u, "oom_kills");
  return usage;
}

// The escaped scopes' units, NULL-terminated; false when out of memory.
bool escaped_from_json(const json& r, nerve_receipt& out) {
  json none = json::array();
  const json& escaped = r.contains("escaped") && r["escaped"].is_array() ? r["escaped"] : none;
  out.escaped = static_cast<char**>(std::calloc(escaped.size() + 1, sizeof(char*)));
  if (!out.escaped) return false;
  for (std::size_t i = 0; i < escaped.size(); ++i)
    if (!(out.escaped[i] = dup(escaped[i].value("unit", "")))) return false;
  return true;
}

bool strings_from_json(const json& r, const std::string& text, nerve_receipt& out) {
  out.json = dup(text);
  out.run = dup(r.value("run", ""));
  out.unit = dup(r.value("unit", ""));
  out.invocation_id = dup(r.value("invocation_id", ""));
  out.outcome = dup(r.value("outcome", ""));
  out.error = dup(r.value("error", ""));
  out.reaped_at = dup(r.value("reaped_at", ""));
  bool ok = out.json && out.run && out.unit && out.invocation_id && out.outcome && out.error && out.reaped_at;
  if (r.contains("cause") && r["cause"].is_string()) ok = (out.cause = dup(r["cause"].get<std::string>())) && ok;
  return ok;
}

}  // namespace

nerve_receipt* receipt_from_json(const json& r, const std::string& text) {
  if (!r.is_object()) throw std::invalid_argument("a receipt is a JSON object");
  // Owned until it is whole: a field of the wrong type ({"run": 5}) throws halfway, and whatever was
  // filled in by then is freed with it (nerve_receipt_free frees what is set, skips what is not).
  std::unique_ptr<nerve_receipt, void (*)(nerve_receipt*)> out(
      static_cast<nerve_receipt*>(std::calloc(1, sizeof(nerve_receipt))), nerve_receipt_free);
  if (!out) return nullptr;
  out->attempt = r.value("attempt", 0u);
  out->killed = r.value("killed", false);
  out->duration_usec = r.value("duration_usec", std::uint64_t{0});
  out->usage_final = r.value("usage_final", false);
  bool ok = strings_from_json(r, text, *out) && escaped_from_json(r, *out);
  if (ok && r.contains("usage") && r["usage"].is_object()) ok = (out->usage = usage_from_json(r["usage"]));
  return ok ? out.release() : nullptr;
}

}  // namespace nerve::lib

extern "C" {

int nerve_receipt_parse(const char* text, nerve_receipt** ret, nerve_error* error) {
  using nerve::lib::own_error;
  if (!text || !ret) return own_error(error, "InvalidArgument", "no receipt text or no place for the receipt", EINVAL);
  try {
    nerve_receipt* r = nerve::lib::receipt_from_json(nlohmann::json::parse(text), text);
    if (!r) return nerve::lib::set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
    *ret = r;
    return 0;
  } catch (const std::bad_alloc&) {
    return nerve::lib::set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  } catch (const std::exception& e) {
    return own_error(error, "BadReceipt", std::string("not a receipt: ") + e.what(), EBADMSG);
  }
}

void nerve_receipt_free(nerve_receipt* r) {
  if (!r) return;
  for (char* s : {r->json, r->run, r->unit, r->invocation_id, r->outcome, r->error, r->reaped_at, r->cause})
    std::free(s);
  for (char** e = r->escaped; e && *e; ++e) std::free(*e);
  std::free(r->escaped);
  std::free(r->usage);
  std::free(r);
}

int nerve_receipt_ok(const nerve_receipt* r) {
  return r && r->outcome && (std::string_view(r->outcome) == "complete" || std::string_view(r->outcome) == "no_scope");
}

}  // extern "C"
