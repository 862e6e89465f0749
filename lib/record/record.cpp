// SPDX-License-Identifier: LGPL-2.1-or-later
#include "record/record.h"

#include "base/conventions.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/timestamps.h"
#include "base/run_id.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>
#include <type_traits>

namespace nerve {

using nlohmann::json;

std::string to_json_text(const Record& r) {
  json j = {{"version", r.version},
            {"run", r.run},
            {"attempt", r.attempt},
            {"backend", to_string(r.backend)},
            {"unit", r.unit},
            {"nonce", r.nonce},
            {"boot_id", r.boot_id},
            {"invocation_id", r.invocation_id},
            {"cgroup", r.cgroup},
            {"cgroup_id", r.cgroup_id},
            {"leaf", r.leaf},
            {"leaf_id", r.leaf_id},
            {"state", to_string(r.state)},
            {"released", r.released},
            {"leader_pid", r.leader_pid},
            {"leader_start_time", r.leader_start_time},
            {"reap_on_exit", r.reap_on_exit},
            {"grace_usec", r.grace_usec},
            {"keep", r.keep},
            {"owner", {{"kind", to_string(r.owner.kind)}, {"pid", r.owner.pid}, {"start_time", r.owner.start_time}, {"name", r.owner.name}}},
            {"properties", r.properties},
            {"slice", r.slice},
            {"timeout_usec", r.timeout_usec},
            {"parent", r.parent},
            {"created_at", r.created_at},
            {"updated_at", r.updated_at}};
  return j.dump(2) + "\n";
}

std::string to_json_text(const Receipt& r) {
  json j = {{"version", r.version},
            {"run", r.run},
            {"attempt", r.attempt},
            {"unit", r.unit},
            {"invocation_id", r.invocation_id},
            {"outcome", to_string(r.outcome)},
            {"error", r.error},
            {"killed", r.killed},
            {"duration_usec", r.duration_usec},
            {"reaped_at", r.reaped_at},
            {"cause", r.cause ? json(to_string(*r.cause)) : json(nullptr)},
            {"usage", r.usage ? json(*r.usage) : json(nullptr)},
            {"usage_final", r.usage_final},
            {"escaped", json::array()}};
  for (const auto& e : r.escaped) j["escaped"].push_back({{"unit", e.unit}, {"pids", e.pids}});
  return j.dump(2) + "\n";
}

namespace {
json parse_versioned(const std::string& text, const char* what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw RecordCorrupt(std::string(what) + " is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw RecordCorrupt(std::string(what) + " is not a JSON object");
  if (!j.contains("version") || !j["version"].is_number_integer())
    throw RecordCorrupt(std::string(what) + " has no version");
  if (j["version"].get<int>() != kRecordVersion)
    throw RecordCorrupt(std::string(what) + " has unknown version " + j["version"].dump());
  return j;
}

template <typename T>
T field(const json& j, const char* name, const char* what) {
  try {
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann would turn -1 into a huge unsigned number; a negative count or id is corrupt.
      if (!j.at(name).is_number_unsigned()) throw RecordCorrupt(std::string(what) + " has a negative or non-integer '" + name + "'");
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann would cast a float to the integer, undefined behaviour when it is out of range.
      if (!j.at(name).is_number_integer()) throw RecordCorrupt(std::string(what) + " has a non-integer '" + name + "'");
    }
    return j.at(name).get<T>();
  } catch (const json::exception&) {
    throw RecordCorrupt(std::string(what) + " lacks a valid '" + name + "'");
  }
}
// A number older files may lack: 'fallback' when absent, else as field() reads it (json::value would
// cast a float, as above).
template <typename T>
T number_or(const json& j, const char* name, T fallback, const char* what) {
  return j.contains(name) ? field<T>(j, name, what) : fallback;
}
// Fields added after version 1 was first written: absent in older records, which still read.
void read_run_controls(const json& j, Record& r) {
  const char* what = "lifecycle.json";
  if (j.contains("properties")) r.properties = field<std::vector<std::string>>(j, "properties", what);
  if (j.contains("slice")) r.slice = field<std::string>(j, "slice", what);
  if (j.contains("timeout_usec")) r.timeout_usec = field<std::uint64_t>(j, "timeout_usec", what);
  if (j.contains("parent")) r.parent = field<std::string>(j, "parent", what);
  if (j.contains("leader_start_time")) r.leader_start_time = field<std::uint64_t>(j, "leader_start_time", what);
  if (j.contains("reap_on_exit")) r.reap_on_exit = field<bool>(j, "reap_on_exit", what);
  if (j.contains("leaf")) r.leaf = field<std::string>(j, "leaf", what);
  if (j.contains("leaf_id")) r.leaf_id = field<std::uint64_t>(j, "leaf_id", what);
  if (j.contains("released")) r.released = field<bool>(j, "released", what);
  if (j.contains("backend")) {
    auto b = from_string<BackendKind>(field<std::string>(j, "backend", what));
    if (!b) throw RecordCorrupt("lifecycle.json has an unknown backend " + j["backend"].dump());
    r.backend = *b;
  }
}
}  // namespace

namespace {
bool is_hex(std::string_view s, std::size_t size) {
  return s.size() == size && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// An absolute path of plain segments: no empty, '.' or '..' segment, no control characters.
bool plain_absolute_path(std::string_view p) {
  if (p.size() < 2 || p.front() != '/' || p.back() == '/') return false;
  for (char c : p)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  std::size_t start = 1;
  while (start <= p.size()) {
    auto end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    auto seg = p.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = end + 1;
  }
  return true;
}

[[noreturn]] void never_written(const char* field, const std::string& value, const char* rule) {
  throw RecordCorrupt(std::string("lifecycle.json has a ") + field + " nerve would never write: " + quote_value(value) +
                      " (" + rule + ")");
}
}  // namespace

void check_record_fields(const Record& r) {
  if (auto why = run_id_problem(r.run)) never_written("run", r.run, why->c_str());
  if (!is_hex(r.nonce, 16)) never_written("nonce", r.nonce, "16 hex digits");
  if (r.unit != scope_unit_name(r.run, r.nonce)) never_written("unit", r.unit, "nerve-<run>-<nonce>.scope");
  if (!r.boot_id.empty() && !is_hex(r.boot_id, 32)) never_written("boot_id", r.boot_id, "32 hex digits");
  if (!r.invocation_id.empty() && !is_hex(r.invocation_id, 32))
    never_written("invocation_id", r.invocation_id, "32 hex digits");
  if (!r.cgroup.empty() && !plain_absolute_path(r.cgroup))
    never_written("cgroup", r.cgroup, "an absolute path without empty, '.' or '..' parts");
  if (!r.leaf.empty() && (r.cgroup.empty() || r.leaf != leaf_of(r.cgroup)))
    never_written("leaf", r.leaf, "<cgroup>/run");
  if (r.leader_pid < 0) never_written("leader_pid", std::to_string(r.leader_pid), "a pid");
  if (r.grace_usec > kMaxGraceUsec) never_written("grace_usec", std::to_string(r.grace_usec), "at most one hour");
  const Owner& o = r.owner;
  bool bad = o.kind == OwnerKind::Process ? o.pid <= 0 : o.kind == OwnerKind::Bus && (o.name.empty() || o.name.front() != ':');
  if (bad) never_written("owner", to_string(o.kind) + " " + std::to_string(o.pid) + " " + o.name, "a process (pid > 0), a unique bus name, or none");
}

// A field of the wrong type that the parse reads with a default (json::value) throws json's
// type_error: corrupt too, like every other bad field, never an exception the store does not expect.
Record parse_record(const std::string& text) try {
  const char* what = "lifecycle.json";
  json j = parse_versioned(text, what);
  Record r;
  r.run = field<std::string>(j, "run", what);
  r.attempt = field<unsigned>(j, "attempt", what);
  r.unit = field<std::string>(j, "unit", what);
  r.nonce = field<std::string>(j, "nonce", what);
  r.boot_id = field<std::string>(j, "boot_id", what);
  r.invocation_id = field<std::string>(j, "invocation_id", what);
  r.cgroup = field<std::string>(j, "cgroup", what);
  r.cgroup_id = field<std::uint64_t>(j, "cgroup_id", what);
  auto st = from_string<RunState>(field<std::string>(j, "state", what));
  if (!st) throw RecordCorrupt("lifecycle.json has an unknown state " + j["state"].dump());
  r.state = *st;
  r.leader_pid = field<int>(j, "leader_pid", what);
  r.grace_usec = field<std::uint64_t>(j, "grace_usec", what);
  r.keep = field<bool>(j, "keep", what);
  const json owner = j.value("owner", json::object());
  auto kind = from_string<OwnerKind>(owner.value("kind", "none"));
  if (!kind) throw RecordCorrupt("lifecycle.json has an unknown owner kind " + owner["kind"].dump());
  r.owner.kind = *kind;
  r.owner.pid = number_or(owner, "pid", 0, what);
  r.owner.start_time = number_or(owner, "start_time", std::uint64_t{0}, what);
  r.owner.name = owner.value("name", "");
  read_run_controls(j, r);
  r.created_at = j.value("created_at", "");
  r.updated_at = j.value("updated_at", "");
  check_record_fields(r);
  return r;
} catch (const json::exception& e) {
  throw RecordCorrupt(std::string("lifecycle.json has a field of the wrong type: ") + e.what());
}

Receipt parse_receipt(const std::string& text) try {
  const char* what = "receipt.json";
  json j = parse_versioned(text, what);
  Receipt r;
  r.run = field<std::string>(j, "run", what);
  r.attempt = field<unsigned>(j, "attempt", what);
  r.unit = field<std::string>(j, "unit", what);
  r.invocation_id = field<std::string>(j, "invocation_id", what);
  auto o = from_string<Outcome>(field<std::string>(j, "outcome", what));
  if (!o) throw RecordCorrupt("receipt.json has an unknown outcome " + j["outcome"].dump());
  r.outcome = *o;
  r.error = field<std::string>(j, "error", what);
  r.killed = j.value("killed", false);
  r.duration_usec = number_or(j, "duration_usec", std::uint64_t{0}, what);
  r.reaped_at = j.value("reaped_at", "");
  // Receipts of the first version have no cause and no usage: both stay absent.
  if (j.contains("cause") && !j["cause"].is_null()) {
    auto c = j["cause"].is_string() ? from_string<Cause>(j["cause"].get<std::string>()) : std::nullopt;
    if (!c) throw RecordCorrupt("receipt.json has an unknown cause " + j["cause"].dump());
    r.cause = *c;
  }
  if (j.contains("usage") && j["usage"].is_object()) {
    try {
      r.usage = j["usage"].get<Usage>();
    } catch (const json::exception& e) {
      throw RecordCorrupt(std::string("receipt.json has an invalid usage: ") + e.what());
    }
  }
  r.usage_final = j.value("usage_final", false);
  // Receipts written before escaped scopes were looked for have no "escaped": none is known.
  if (j.contains("escaped")) {
    try {
      for (const auto& e : j.at("escaped")) r.escaped.push_back({e.at("unit").get<std::string>(), e.at("pids").get<std::vector<int>>()});
    } catch (const json::exception& e) {
      throw RecordCorrupt(std::string("receipt.json has an invalid escaped: ") + e.what());
    }
  }
  return r;
} catch (const json::exception& e) {
  throw RecordCorrupt(std::string("receipt.json has a field of the wrong type: ") + e.what());
}

std::optional<std::chrono::system_clock::time_point> deadline(const Record& record) {
  Duration timeout = Duration::from_usec(record.timeout_usec);
  if (!timeout.is_limit()) return std::nullopt;
  auto created = parse_rfc3339(record.created_at);
  if (!created) return std::nullopt;
  return saturating_add(*created, timeout);
}

}  // namespace nerve
