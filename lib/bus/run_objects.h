// SPDX-License-Identifier: LGPL-2.1-or-later
// One bus object per run (interface org.nerve.Lifecycle1.Run), so engines can watch runs. The
// manager object is their org.freedesktop.DBus.ObjectManager: GetManagedObjects lists them, and each
// object emits InterfacesAdded when it appears and InterfacesRemoved when its run is forgotten.
//
// The objects cost no memory per run: one sd-bus fallback vtable answers for every path below
// /org/nerve/Lifecycle1/run, a node enumerator lists the runs, and property values come from the run
// store's memory (run_store.h), never from a file. (sdbus-c++ 1.2 registers one object, with its own
// vtables, per path: about 4 KB a run.) A run has an object while its record is in the store's
// memory. RunObjects observes the store: a run that appears gets InterfacesAdded, a change of its
// record or final receipt PropertiesChanged for the properties that differ, a run removed
// InterfacesRemoved. The properties are those of the Run interface in lib/bus/org.nerve.Lifecycle1.xml
// (kRunProperties; a unit test compares them with the XML).
#pragma once

#include "system/cgroups.h"
#include "run/process_launcher.h"
#include "record/run_store.h"

#include <sdbus-c++/sdbus-c++.h>
#include <systemd/sd-bus.h>

#include <string>
#include <utility>
#include <vector>

namespace nerve {

// As sd_bus_path_encode("/org/nerve/Lifecycle1/run", run): every character but A-Z a-z 0-9, and a
// leading digit, as _XX (two lowercase hex digits) (bus_label.h).
std::string run_object_path(const std::string& run);

// The Run interface's properties as served: name and D-Bus signature.
extern const std::vector<std::pair<std::string, std::string>> kRunProperties;

class RunObjects {
 public:
  RunObjects(sdbus::IConnection& bus, RunStore& store, const ProcessLauncher& launcher, Cgroups& cgroups);
  ~RunObjects();
  RunObjects(const RunObjects&) = delete;
  RunObjects& operator=(const RunObjects&) = delete;

  // The store's observer: a run's record or receipt changed, or it was removed.
  void changed(const std::string& run, const StoreChange& change);
  // The command of a run ended (ExitStatus), or its freezer state changed (Frozen).
  void exit_changed(const std::string& run);
  void frozen_changed(const std::string& run);

 private:
  static int find(sd_bus* bus, const char* path, const char* interface, void* userdata, void** found, sd_bus_error* error);
  static int enumerate(sd_bus* bus, const char* prefix, void* userdata, char*** nodes, sd_bus_error* error);
  static int property(sd_bus* bus, const char* path, const char* interface, const char* name, sd_bus_message* reply,
                      void* userdata, sd_bus_error* error);
  // The record of 'run' from the store's memory, unpacked once for the properties of one object.
  const Record* view(const std::string& run);
  int append(const std::string& run, const std::string& name, sd_bus_message* reply);
  void emit_changed(const std::string& run, const std::vector<std::string>& names);

  sd_bus* bus_ = nullptr;
  sd_bus_slot* vtable_slot_ = nullptr;
  sd_bus_slot* enumerator_slot_ = nullptr;
  RunStore& store_;
  const ProcessLauncher& launcher_;
  Cgroups& cgroups_;
  std::string removing_;  // a run whose record is gone, found while InterfacesRemoved is sent for it
  std::string view_run_;
  std::uint64_t view_generation_ = 0;
  std::optional<Record> view_;
};

}  // namespace nerve
