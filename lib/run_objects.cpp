#include "run_objects.h"

#include "bus_label.h"

#include <spdlog/spdlog.h>

namespace nerve {

std::string run_object_path(const std::string& run) {
  return "/org/nerve/Lifecycle1/run/" + bus_path_label(run, true);  // as sd_bus_path_encode
}

class RunObjects::Object : public sdbus::AdaptorInterfaces<org::nerve::Lifecycle1::Run_adaptor, sdbus::Properties_adaptor,
                                                       sdbus::ManagedObject_adaptor> {
 public:
  Object(sdbus::IConnection& bus, std::string run, RunStore& store, const ProcessLauncher& launcher, Cgroups& cgroups)
      : AdaptorInterfaces(bus, run_object_path(run)), run_(std::move(run)), store_(store), launcher_(launcher),
        cgroups_(cgroups) {
    registerAdaptor();
    last_ = snapshot();
    emitInterfacesAddedSignal();
  }
  ~Object() {
    emitInterfacesRemovedSignal();  // while the interfaces are still registered: it names them
    unregisterAdaptor();
  }

  // Emits PropertiesChanged for the properties whose value differs from the last one seen.
  void changed() {
    Snapshot now = snapshot();
    std::vector<std::string> names;
    if (now.unit != last_.unit) names.push_back("Unit");
    if (now.invocation_id != last_.invocation_id) names.push_back("InvocationID");
    if (now.cgroup != last_.cgroup) names.push_back("ControlGroup");
    if (now.state != last_.state) names.push_back("State");
    if (now.main_pid != last_.main_pid) names.push_back("MainPID");
    if (now.exit_status != last_.exit_status) names.push_back("ExitStatus");
    if (now.cause != last_.cause) names.push_back("Cause");
    if (now.frozen != last_.frozen) names.push_back("Frozen");
    last_ = now;
    if (!names.empty()) emitPropertiesChangedSignal(org::nerve::Lifecycle1::Run_adaptor::INTERFACE_NAME, names);
  }

 private:
  struct Snapshot {
    std::string unit, invocation_id, cgroup, state;
    uint32_t main_pid = 0;
    int32_t exit_status = -1;
    std::string cause;
    bool frozen = false;
  };
  Snapshot snapshot() {
    Record r = record();
    return {r.unit, r.invocation_id, r.cgroup, to_string(r.state), static_cast<uint32_t>(r.leader_pid),
            launcher_.exit_status(run_), Cause(), Frozen()};
  }

  Record record() {
    if (auto r = store_.load(run_); r && *r) return **r;
    Record r;
    r.run = run_;
    return r;
  }
  std::string Id() override { return run_; }
  std::string Unit() override { return record().unit; }
  std::string InvocationID() override { return record().invocation_id; }
  std::string ControlGroup() override { return record().cgroup; }
  std::string State() override { return to_string(record().state); }
  uint32_t MainPID() override { return static_cast<uint32_t>(record().leader_pid); }
  int32_t ExitStatus() override { return launcher_.exit_status(run_); }
  std::string Cause() override {
    auto receipt = store_.load_receipt(run_);
    if (!receipt || !*receipt || !is_final((*receipt)->outcome) || !(*receipt)->cause) return "";
    return to_string(*(*receipt)->cause);
  }
  std::string CreatedAt() override { return record().created_at; }
  bool Frozen() override {
    Record r = record();
    return r.state == RunState::Running && !r.cgroup.empty() && cgroups_.frozen(r.cgroup);
  }

  std::string run_;
  RunStore& store_;
  const ProcessLauncher& launcher_;
  Cgroups& cgroups_;
  Snapshot last_;
};

RunObjects::RunObjects(sdbus::IConnection& bus, RunStore& store, const ProcessLauncher& launcher, Cgroups& cgroups)
    : bus_(bus), store_(store), launcher_(launcher), cgroups_(cgroups) {}

RunObjects::~RunObjects() = default;

void RunObjects::add_all() {
  auto runs = store_.runs();
  if (!runs) return spdlog::error("cannot list runs for their bus objects: {}", runs.error().message);
  for (const auto& run : *runs) changed(run);
}

void RunObjects::changed(const std::string& run) {
  auto record = store_.load(run);
  bool exists = record && record->has_value();
  auto it = objects_.find(run);
  if (!exists) {
    if (it != objects_.end()) objects_.erase(it);
    return;
  }
  if (it == objects_.end()) {
    objects_.emplace(run, std::make_unique<Object>(bus_, run, store_, launcher_, cgroups_));
    return;
  }
  it->second->changed();
}

}  // namespace nerve
