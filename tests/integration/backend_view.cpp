// SPDX-License-Identifier: LGPL-2.1-or-later
#include "backend_view.h"

#include "support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nerve::itest {

namespace fs = std::filesystem;

namespace {

std::string mount() {
  const char* root = std::getenv("NERVE_CGROUP_ROOT");
  return root && *root ? root : "/sys/fs/cgroup";
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The pids listed in FOLDER's cgroup.procs and in every folder below it.
std::vector<std::string> listed_pids(const fs::path& folder) {
  std::vector<std::string> pids;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() == "cgroup.procs") {
      std::ifstream in(it->path());
      for (std::string pid; in >> pid;) pids.push_back(pid);
    }
  return pids;
}

// "max" as systemd shows an unlimited value.
std::string limit(const std::string& text) { return text == "max" ? "infinity" : text; }

}  // namespace

bool cgroup_backend() {
  const char* b = std::getenv("NERVE_TEST_BACKEND");
  return b && std::string(b) == "cgroup";
}

std::optional<std::string> unit_folder(const std::string& unit) {
  std::error_code ec;
  fs::path top = mount();
  if (fs::is_directory(top / unit, ec)) return (top / unit).string();
  for (const auto& e : fs::directory_iterator(top, ec))
    if (e.is_directory(ec) && e.path().filename().string().ends_with(".slice") && fs::is_directory(e.path() / unit, ec))
      return (e.path() / unit).string();
  return std::nullopt;
}

std::string cgroup_nerve_units() {
  std::string out;
  std::error_code ec;
  auto add = [&](const fs::path& folder) {
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      std::string name = e.path().filename().string();
      if (e.is_directory(ec) && name.starts_with("nerve-") && name.ends_with(".scope"))
        out += name + " loaded active running\n";
    }
  };
  add(mount());
  for (const auto& e : fs::directory_iterator(mount(), ec))
    if (e.is_directory(ec) && e.path().filename().string().ends_with(".slice")) add(e.path());
  return out;
}

std::optional<std::string> cgroup_unit_property(const std::string& unit, const std::string& name) {
  auto folder = unit_folder(unit);
  if (name == "ActiveState") return folder ? "active" : "inactive";
  if (!folder) return "";
  fs::path f = *folder;
  if (name == "InvocationID") {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) return "";
    char id[33];
    std::snprintf(id, sizeof id, "%032" PRIx64, static_cast<std::uint64_t>(st.st_ino));
    return id;
  }
  if (name == "Slice") {
    std::string parent = f.parent_path().filename().string();
    return parent.ends_with(".slice") ? parent : "";
  }
  if (name == "ControlGroup") return f.string().substr(mount().size());
  if (name == "TasksMax") return limit(first_line(f / "pids.max"));
  if (name == "MemoryMax") return limit(first_line(f / "memory.max"));
  if (name == "RuntimeMaxUSec") return "infinity";
  return std::nullopt;
}

std::string stop_out_of_band(const std::string& unit) {
  if (!cgroup_backend()) {
    Output o = run(command({"systemctl", "--user", "stop", unit}));
    return o.exit_code == 0 ? "" : "systemctl --user stop " + unit + ": " + o.err;
  }
  auto folder = unit_folder(unit);
  if (!folder) return "no folder for " + unit;
  std::ofstream(*folder + "/cgroup.kill") << "1";
  // Every process below it ended: none is listed any more (an ended child of the test that it has not
  // waited for yet is not listed, and keeps the folder populated until it is waited for).
  bool ended = eventually([&] { return listed_pids(*folder).empty(); }, std::chrono::milliseconds{5000});
  if (!ended) return *folder + " still has processes after cgroup.kill";
  if (first_line(*folder + "/cgroup.events") != "populated 0") return "";  // nerved collects it once empty
  // (nerved may collect the emptied folder first, as the user manager collects an emptied scope.)
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(*folder, ec))
    if (e.is_directory(ec)) ::rmdir(e.path().c_str());
  if (::rmdir(folder->c_str()) != 0 && errno != ENOENT && errno != EBUSY) return "cannot remove " + *folder;
  return "";
}

std::vector<std::string> foreign_scope_command(const std::string& unit, const std::string& slice,
                                               const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  if (!cgroup_backend()) {
    out = {"systemd-run", "--user", "--scope", "--quiet", "--unit=" + unit, "--slice=" + slice, "--"};
  } else {
    std::string folder = mount() + "/" + slice + "/" + unit;
    out = {"sh", "-c", "mkdir -p '" + folder + "' && echo $$ > '" + folder + "/cgroup.procs' && exec \"$@\"", "sh"};
  }
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string controller_missing_for(const std::vector<std::string>& assignments) {
  if (!cgroup_backend()) return "";
  static const std::vector<std::pair<std::string, std::string>> needs = {
      {"MemoryMax", "memory"}, {"MemoryHigh", "memory"}, {"TasksMax", "pids"}, {"CPUQuota", "cpu"},
      {"CPUWeight", "cpu"},    {"IOWeight", "io"},       {"AllowedCPUs", "cpuset"}};
  std::string offered = " " + first_line(mount() + "/cgroup.controllers") + " ";
  for (const auto& a : assignments)
    for (const auto& [key, controller] : needs)
      if (a.rfind(key + "=", 0) == 0 && offered.find(" " + controller + " ") == std::string::npos) return controller;
  return "";
}

}  // namespace nerve::itest
