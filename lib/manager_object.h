// org.nerve.Lifecycle1.Manager on the bus: the generated adaptor, implemented by calling Lifecycle.
// Each method only reads its arguments and the caller's credentials, and turns results and BusErrors
// into replies; the logic is in lifecycle.h.
#pragma once

#include "lifecycle.h"
#include "nerve-adaptor.h"

#include <sdbus-c++/sdbus-c++.h>

namespace nerve {

inline constexpr const char* kBusName = "org.nerve.Lifecycle1";
inline constexpr const char* kObjectPath = "/org/nerve/Lifecycle1";

class ManagerObject : public sdbus::AdaptorInterfaces<org::nerve::Lifecycle1::Manager_adaptor> {
 public:
  ManagerObject(sdbus::IConnection& bus, Lifecycle& lifecycle);
  ~ManagerObject();

 private:
  void Contain(sdbus::Result<std::string, std::string, std::string, uint32_t>&& result, std::string run,
               uint64_t grace_usec, std::map<std::string, sdbus::Variant> options) override;
  void Reap(sdbus::Result<std::string, std::string>&& result, std::string run, uint64_t grace_usec) override;
  void Reconcile(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string>>>&& result) override;
  void Forget(const std::string& run) override;
  std::string GetRun(const std::string& run) override;
  std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> ListRuns() override;
  std::string RunsDirectory() override;
  std::string BootID() override;

  Lifecycle& lifecycle_;
};

}  // namespace nerve
