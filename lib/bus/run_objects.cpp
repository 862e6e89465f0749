// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bus/run_objects.h"

#include "base/bus_label.h"
#include "system/sdbus_compat.h"

#include <spdlog/spdlog.h>
#include <systemd/sd-bus.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace nerve {

namespace {
constexpr const char* kPrefix = "/org/nerve/Lifecycle1/run";
constexpr const char* kInterface = "org.nerve.Lifecycle1.Run";

std::string run_of_path(const char* path) {
  char* label = nullptr;
  if (::sd_bus_path_decode(path, kPrefix, &label) <= 0 || !label) return "";
  std::string run = label;
  std::free(label);
  return run;
}
}  // namespace

const std::vector<std::pair<std::string, std::string>> kRunProperties = {
    {"Id", "s"},    {"Unit", "s"},       {"InvocationID", "s"}, {"ControlGroup", "s"}, {"State", "s"},
    {"MainPID", "u"}, {"ExitStatus", "i"}, {"Cause", "s"},        {"Frozen", "b"},  {"CreatedAt", "s"},
    {"GraceUSec", "t"},
};

std::string run_object_path(const std::string& run) {
  return std::string(kPrefix) + "/" + bus_path_label(run, LeadingDigit::Escaped);  // as sd_bus_path_encode
}

namespace {
std::vector<sd_bus_vtable> make_vtable(sd_bus_property_get_t getter) {
  std::vector<sd_bus_vtable> v;
  v.push_back(SD_BUS_VTABLE_START(0));
  for (const auto& [name, sig] : kRunProperties)
    v.push_back(SD_BUS_PROPERTY(name.c_str(), sig.c_str(), getter, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE));
  v.push_back(SD_BUS_VTABLE_END);
  return v;
}
}  // namespace

RunObjects::RunObjects(sdbus::IConnection& bus, RunStore& store, const ProcessLauncher& launcher, Cgroups& cgroups)
    : bus_(sd_bus_of(bus)), store_(store), launcher_(launcher), cgroups_(cgroups) {
  static const std::vector<sd_bus_vtable> vtable = make_vtable(&RunObjects::property);
  int r = ::sd_bus_add_fallback_vtable(bus_, &vtable_slot_, kPrefix, kInterface, vtable.data(), &RunObjects::find, this);
  if (r >= 0) r = ::sd_bus_add_node_enumerator(bus_, &enumerator_slot_, kPrefix, &RunObjects::enumerate, this);
  if (r < 0) {
    ::sd_bus_slot_unref(vtable_slot_);
    ::sd_bus_unref(bus_);
    throw std::runtime_error(std::string("cannot serve the run objects: ") + std::strerror(-r));
  }
}

RunObjects::~RunObjects() {
  ::sd_bus_slot_unref(enumerator_slot_);
  ::sd_bus_slot_unref(vtable_slot_);
  ::sd_bus_unref(bus_);
}

int RunObjects::find(sd_bus*, const char* path, const char*, void* userdata, void** found, sd_bus_error*) {
  auto* self = static_cast<RunObjects*>(userdata);
  std::string run = run_of_path(path);
  if (run.empty() || (run != self->removing_ && !self->view(run))) return 0;
  *found = self;
  return 1;
}

int RunObjects::enumerate(sd_bus*, const char*, void* userdata, char*** nodes, sd_bus_error*) {
  auto* self = static_cast<RunObjects*>(userdata);
  auto runs = self->store_.in_memory();
  auto* out = static_cast<char**>(std::calloc(runs.size() + 1, sizeof(char*)));
  if (!out) return -ENOMEM;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out[i] = ::strdup(run_object_path(runs[i]).c_str());
    if (!out[i]) {
      for (std::size_t j = 0; j < i; ++j) std::free(out[j]);
      std::free(out);
      return -ENOMEM;
    }
  }
  *nodes = out;
  return 0;
}

const Record* RunObjects::view(const std::string& run) {
  if (run == view_run_ && store_.generation() == view_generation_) return view_ ? &*view_ : nullptr;
  view_run_ = run;
  view_.reset();
  // Only what is in memory: a run on the disk but not in memory has no object (yet).
  if (store_.holds(run)) {
    auto r = store_.load(run);
    if (r && *r) view_ = std::move(**r);
  }
  view_generation_ = store_.generation();
  return view_ ? &*view_ : nullptr;
}

int RunObjects::property(sd_bus*, const char* path, const char*, const char* name, sd_bus_message* reply, void* userdata,
                         sd_bus_error*) {
  auto* self = static_cast<RunObjects*>(userdata);
  try {
    return self->append(run_of_path(path), name, reply);
  } catch (const std::exception& e) {
    spdlog::error("run object {}: property {}: {}", path, name, e.what());
    return -EIO;
  }
}

int RunObjects::append(const std::string& run, const std::string& name, sd_bus_message* reply) {
  const Record* r = view(run);
  Record none;
  if (!r) {
    none.run = run;
    r = &none;
  }
  if (name == "Id") return ::sd_bus_message_append(reply, "s", run.c_str());
  if (name == "Unit") return ::sd_bus_message_append(reply, "s", r->unit.c_str());
  if (name == "InvocationID") return ::sd_bus_message_append(reply, "s", r->invocation_id.c_str());
  if (name == "ControlGroup") return ::sd_bus_message_append(reply, "s", r->cgroup.c_str());
  if (name == "State") return ::sd_bus_message_append(reply, "s", to_string(r->state).c_str());
  if (name == "MainPID") return ::sd_bus_message_append(reply, "u", static_cast<uint32_t>(r->leader_pid));
  if (name == "ExitStatus") return ::sd_bus_message_append(reply, "i", static_cast<int32_t>(launcher_.exit_status(run)));
  if (name == "Cause") {
    auto s = store_.receipt_summary(run);
    std::string cause = s.file == ReceiptFile::Present && is_final(s.outcome) && s.cause ? to_string(*s.cause) : "";
    return ::sd_bus_message_append(reply, "s", cause.c_str());
  }
  if (name == "CreatedAt") return ::sd_bus_message_append(reply, "s", r->created_at.c_str());
  if (name == "GraceUSec") return ::sd_bus_message_append(reply, "t", static_cast<uint64_t>(r->grace_usec));
  if (name == "Frozen") {
    int frozen = r->state == RunState::Running && !r->cgroup.empty() && cgroups_.frozen(r->cgroup);
    return ::sd_bus_message_append(reply, "b", frozen);
  }
  return -ENOENT;
}

namespace {
// The properties whose values differ between two records of a run (ExitStatus: a new attempt
// starts without one; Frozen: only a running run can be frozen).
std::vector<std::string> differing(const Record& a, const Record& b) {
  std::vector<std::string> names;
  if (a.unit != b.unit) names.push_back("Unit");
  if (a.invocation_id != b.invocation_id) names.push_back("InvocationID");
  if (a.cgroup != b.cgroup) names.push_back("ControlGroup");
  if (a.state != b.state) names.push_back("State");
  if (a.leader_pid != b.leader_pid) names.push_back("MainPID");
  if (a.attempt != b.attempt) names.push_back("ExitStatus");
  if (a.created_at != b.created_at) names.push_back("CreatedAt");
  if (a.grace_usec != b.grace_usec) names.push_back("GraceUSec");
  if (a.state != b.state && (a.state == RunState::Running || b.state == RunState::Running)) names.push_back("Frozen");
  return names;
}
}  // namespace

void RunObjects::changed(const std::string& run, const StoreChange& c) {
  std::string path = run_object_path(run);
  if (!c.after) {
    if (!c.before) return;
    removing_ = run;
    int r = ::sd_bus_emit_object_removed(bus_, path.c_str());
    removing_.clear();
    if (r < 0) spdlog::debug("run {}: InterfacesRemoved not sent: {}", run, std::strerror(-r));
    return;
  }
  if (!c.before) {
    int r = ::sd_bus_emit_object_added(bus_, path.c_str());
    if (r < 0) spdlog::debug("run {}: InterfacesAdded not sent: {}", run, std::strerror(-r));
    return;
  }
  auto names = differing(*c.before, *c.after);
  if (c.cause_before != c.cause_after) names.push_back("Cause");
  emit_changed(run, names);
}

void RunObjects::exit_changed(const std::string& run) { emit_changed(run, {"ExitStatus"}); }
void RunObjects::frozen_changed(const std::string& run) { emit_changed(run, {"Frozen"}); }

void RunObjects::emit_changed(const std::string& run, const std::vector<std::string>& names) {
  if (names.empty() || !view(run)) return;
  std::vector<char*> strv;
  for (const auto& n : names) strv.push_back(const_cast<char*>(n.c_str()));
  strv.push_back(nullptr);
  int r = ::sd_bus_emit_properties_changed_strv(bus_, run_object_path(run).c_str(), kInterface, strv.data());
  if (r < 0) spdlog::debug("run {}: PropertiesChanged not sent: {}", run, std::strerror(-r));
}

}  // namespace nerve
