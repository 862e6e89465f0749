// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/cgroup_backend.h"

#include "system/cgroup_tree.h"

#include <fnmatch.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <sys/xattr.h>

#include <cinttypes>
#include <csignal>
#include <cstdio>

namespace nerve {

namespace {
using namespace cgroup_backend_error;

constexpr std::uint64_t kDefaultStopUsec = 90'000'000;  // systemd's DefaultTimeoutStopSec

Error no_such_unit(const std::string& unit) {
  return Error{systemd_error::NoSuchUnit, "Unit " + unit + " not loaded."};
}

std::string invocation_id_of(std::uint64_t id) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%032" PRIx64, id);
  return buf;
}

bool is_slice(const std::string& name) { return name.ends_with(".slice"); }

// A scope's Description is kept on its folder as the extended attribute user.nerve.description (as
// systemd keeps user.invocation_id and user.delegate on cgroups; cgroupfs has user.* attributes since
// Linux 5.7), so that a nerved that lost a record finds the run, attempt and nonce of a live scope
// again (quarantine.h). Where the kernel has none the scope has no Description: nothing is claimed.
constexpr const char* kDescriptionXattr = "user.nerve.description";

void keep_description(const std::string& folder, const std::string& description) {
  if (!description.empty())
    (void)::setxattr(folder.c_str(), kDescriptionXattr, description.data(), description.size(), 0);
}

std::string description_of(const std::string& folder) {
  char buf[512];
  ssize_t n = ::getxattr(folder.c_str(), kDescriptionXattr, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}
}  // namespace

struct CgroupBackend::Stop {
  std::string cgroup;
  int watch = -1;
  TimerId kill_timer = 0;
  std::vector<Done<void>> waiters;
};

struct CgroupBackend::Freeze {
  std::string cgroup;
  bool freeze = true;
  int watch = -1;
  TimerId deadline = 0;
  Done<void> done;
};

CgroupBackend::CgroupBackend(EventLoop& loop, Cgroups& cgroups, CgroupBackendOptions options)
    : loop_(loop), cgroups_(cgroups), options_(std::move(options)), host_(read_host_limits()) {
  if (options_.root.empty()) options_.root = "/";
  if (options_.root.size() > 1 && options_.root.back() == '/') options_.root.pop_back();
  // Scopes of an earlier nerved that emptied while none ran (their last process, or a holder that was
  // a zombie of the nerved that died, ended after it) are collected now, and the others once they empty.
  const std::string base = options_.root == "/" ? "" : options_.root;
  auto adopt = [&](const std::string& parent) {
    for (const auto& name : subfolders(full(parent.empty() ? "/" : parent)))
      if (name.ends_with(".scope")) collect_when_empty(parent + "/" + name);
  };
  adopt(base);
  for (const auto& slice : subfolders(full(options_.root)))
    if (is_slice(slice)) adopt(base + "/" + slice);
}

CgroupBackend::~CgroupBackend() {
  for (auto& [cgroup, watch] : collected_) cgroups_.unwatch(watch);
  for (auto& [unit, stop] : stops_) {
    if (stop->watch >= 0) cgroups_.unwatch(stop->watch);
    if (stop->kill_timer) loop_.cancel_timer(stop->kill_timer);
  }
}

void CgroupBackend::later(std::function<void()> fn) { loop_.add_timer(std::chrono::milliseconds(0), std::move(fn)); }

std::string CgroupBackend::full(const std::string& cgroup) const { return options_.mount + (cgroup == "/" ? "" : cgroup); }

std::string CgroupBackend::find(const std::string& unit) const {
  const std::string base = options_.root == "/" ? "" : options_.root;
  if (unit.empty() || unit.find('/') != std::string::npos || unit.front() == '.') return "";
  if (cgroups_.id(base + "/" + unit)) return base + "/" + unit;
  for (const auto& slice : subfolders(full(options_.root)))
    if (is_slice(slice) && cgroups_.id(base + "/" + slice + "/" + unit)) return base + "/" + slice + "/" + unit;
  return "";
}

void CgroupBackend::version(Done<std::string> done) {
  utsname u{};
  ::uname(&u);
  std::string v = std::string("cgroup backend on ") + full(options_.root) + " (Linux " + u.release + ")";
  later([done, v] { done(v); });
}

bool CgroupBackend::collect_when_empty(const std::string& cgroup) {
  if (!collected_.count(cgroup)) {
    int watch = cgroups_.watch(cgroup, [this, cgroup] { check_collect(cgroup); });
    if (watch < 0) return cgroups_.id(cgroup).has_value();  // cannot watch: gone, or left as it is
    collected_[cgroup] = watch;
  }
  check_collect(cgroup);
  return collected_.count(cgroup) > 0;
}

void CgroupBackend::check_collect(const std::string& cgroup) {
  auto it = collected_.find(cgroup);
  if (it == collected_.end()) return;
  if (cgroups_.id(cgroup)) {
    auto populated = cgroups_.populated(cgroup);
    if (!populated || *populated) return;  // live, or unreadable: the next event decides
    if (!remove_tree(full(cgroup))) return;  // a process came in meanwhile: the next event decides
  }
  cgroups_.unwatch(it->second);
  collected_.erase(it);
  stop_timeouts_.erase(cgroup.substr(cgroup.rfind('/') + 1));
}

void CgroupBackend::lookup(const std::string& unit, Done<UnitState> done) {
  std::string cgroup = find(unit);
  if (!cgroup.empty() && !collect_when_empty(cgroup)) cgroup.clear();  // empty: collected, as systemd would
  auto id = cgroup.empty() ? std::nullopt : cgroups_.id(cgroup);
  Result<UnitState> r = no_such_unit(unit);
  if (id) r = UnitState{invocation_id_of(*id), "active", cgroup, description_of(full(cgroup))};
  later([done, r] { done(r); });
}

void CgroupBackend::list_scopes(const std::string& pattern, Done<std::vector<std::string>> done) {
  std::vector<std::string> out;
  auto add = [&](const std::string& folder) {
    for (const auto& name : subfolders(folder))
      if (name.ends_with(".scope") && ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0) out.push_back(name);
  };
  add(full(options_.root));
  for (const auto& slice : subfolders(full(options_.root)))
    if (is_slice(slice)) add(full(options_.root) + "/" + slice);
  later([done, out] { done(out); });
}

Result<void> CgroupBackend::write_limits(const std::string& cgroup, const std::vector<UnitProperty>& properties) {
  for (const auto& p : properties) {
    auto w = cgroup_write_for(p, host_);
    if (!w) return Error{InvalidArgs, w.error().message};
    if (::access((full(cgroup) + "/" + w->file).c_str(), F_OK) != 0)
      return Error{InvalidArgs, "property " + w->key + " needs the " + w->controller + " controller, which " +
                                    full(cgroup) + " does not have (the subtree nerved was given does not offer it: "
                                    "delegate it, or leave " + w->key + " out)"};
    if (auto r = write_control(full(cgroup) + "/" + w->file, w->text); !r)
      return Error{InvalidArgs, "property " + w->key + " (" + w->file + " = " + w->text + "): " + r.error().message};
  }
  return {};
}

void CgroupBackend::start_scope(const ScopeSpec& spec, Done<void> done) {
  auto fail = [this, done](Error e) { later([done, e] { done(e); }); };
  const std::string base = options_.root == "/" ? "" : options_.root;
  std::string parent = spec.slice.empty() ? options_.root : base + "/" + spec.slice;
  if (!spec.slice.empty()) {
    if (!is_slice(spec.slice) || spec.slice.find('/') != std::string::npos)
      return fail(Error{InvalidArgs, "slice " + spec.slice + " is not a slice name (NAME.slice)"});
    if (auto made = make_folder(full(parent)); !made) return fail(Error{Failed, made.error().message});
    enable_controllers(full(options_.root));
  }
  enable_controllers(full(parent));  // best effort: a limit that needs a missing one is refused below
  std::string cgroup = base + "/" + (spec.slice.empty() ? "" : spec.slice + "/") + spec.unit;
  if (!find(spec.unit).empty()) return fail(Error{UnitExists, "Unit " + spec.unit + " already exists."});
  if (auto made = make_folder(full(cgroup)); !made) return fail(Error{Failed, made.error().message});
  keep_description(full(cgroup), spec.description);
  auto undo = [this, cgroup, fail](Error e) {
    (void)remove_tree(full(cgroup));
    fail(std::move(e));
  };
  if (auto limits = write_limits(cgroup, spec.properties); !limits) return undo(limits.error());
  for (pid_t pid : {spec.holder, spec.pid}) {
    if (pid <= 0) continue;
    if (auto moved = write_control(full(cgroup) + "/cgroup.procs", std::to_string(pid)); !moved)
      return undo(Error{Failed, "cannot move process " + std::to_string(pid) + " into " + full(cgroup) + ": " +
                                    moved.error().message +
                                    " (moving a process needs write access to cgroup.procs of the common ancestor of "
                                    "its cgroup and this one: start it inside the subtree nerved was given)"});
  }
  stop_timeouts_[spec.unit] = spec.stop_timeout_usec ? spec.stop_timeout_usec : kDefaultStopUsec;
  collect_when_empty(cgroup);
  later([done] { done({}); });
}

void CgroupBackend::stop_unit(const std::string& unit, Done<void> done) {
  if (auto it = stops_.find(unit); it != stops_.end()) return it->second->waiters.push_back(std::move(done));
  std::string cgroup = find(unit);
  if (cgroup.empty()) return later([done, unit] { done(no_such_unit(unit)); });
  auto stop = std::make_shared<Stop>();
  stop->cgroup = cgroup;
  stop->waiters.push_back(std::move(done));
  stops_[unit] = stop;
  stop->watch = cgroups_.watch(cgroup, [this, unit] { check_stop(unit); });
  for (pid_t pid : cgroups_.pids(cgroup)) {
    ::kill(pid, SIGTERM);
    ::kill(pid, SIGCONT);
  }
  auto t = stop_timeouts_.find(unit);
  std::uint64_t usec = t == stop_timeouts_.end() ? kDefaultStopUsec : t->second;
  stop->kill_timer = loop_.add_timer(std::chrono::microseconds(usec), [this, unit] {
    auto it = stops_.find(unit);
    if (it == stops_.end()) return;
    it->second->kill_timer = 0;
    if (auto id = cgroups_.id(it->second->cgroup)) cgroups_.kill_if(it->second->cgroup, *id);
  });
  later([this, unit] { check_stop(unit); });
}

void CgroupBackend::check_stop(const std::string& unit) {
  auto it = stops_.find(unit);
  if (it == stops_.end()) return;
  auto populated = cgroups_.populated(it->second->cgroup);
  if (!populated) return finish_stop(unit, populated.error());
  if (*populated) return;
  auto removed = remove_tree(full(it->second->cgroup));
  finish_stop(unit, removed ? Result<void>{} : Result<void>(Error{Failed, removed.error().message}));
}

void CgroupBackend::finish_stop(const std::string& unit, Result<void> result) {
  auto it = stops_.find(unit);
  if (it == stops_.end()) return;
  auto stop = it->second;
  stops_.erase(it);
  stop_timeouts_.erase(unit);
  if (stop->watch >= 0) cgroups_.unwatch(stop->watch);
  if (stop->kill_timer) loop_.cancel_timer(stop->kill_timer);
  for (auto& w : stop->waiters) w(result);
}

void CgroupBackend::kill_unit(const std::string& unit, int signo, Done<void> done) {
  std::string cgroup = find(unit);
  if (cgroup.empty()) return later([done, unit] { done(no_such_unit(unit)); });
  for (pid_t pid : cgroups_.pids(cgroup)) ::kill(pid, signo);
  later([done] { done({}); });
}

void CgroupBackend::set_unit_properties(const std::string& unit, const std::vector<UnitProperty>& properties,
                                        Done<void> done) {
  const std::string base = options_.root == "/" ? "" : options_.root;
  Result<void> r;
  if (!is_slice(unit) || unit.find('/') != std::string::npos) {
    r = Error{InvalidArgs, "only a slice's properties can be set here, not " + unit + "'s"};
  } else if (auto made = make_folder(full(base + "/" + unit)); !made) {
    r = Error{Failed, made.error().message};
  } else {
    enable_controllers(full(options_.root));
    r = write_limits(base + "/" + unit, properties);
  }
  later([done, r] { done(r); });
}

void CgroupBackend::read_properties(const std::string& unit, const std::string& interface,
                                    Done<std::map<std::string, PropertyValue>> done) {
  (void)interface;
  const std::string base = options_.root == "/" ? "" : options_.root;
  Result<std::map<std::string, PropertyValue>> r = no_such_unit(unit);
  if (is_slice(unit) && cgroups_.id(base + "/" + unit)) {
    std::map<std::string, std::string> files;
    for (const auto& file : limit_files())
      if (auto text = read_control(full(base + "/" + unit) + "/" + file)) files[file] = *text;
    r = limits_from_files(files);
  }
  later([done, r] { done(r); });
}

void CgroupBackend::freezer(const std::string& unit, bool freeze, Done<void> done) {
  std::string cgroup = find(unit);
  if (cgroup.empty()) return later([done, unit] { done(no_such_unit(unit)); });
  if (auto w = write_control(full(cgroup) + "/cgroup.freeze", freeze ? "1" : "0"); !w)
    return later([done, e = w.error()] { done(Error{Failed, e.message}); });
  auto f = std::make_shared<Freeze>();
  f->cgroup = cgroup;
  f->freeze = freeze;
  f->done = std::move(done);
  f->watch = cgroups_.watch(cgroup, [this, f] { check_freeze(f); });
  f->deadline = loop_.add_timer(options_.call_timeout, [this, f] {
    f->deadline = 0;
    if (!f->done) return;
    if (f->watch >= 0) cgroups_.unwatch(f->watch);
    auto d = std::move(f->done);
    d(Error{Failed, f->cgroup + " did not become " + (f->freeze ? "frozen" : "thawed") + " in time"});
  });
  later([this, f] { check_freeze(f); });
}

void CgroupBackend::check_freeze(const std::shared_ptr<Freeze>& f) {
  if (!f->done) return;
  bool gone = !cgroups_.id(f->cgroup);
  if (!gone && cgroups_.frozen(f->cgroup) != f->freeze) return;
  if (f->watch >= 0) cgroups_.unwatch(f->watch);
  f->watch = -1;
  if (f->deadline) loop_.cancel_timer(f->deadline);
  auto d = std::move(f->done);
  f->done = nullptr;
  d(gone ? Result<void>(no_such_unit(f->cgroup)) : Result<void>{});
}

}  // namespace nerve
