// One bus object per run (interface org.nerve.Lifecycle1.Run), so engines can watch runs. The
// manager object is their org.freedesktop.DBus.ObjectManager: GetManagedObjects lists them, and each
// object emits InterfacesAdded when it appears and InterfacesRemoved when its run is forgotten.
//
// RunObjects observes the run store: every save of a run's record or receipt creates the run's
// object if needed and emits PropertiesChanged for it; removing a run removes its object. Property
// values are read from the record when asked, so they are never stale.
#pragma once

#include "cgroups.h"
#include "nerve-adaptor.h"
#include "process_launcher.h"
#include "run_store.h"

#include <sdbus-c++/sdbus-c++.h>

#include <map>
#include <memory>
#include <string>

namespace nerve {

// As sd_bus_path_encode("/org/nerve/Lifecycle1/run", run): every character but A-Z a-z 0-9, and a
// leading digit, as _XX (two lowercase hex digits) (bus_label.h).
std::string run_object_path(const std::string& run);

class RunObjects {
 public:
  RunObjects(sdbus::IConnection& bus, RunStore& store, const ProcessLauncher& launcher, Cgroups& cgroups);
  ~RunObjects();
  // Makes objects for every run in the store (at startup).
  void add_all();
  // The run's record, receipt or freezer state changed (or it was removed).
  void changed(const std::string& run);

 private:
  class Object;
  sdbus::IConnection& bus_;
  RunStore& store_;
  const ProcessLauncher& launcher_;
  Cgroups& cgroups_;
  std::map<std::string, std::unique_ptr<Object>> objects_;
};

}  // namespace nerve
