// SPDX-License-Identifier: LGPL-2.1-or-later
// The manager's queries and its own operations: GetRunPath, GetRun, ListRuns, GetMetrics (served in turns,
// call_gate.h), Reconcile and SetSliceProperties (manager_object.h).
#include "bus/manager_calls.h"

#include "base/errors.h"
#include "base/run_controls.h"
#include "bus/run_objects.h"
#include "system/slice_properties.h"

namespace nerve {

void ManagerObject::GetRunPath(sdbus::Result<sdbus::ObjectPath>&& result, std::string run) try {
  AsyncReply reply(std::move(result));
  in_turn("GetRunPath", reply, [this, reply, run] {
    value_or_throw(lifecycle_.exists(run));
    reply(sdbus::ObjectPath(run_object_path(run)));
  });
} catch (...) {
  rethrow_named("GetRunPath");
}

void ManagerObject::GetRun(sdbus::Result<std::string>&& result, std::string run) try {
  AsyncReply reply(std::move(result));
  in_turn("GetRun", reply, [this, reply, run] {
    lifecycle_.status_json(run, [reply](Result<std::string> status) {
      if (!status) return reply.error(status.error());
      reply(*status);
    });
  });
} catch (...) {
  rethrow_named("GetRun");
}

void ManagerObject::ListRuns(
    sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>>&& result) try {
  AsyncReply reply(std::move(result));
  in_turn("ListRuns", reply, [this, reply] {
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> out;
    for (auto& s : value_or_throw(lifecycle_.list())) out.emplace_back(s.run, s.state, s.unit, s.outcome);
    reply(out);
  });
} catch (...) {
  rethrow_named("ListRuns");
}

void ManagerObject::GetMetrics(sdbus::Result<std::string>&& result, std::string format) try {
  AsyncReply reply(std::move(result));
  auto f = from_string<ExpositionFormat>(format.empty() ? "openmetrics" : format);
  if (!f)
    throw_bus_error(error::InvalidArgument,
                    "metrics format " + quote_value(format) + " is not known: expected openmetrics or prometheus");
  in_turn("GetMetrics", reply, [this, reply, f] {
    if (!metrics_) throw_bus_error(error::Internal, "this nerved keeps no metrics");
    reply(metrics_->text(*f));
  });
} catch (...) {
  rethrow_named("GetMetrics");
}

void ManagerObject::Reconcile(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>&& result) try {
  AsyncReply reply(std::move(result));
  if (!admit(reply)) return;
  with_own_caller("Reconcile", reply, [this, reply] {
    lifecycle_.reconcile([reply](std::vector<ReconcileLine> lines) {
      std::vector<sdbus::Struct<std::string, std::string, std::string>> out;
      for (auto& l : lines) out.emplace_back(l.run, to_string(l.action), l.detail);
      reply(out);
    });
  });
} catch (...) {
  rethrow_named("Reconcile");
}

void ManagerObject::SetSliceProperties(sdbus::Result<>&& result, std::string slice,
                                       std::vector<sdbus::Struct<std::string, std::string>> properties) try {
  AsyncReply<> reply(std::move(result));
  if (!admit(reply)) return;
  value_or_throw(check_slice_name(slice));
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto& p : properties) pairs.emplace_back(p.get<0>(), p.get<1>());
  auto parsed = parse_property_pairs(pairs);
  if (!parsed) throw_bus_error(parsed.error().name, parsed.error().message);
  if (parsed->unit_properties.empty()) throw_bus_error(error::InvalidArgument, "no properties to set on " + quote_value(slice));
  set_slice_properties(systemd_, slice, *parsed, [reply](Result<void> set) {
    if (set) return reply();
    reply.error(set.error());
  });
} catch (...) {
  rethrow_named("SetSliceProperties");
}

}  // namespace nerve
