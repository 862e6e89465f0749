// org.nerve.Lifecycle1.Manager on the bus: the generated adaptor, implemented by calling Lifecycle.
// Each method only reads its arguments and the caller's credentials, and turns results and BusErrors
// into replies; the logic is in lifecycle.h.
#pragma once

#include "lifecycle.h"
#include "process_launcher.h"
#include "nerve-adaptor.h"

#include <sdbus-c++/sdbus-c++.h>

namespace nerve {

inline constexpr const char* kBusName = "org.nerve.Lifecycle1";
inline constexpr const char* kObjectPath = "/org/nerve/Lifecycle1";

class ManagerObject : public sdbus::AdaptorInterfaces<org::nerve::Lifecycle1::Manager_adaptor> {
 public:
  ManagerObject(sdbus::IConnection& bus, Lifecycle& lifecycle, ProcessLauncher& launcher);
  using Manager_adaptor::emitRunExited;
  ~ManagerObject();

 private:
  void Contain(sdbus::Result<std::string, std::string, std::string, uint32_t>&& result, std::string run,
               uint64_t grace_usec, std::map<std::string, sdbus::Variant> options) override;
  void Reap(sdbus::Result<std::string, std::string>&& result, std::string run, uint64_t grace_usec) override;
  void Cancel(sdbus::Result<std::string, std::string>&& result, std::string run, int32_t signal,
              uint64_t grace_usec) override;
  // The pid of the process behind a bus name, or 0.
  pid_t pid_of_bus_name(const std::string& name);
  // AccessDenied unless the current message comes from nerved's own uid.
  void require_same_uid(const char* method);
  void Launch(sdbus::Result<sdbus::ObjectPath, uint32_t>&& result, std::string run, std::vector<std::string> argv,
              std::vector<std::string> env, std::string cwd, std::vector<sdbus::UnixFd> stdio,
              std::map<std::string, sdbus::Variant> options) override;
  sdbus::ObjectPath GetRunPath(const std::string& run) override;
  void Reconcile(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>&& result) override;
  void Forget(const std::string& run) override;
  std::string GetRun(const std::string& run) override;
  std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> ListRuns() override;
  std::string RunsDirectory() override;
  std::string BootID() override;

  Lifecycle& lifecycle_;
  ProcessLauncher& launcher_;
};

}  // namespace nerve
