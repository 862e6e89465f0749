// SPDX-License-Identifier: LGPL-2.1-or-later
// `nervectl doctor`: whether this host has what nerve needs, one line per check (ok, FAIL, WARN,
// INFO) and, when a check fails, what to do. The checks are a table here, in the order a
// run needs them: session bus, user manager, cgroup2, backend (the user manager's scopes, or a
// delegated cgroup subtree: base/cgroup_delegation.h; neither fails, naming the one fix for this kind
// of host), controllers, nerved, runs folder, a probe scope (created, checked and reaped through
// nerved), sealing. Exit 0 when every required check
// passed, 1 otherwise; --json prints an array of {check, status, detail, hint} instead.

#include "ctl/full/client.h"
#include "ctl/output.h"
#include "ctl/verb_handlers.h"

#include "process/held_child.h"
#include "base/bus_names.h"
#include "base/cgroup_delegation.h"
#include "base/host.h"
#include "process/sealing.h"

#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace nerve::ctl {

namespace {

using nlohmann::json;

enum class Status { Ok, Fail, Warn, Info };

struct Finding {
  Status status = Status::Ok;
  std::string detail;
  std::string hint;  // what to do; given with FAIL and WARN
};

Finding ok(std::string detail) { return {Status::Ok, std::move(detail), ""}; }
Finding fail(std::string detail, std::string hint) { return {Status::Fail, std::move(detail), std::move(hint)}; }
// A required check that cannot be made because the check CAUSE failed before it.
Finding not_checked(const std::string& cause) { return fail("not checked: needs " + cause, "see '" + cause + "' above"); }

// What the checks learn and later checks use.
struct Doctor {
  Context& ctx;
  std::unique_ptr<sdbus::IConnection> bus;  // session bus, for the user manager
  std::optional<std::string> manager_cgroup;  // the user manager's ControlGroup ("" at the root)
  std::optional<std::string> cgroup_mount;  // where cgroup2 is mounted
  std::string no_manager;                   // why no user manager answers ("" when one does)
  std::optional<std::string> subtree;       // the cgroup backend's subtree, when there is no user manager
  std::string runs_dir;                     // nerved's RunsDirectory ("" if nerved was not reached)
};

constexpr const char* kSessionHint =
    "nerve needs a user session with a session bus. Log in (a desktop or ssh login starts your user manager "
    "and its bus), or let your user manager run without a login: 'loginctl enable-linger $USER', then "
    "XDG_RUNTIME_DIR=/run/user/$(id -u). Tests and CI get a private one: tests/harness/with-user-manager.sh.";

Finding check_session_bus(Doctor& d) {
  const char* addr = std::getenv("DBUS_SESSION_BUS_ADDRESS");
  std::string where = addr ? addr : "$XDG_RUNTIME_DIR/bus (DBUS_SESSION_BUS_ADDRESS unset)";
  try {
    d.bus = sdbus::createSessionBusConnection();
  } catch (const sdbus::Error& e) {
    return fail("cannot connect to " + where + ": " + e.getMessage(), kSessionHint);
  }
  return ok(where);
}

Finding check_user_manager(Doctor& d) {
  if (!d.bus) return not_checked("session bus");
  try {
    auto proxy = sdbus::createProxy(*d.bus, systemd1::kService, systemd1::kPath);
    constexpr const char* kIface = systemd1::kManager;
    std::string version = proxy->getProperty("Version").onInterface(kIface).get<std::string>();
    d.manager_cgroup = proxy->getProperty("ControlGroup").onInterface(kIface).get<std::string>();
    return ok("systemd " + version + ", cgroup " + (d.manager_cgroup->empty() ? "/" : *d.manager_cgroup));
  } catch (const sdbus::Error& e) {
    // Not a failure by itself: the cgroup backend needs none (the backend check says whether one works).
    d.no_manager = "no systemd user manager on the session bus: " + e.getMessage() + " [" + e.getName() + "]";
    return {Status::Warn, d.no_manager, ""};
  }
}

// Where cgroup2 is mounted, as this process sees it: NERVE_CGROUP_ROOT, else /sys/fs/cgroup when it is
// a cgroup2 mount, else the first cgroup2 mount (the rule of nerved's cgroup_root(), real_cgroups.h,
// which lives in the daemon's library).
std::optional<std::string> cgroup2_mount() {
  if (const char* env = std::getenv("NERVE_CGROUP_ROOT"); env && *env) return std::string(env);
  std::ifstream in("/proc/self/mountinfo");
  std::optional<std::string> first;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
    auto dash = std::find(w.begin(), w.end(), "-");  // "ID PARENT DEV ROOT MOUNT OPTS ... - FSTYPE ..."
    if (w.size() < 5 || dash == w.end() || dash + 1 == w.end() || dash[1] != "cgroup2") continue;
    if (w[4] == "/sys/fs/cgroup") return w[4];
    if (!first) first = w[4];
  }
  return first;
}

// Which backend can hold runs here, as nerved's --backend auto decides it (nerved/backend.h).
Finding check_backend(Doctor& d) {
  if (!d.bus) return not_checked("session bus");
  if (d.no_manager.empty()) return ok("systemd: runs are scopes of the user manager");
  SubtreeFacts facts = read_subtree_facts();
  auto subtree = choose_subtree(facts, "", false);
  if (subtree) {
    d.subtree = subtree->root;
    return ok("cgroup: no user manager, and nerved may take the subtree " + subtree->root + " (" + subtree->how +
              ") under " + facts.mount + " (nerved --backend cgroup, or auto)");
  }
  HostKind host = host_kind(read_host_clues());
  return fail("neither backend can hold a run: " + no_backend(d.no_manager, subtree.error().message, host),
              "on this host (" + host_name(host) + "): " + host_fix(host));
}

Finding check_cgroup2(Doctor& d) {
  d.cgroup_mount = cgroup2_mount();
  if (!d.cgroup_mount)
    return fail("no cgroup2 hierarchy in /proc/self/mountinfo",
                "nerve needs the unified cgroup hierarchy (cgroup v2): boot with "
                "systemd.unified_cgroup_hierarchy=1 (the default since systemd 247).");
  return ok("mounted at " + *d.cgroup_mount);
}

// The controllers of a cgroup folder (its cgroup.controllers), or nullopt.
std::optional<std::string> controllers_of(const std::string& folder) {
  std::ifstream in(folder + "/cgroup.controllers");
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  return line;
}

// Which run limits each controller enforces (properties as systemd-run -p takes them).
const std::vector<std::pair<std::string, std::string>>& limit_controllers() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"memory", "MemoryMax/MemoryHigh"}, {"cpu", "CPUQuota/CPUWeight"}, {"pids", "TasksMax"}, {"io", "IOWeight"}};
  return table;
}

Finding check_controllers(Doctor& d) {
  if (!d.cgroup_mount || (!d.manager_cgroup && !d.subtree))
    return {Status::Warn, "not checked: needs cgroup2 and the user manager's cgroup or a subtree", ""};
  std::string base = *d.cgroup_mount + (d.manager_cgroup ? *d.manager_cgroup : *d.subtree == "/" ? "" : *d.subtree);
  std::string folder = d.manager_cgroup ? base + "/app.slice" : base;
  auto have = controllers_of(folder);
  if (!have) have = controllers_of(folder = base);
  if (!have) return {Status::Warn, "cannot read cgroup.controllers in " + folder, ""};
  std::string enforced, recorded;
  for (const auto& [name, limits] : limit_controllers()) {
    bool on = (" " + *have + " ").find(" " + name + " ") != std::string::npos;
    (on ? enforced : recorded) += (on ? enforced : recorded).empty() ? limits : ", " + limits;
  }
  std::string detail = folder + " has '" + *have + "'; enforced: " + (enforced.empty() ? "none" : enforced);
  if (recorded.empty()) return ok(detail);
  if (!d.manager_cgroup)
    return {Status::Warn, detail + "; refused by name on the cgroup backend: " + recorded,
            "the subtree's parent has not given it those controllers: whoever delegated the subtree enables them in "
            "the parent's cgroup.subtree_control (a unit: Delegate=memory cpu pids io)."};
  return {Status::Warn, detail + "; only recorded, not enforced: " + recorded,
          "delegate the missing controllers to your user manager: a drop-in for user@.service with "
          "'Delegate=memory cpu pids io' (systemctl edit user@.service, as root), then log in again."};
}

constexpr const char* kNervedHint =
    "start nerved: 'systemctl --user start nerved' (installed unit; D-Bus activation starts it on the first "
    "call), or run 'nerved &'. Its log: 'journalctl --user -u nerved'.";

Finding check_nerved(Doctor& d) {
  if (!d.bus) return not_checked("session bus");
  try {
    d.runs_dir = d.ctx.client().RunsDirectory();
    std::string boot = d.ctx.client().BootID();
    std::string version = "unknown (the bus has no Version property yet)", backend;
    try {
      auto proxy = sdbus::createProxy(*d.bus, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
      version = proxy->getProperty("Version").onInterface("org.nerve.Lifecycle1.Manager").get<std::string>();
      backend = "; backend " + proxy->getProperty("BackendDetail").onInterface("org.nerve.Lifecycle1.Manager").get<std::string>();
    } catch (const sdbus::Error&) {
    }
    return ok("org.nerve.Lifecycle1 answers; version " + version + "; boot " + boot + backend);
  } catch (const sdbus::Error& e) {
    d.runs_dir.clear();
    return fail("not reachable: " + e.getMessage() + " [" + e.getName() + "]", kNervedHint);
  }
}

Finding check_runs_folder(Doctor& d) {
  if (d.runs_dir.empty()) return not_checked("nerved");
  std::string name = d.runs_dir + "/.doctor-" + std::to_string(::getpid()) + ".tmp";
  const char* step = "create";
  int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool good = fd >= 0;
  if (good && (step = "write", ::write(fd, "doctor\n", 7) != 7)) good = false;
  if (good && (step = "fsync", ::fsync(fd) != 0)) good = false;
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (fd >= 0) ::unlink(name.c_str());
  if (!good)
    return fail(std::string("cannot ") + step + " a file in " + d.runs_dir + ": " + std::strerror(err),
                "nerved writes every run's record there before the run starts: make the folder writable "
                "(permissions, free space, a read-write mount), or give nerved another one with --runs-dir.");
  return ok(d.runs_dir + ": a file was created, written, fsynced and removed");
}

// ---- the probe scope ----

constexpr std::uint64_t kProbeGraceUsec = 500'000;

// The probe child: Contain itself as RUN on a connection of its own, report "K<cgroup>" or "E<why>",
// then wait (the reap's SIGTERM ends it; so does its parent closing GO).
[[noreturn]] void probe_child(const std::string& run, int go, int report) {
  std::string said;
  try {
    Client c(sdbus::createSessionBusConnection());
    said = "K" + std::get<2>(c.Contain(run, kProbeGraceUsec, {}));
  } catch (const sdbus::Error& e) {
    said = "E" + e.getMessage() + " [" + e.getName() + "]";
  }
  if (::write(report, said.data(), said.size()) < 0) ::_exit(1);
  ::close(report);
  await_word(go, kWordExec);
  ::_exit(0);
}

// The report of the probe child, read to EOF with a bound.
std::string probe_report(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 60'000) <= 0) return "Ethe probe did not report within 60 s";
  return read_report(fd);
}

// Reaps RUN and checks that nothing is left, then forgets it. "" or what went wrong. CHILD, the probe,
// is waited for here once the reap ended it (then set to -1: it must not be signalled again).
std::string reap_probe(Context& ctx, const std::string& run, pid_t& child) {
  ctx.allow_for_reap(kProbeGraceUsec);
  auto [outcome, receipt] = ctx.client().Reap(run, kProbeGraceUsec);
  if (outcome != "complete") return "the reap's outcome is " + outcome + ": " + receipt;
  // The probe, this process's child, keeps its cgroup populated until it is waited for (a zombie is
  // counted, not listed), and nerved's killed holder may still be ending when the reap answers: both
  // go within a bound, and only then must the scope be empty (both seen on a loaded machine).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  pid_t waited = 0;
  while ((waited = ::waitpid(child, nullptr, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until) ::usleep(10'000);
  if (waited != child) return "the probe process is still alive after the reap";
  child = -1;
  json s = json::parse(ctx.client().GetRun(run));
  while (s["live"].value("populated", true) && s["live"].value("pids", json::array()).empty() &&
         std::chrono::steady_clock::now() < until && ::usleep(20'000) == 0)
    s = json::parse(ctx.client().GetRun(run));
  if (s["live"].value("populated", true) || !s["live"].value("pids", json::array()).empty())
    return "after the reap the scope still has processes: " + s["live"].dump();
  ctx.client().Forget(run);
  return "";
}

std::string run_probe(Doctor& d, const std::string& run, pid_t& child, int report) {
  std::string said = probe_report(report);
  if (said.empty() || said[0] != 'K') return "Contain failed: " + (said.empty() ? "no answer" : said.substr(1));
  std::string cgroup = said.substr(1);
  auto actual = proc_cgroup(child);
  std::string why;
  if (!actual || *actual != cgroup)
    why = "the probe is in " + actual.value_or("(unknown)") + ", not in the scope's cgroup " + cgroup;
  try {
    std::string reaped = reap_probe(d.ctx, run, child);
    if (why.empty()) why = reaped;
  } catch (const sdbus::Error& e) {
    if (why.empty()) why = "reap: " + e.getMessage() + " [" + e.getName() + "]";
  }
  return why;
}

Finding check_probe_scope(Doctor& d) {
  if (d.runs_dir.empty()) return not_checked("nerved");
  auto now = std::chrono::system_clock::now().time_since_epoch();
  std::string run = "doctor-" + std::to_string(::getpid()) + "-" +
                    std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  HeldPipes pipes;
  pid_t child = fork_held(pipes, [&](int go, int report) { probe_child(run, go, report); });
  if (child < 0) return fail(std::string("fork: ") + std::strerror(errno), "");
  auto t0 = std::chrono::steady_clock::now();
  std::string why;
  try {
    why = run_probe(d, run, child, pipes.report.get());
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (child > 0) {  // whatever happened: the probe ends here, unless the reap ended it and it was waited for
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  if (!why.empty())
    return fail("run " + run + ": " + why,
                "nerved cannot contain and reap a run here: read its log ('journalctl --user -u nerved', or "
                "its stderr), and 'nervectl status " + run + "'.");
  return ok("run " + run + " contained, checked in its scope, reaped (no process left) and forgotten in " +
            std::to_string(took.count()) + " ms");
}

// As nerved decides it (SealingAvailable, SealingDetail) when it answers, else as this process sees it.
Finding check_sealing(Doctor& d) {
  SealingStatus st;
  try {
    if (d.runs_dir.empty()) throw std::runtime_error("nerved not reached");
    st = {d.ctx.client().SealingAvailable(), d.ctx.client().SealingDetail()};
  } catch (const std::exception&) {
    st = sealing_status();
  }
  if (st.available) return ok("'launch --sealed' can seal runs here: " + st.detail);
  return {Status::Info, "'launch --sealed' is refused here, other runs are not affected: " + st.detail, ""};
}

struct Check {
  const char* name;
  bool required;  // a FAIL of it makes the exit code 1
  Finding (*run)(Doctor&);
};

const Check kChecks[] = {
    {"session bus", true, check_session_bus},   {"user manager", false, check_user_manager},
    {"cgroup2", true, check_cgroup2},           {"backend", true, check_backend},
    {"controllers", false, check_controllers},
    {"nerved", true, check_nerved},             {"runs folder", true, check_runs_folder},
    {"probe scope", true, check_probe_scope},   {"sealing", false, check_sealing},
};

const char* status_text(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Fail: return "FAIL";
    case Status::Warn: return "WARN";
    case Status::Info: return "INFO";
  }
  return "?";
}

Colour status_colour(Status s) {
  return s == Status::Ok ? Colour::Green : s == Status::Fail ? Colour::Red : s == Status::Warn ? Colour::Yellow : Colour::None;
}

void print_finding(const Check& c, const Finding& f, bool colour) {
  std::string status = status_text(f.status);
  std::printf("%s%s %-13s %s\n", paint(status, status_colour(f.status), colour).c_str(),
              std::string(5 - status.size(), ' ').c_str(), c.name, f.detail.c_str());
  if (!f.hint.empty()) std::printf("      -> %s\n", f.hint.c_str());
}

}  // namespace

int doctor(Context& ctx, const VerbArgs& a) {
  ctx.set_call_timeout_usec(10'000'000);  // a doctor waits 10 s for an answer, not the bus's 25 s
  Doctor d{ctx, nullptr, std::nullopt, std::nullopt, "", std::nullopt, ""};
  json out = json::array();
  int failed = 0;
  bool colour = colour_wanted(stdout);
  for (const Check& c : kChecks) {
    Finding f = c.run(d);
    if (f.status == Status::Fail && c.required) ++failed;
    std::string status = status_text(f.status);
    for (auto& ch : status) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (a.json)
      out.push_back({{"check", c.name}, {"status", status}, {"detail", f.detail}, {"hint", f.hint}});
    else
      print_finding(c, f, colour);
    std::fflush(stdout);
  }
  if (a.json)
    print_json(out, a.json);
  else if (failed)
    std::printf("\n%d required check%s failed.\n", failed, failed == 1 ? "" : "s");
  else
    std::printf("\nAll required checks passed.\n");
  return failed ? kExitError : 0;
}

}  // namespace nerve::ctl
