// SPDX-License-Identifier: LGPL-2.1-or-later
#include "libnerve/status.h"

#include "libnerve/error.h"
#include "libnerve/receipt.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <new>
#include <string>

namespace nerve::lib {

namespace {

using nlohmann::json;

bool fill(const json& doc, const std::string& text, nerve_status& s) {
  const json& rec = doc.at("record");
  json none = json::object();
  const json& live = doc.contains("live") && doc["live"].is_object() ? doc["live"] : none;
  s.attempt = rec.value("attempt", 0u);
  s.leader_pid = rec.value("leader_pid", 0u);
  s.live_known = live.value("known", false);
  s.populated = live.value("populated", false);
  s.json = dup(text);
  s.run = dup(rec.value("run", ""));
  s.state = dup(rec.value("state", ""));
  s.unit = dup(rec.value("unit", ""));
  s.invocation_id = dup(rec.value("invocation_id", ""));
  s.cgroup = dup(rec.value("cgroup", ""));
  s.active_state = dup(live.value("active_state", ""));
  bool ok = s.json && s.run && s.state && s.unit && s.invocation_id && s.cgroup && s.active_state;
  if (ok && doc.contains("receipt") && doc["receipt"].is_object())
    ok = (s.receipt = receipt_from_json(doc["receipt"], doc["receipt"].dump()));
  return ok;
}

}  // namespace

int status_from_text(const char* text, nerve_status** ret, nerve_error* error) {
  auto* s = static_cast<nerve_status*>(std::calloc(1, sizeof(nerve_status)));
  if (!s) return set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  int r = 0;
  try {
    if (!fill(json::parse(text), text, *s)) r = set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  } catch (const std::bad_alloc&) {
    r = set_error(error, "System.Error.ENOMEM", "out of memory", ENOMEM);
  } catch (const std::exception& e) {
    r = own_error(error, "BadStatus", std::string("nerved answered a status that does not parse: ") + e.what(), EBADMSG);
  }
  if (r < 0) {
    nerve_status_free(s);
    return r;
  }
  *ret = s;
  return 0;
}

}  // namespace nerve::lib

extern "C" void nerve_status_free(nerve_status* s) {
  if (!s) return;
  for (char* p : {s->json, s->run, s->state, s->unit, s->invocation_id, s->cgroup, s->active_state}) std::free(p);
  nerve_receipt_free(s->receipt);
  std::free(s);
}
