#include "reap_decision.h"

namespace nerve {

std::string scope_description(const Record& r) {
  return "nerve run " + r.run + " attempt " + std::to_string(r.attempt) + " nonce=" + r.nonce;
}

ReapDecision decide_reap(const Record& r, const std::string& boot_id, const Lookup& lookup,
                         std::optional<std::uint64_t> live_cgroup_id) {
  if (r.boot_id != boot_id)
    return {ReapAction::NoScope,
            "the record is from boot " + r.boot_id + ", this is boot " + boot_id + "; nothing was signalled"};
  if (r.unit.empty()) return {ReapAction::NoScope, "no scope was ever requested for this attempt"};
  switch (lookup.status) {
    case LookupStatus::Failed:
      return {ReapAction::Retry, "cannot query unit " + r.unit + ": " + lookup.error};
    case LookupStatus::NoSuchUnit:
      if (!live_cgroup_id) return {ReapAction::NoScope, "unit " + r.unit + " and its cgroup are gone"};
      if (r.cgroup_id != 0 && *live_cgroup_id == r.cgroup_id)
        return {ReapAction::KillCgroup, "unit " + r.unit + " is unknown to systemd but its cgroup " +
                                            r.cgroup + " is still there"};
      return {ReapAction::Refuse, "unit " + r.unit + " is unknown and cgroup " + r.cgroup +
                                      " belongs to something else (cgroup id " + std::to_string(*live_cgroup_id) +
                                      ", recorded " + std::to_string(r.cgroup_id) + ")"};
    case LookupStatus::Found:
      break;
  }
  const UnitState& u = lookup.unit;
  if (!r.invocation_id.empty()) {
    if (u.invocation_id != r.invocation_id)
      return {ReapAction::Refuse, "unit " + r.unit + " now has InvocationID " +
                                      (u.invocation_id.empty() ? std::string("(none)") : u.invocation_id) +
                                      ", recorded " + r.invocation_id + "; another unit has the name, it was not touched"};
  } else if (u.description != scope_description(r)) {
    return {ReapAction::Refuse, "unit " + r.unit + " does not carry this run's nonce " + r.nonce +
                                    "; it was not touched"};
  }
  if (r.cgroup_id != 0 && live_cgroup_id && *live_cgroup_id != r.cgroup_id)
    return {ReapAction::Refuse, "cgroup " + r.cgroup + " has id " + std::to_string(*live_cgroup_id) +
                                    ", recorded " + std::to_string(r.cgroup_id) + "; it was not touched"};
  return {ReapAction::Stop, "stopping unit " + r.unit};
}

}  // namespace nerve
