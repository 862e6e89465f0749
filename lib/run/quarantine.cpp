// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "run/quarantine.h"

#include "base/defaults.h"
#include "base/errors.h"
#include "run/reap_decision.h"
#include "base/run_id.h"
#include "run/run_log.h"

#include <memory>
#include <optional>

namespace nerve {

void Quarantine::move_aside(const std::string& run, std::function<void(std::string moved)> done) {
  auto moved = deps_.store.quarantine(run);
  if (!moved) return done("(nowhere: " + moved.error().message + ")");
  recover(run, [done, to = *moved] { done(to); });
}

void Quarantine::load(const std::string& run, Done<std::optional<Record>> done) {
  auto loaded = records_.load_telling_why(run);
  if (loaded.failure != LoadFailure::Corrupt) return done(std::move(loaded.record));
  move_aside(run, [run, done, why = loaded.record.error().message](std::string moved) {
    spdlog::error("run {}: {}; moved to {}", run, why, moved);
    done(Error{error::RecordFailed, why + "; it was moved to " + moved + "; try again"});
  });
}

void Quarantine::recover(const std::string& run, std::function<void()> done) {
  deps_.systemd.list_scopes("nerve-" + run + "-*.scope", [this, run, done](Result<std::vector<std::string>> units) {
    if (!units) {
      spdlog::error("run {}: cannot list its scopes after quarantine: {}", run, units.error().message);
      return done();
    }
    recover_from(run, *units, done);
  });
}

namespace {
// The record a live scope of 'run' would have, if 'unit' is one.
std::optional<Record> recovered(const std::string& run, const std::string& unit, const UnitState& u, Deps& deps) {
  auto parsed = parse_scope_description(u.description);
  if (u.control_group.empty() || !parsed || parsed->run != run || scope_unit_name(run, parsed->nonce) != unit)
    return std::nullopt;
  auto id = deps.cgroups.id(u.control_group);
  if (!id) return std::nullopt;
  Record r;
  r.run = run;
  r.attempt = parsed->attempt;
  r.unit = unit;
  r.nonce = parsed->nonce;
  r.boot_id = deps.boot_id;
  r.backend = deps.backend;
  r.invocation_id = u.invocation_id;
  r.cgroup = u.control_group;
  r.cgroup_id = *id;
  r.state = RunState::Running;
  r.grace_usec = kDefaultGraceUsec;
  r.owner.kind = OwnerKind::None;  // unknown: kept until reaped
  r.created_at = r.updated_at = now_rfc3339();
  return r;
}
}  // namespace

void Quarantine::recover_from(const std::string& run, const std::vector<std::string>& units,
                              std::function<void()> done) {
  // All lookups at once; the newest attempt among the live scopes wins once the last has answered.
  struct Pass {
    std::size_t pending;
    std::optional<Record> best;
  };
  auto pass = std::make_shared<Pass>(Pass{units.size() + 1, std::nullopt});
  auto one_done = [this, pass, run, done] {
    if (--pass->pending != 0) return;
    if (!pass->best) return done();
    if (auto saved = deps_.store.save(*pass->best); !saved)
      log_run(spdlog::level::err, *pass->best, "live scope found, but its record cannot be written: " + saved.error().message);
    else
      log_run(spdlog::level::warn, *pass->best, "live scope recovered into a new record (owner unknown: reap the run to end it)");
    done();
  };
  for (const auto& unit : units) {
    deps_.systemd.lookup(unit, [this, pass, run, unit, one_done](Result<UnitState> l) {
      if (l) {
        auto r = recovered(run, unit, *l, deps_);
        if (r && (!pass->best || pass->best->attempt < r->attempt)) pass->best = std::move(r);
      }
      one_done();
    });
  }
  one_done();
}

}  // namespace nerve
