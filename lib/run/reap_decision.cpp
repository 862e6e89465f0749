// SPDX-License-Identifier: LGPL-2.1-or-later
#include "run/reap_decision.h"

namespace nerve {

std::string scope_description(const Record& r) {
  return "nerve run " + r.run + " attempt " + std::to_string(r.attempt) + " nonce=" + r.nonce;
}

std::optional<ScopeIdentity> parse_scope_description(const std::string& d) {
  // "nerve run <run> attempt <N> nonce=<nonce>"; a run id has no spaces.
  const std::string head = "nerve run ";
  if (d.rfind(head, 0) != 0) return std::nullopt;
  auto sp = d.find(' ', head.size());
  if (sp == std::string::npos) return std::nullopt;
  ScopeIdentity id;
  id.run = d.substr(head.size(), sp - head.size());
  const std::string mid = " attempt ";
  if (d.compare(sp, mid.size(), mid) != 0) return std::nullopt;
  auto num_start = sp + mid.size();
  auto nonce_at = d.find(" nonce=", num_start);
  if (nonce_at == std::string::npos || nonce_at == num_start) return std::nullopt;
  std::string num = d.substr(num_start, nonce_at - num_start);
  if (num.find_first_not_of("0123456789") != std::string::npos || num.size() > 9) return std::nullopt;
  id.attempt = static_cast<unsigned>(std::stoul(num));
  id.nonce = d.substr(nonce_at + 7);
  if (id.nonce.size() != 16 || id.nonce.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  return id;
}

ReapDecision decide_reap(const Record& r, const std::string& boot_id, BackendKind backend,
                         const Result<UnitState>& lookup, std::optional<std::uint64_t> live_cgroup_id) {
  if (r.boot_id != boot_id)
    return {ReapAction::NoScope,
            "the record is from boot " + r.boot_id + ", this is boot " + boot_id + "; nothing was signalled"};
  if (r.backend != backend)
    return {ReapAction::Retry, "the run is held by the " + to_string(r.backend) + " backend and this nerved runs the " +
                                   to_string(backend) + " backend; nothing was signalled: start nerved with --backend " +
                                   to_string(r.backend) + " to reap it"};
  if (r.unit.empty()) return {ReapAction::NoScope, "no scope was ever requested for this attempt"};
  if (!lookup && !is_no_such_unit(lookup.error()))
    return {ReapAction::Retry, "cannot query unit " + r.unit + ": " + lookup.error().message};
  if (!lookup) {
    if (!live_cgroup_id) return {ReapAction::NoScope, "unit " + r.unit + " and its cgroup are gone"};
    if (r.cgroup_id != 0 && *live_cgroup_id == r.cgroup_id)
      return {ReapAction::KillCgroup, "unit " + r.unit + " is unknown to systemd but its cgroup " +
                                          r.cgroup + " is still there"};
    return {ReapAction::Refuse, "unit " + r.unit + " is unknown and cgroup " + r.cgroup +
                                    " belongs to something else (cgroup id " + std::to_string(*live_cgroup_id) +
                                    ", recorded " + std::to_string(r.cgroup_id) + ")"};
  }
  const UnitState& u = *lookup;
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
