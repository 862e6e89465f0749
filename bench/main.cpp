// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve_bench: nerve against its references, measured in one run. Figures, never pass/fail.
// scripts/bench.sh runs it inside a private user manager; see docs/performance.md.
//
// Usage: nerve_bench --nerved PATH --nervectl PATH --work DIR --out DIR [--iterations N] [--smoke]
//                    [--only engine,cli,throughput,idle,startup,memory,profile]
// (profile, an strace of nerved, runs only when named.)
// Writes DIR/bench.json (every sample and its statistics) and DIR/bench.md (the tables).
#include "scenarios.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace bench {

namespace {

struct Options {
  Config cfg;
  std::string out;
  std::set<std::string> only;
};

const char* const kScenarios[] = {"engine", "cli", "throughput", "idle", "startup", "memory"};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--nerved") o.cfg.nerved = value();
    else if (a == "--nervectl") o.cfg.nervectl = value();
    else if (a == "--work") o.cfg.work = value();
    else if (a == "--out") o.out = value();
    else if (a == "--iterations") o.cfg.iterations = std::stoi(value());
    else if (a == "--smoke") o.cfg.smoke = true;
    else if (a == "--only") {
      std::stringstream s(value());
      for (std::string x; std::getline(s, x, ',');) o.only.insert(x);
    } else throw std::runtime_error("unknown argument '" + a + "'");
  }
  if (o.cfg.nerved.empty() || o.cfg.nervectl.empty() || o.cfg.work.empty() || o.out.empty())
    throw std::runtime_error("--nerved, --nervectl, --work and --out are required");
  if (o.cfg.smoke && o.cfg.iterations == 30) o.cfg.iterations = 1;
  if (o.only.empty()) o.only.insert(std::begin(kScenarios), std::end(kScenarios));
  return o;
}

std::string first_line(const std::string& path, const std::string& prefix) {
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return "";
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

nlohmann::json machine(RawSystemd& raw) {
  utsname u{};
  ::uname(&u);
  return {{"nproc", ::sysconf(_SC_NPROCESSORS_ONLN)},
          {"kernel", u.release},
          {"cpu", first_line("/proc/cpuinfo", "model name\t: ")},
          {"systemd", raw.manager_version()},
          {"loadavg_at_start", first_line("/proc/loadavg", "")},
          {"date", utc_now()}};
}

bool run(Options& o) {
  std::filesystem::create_directories(o.cfg.work);
  std::filesystem::create_directories(o.out);
  Results results;
  RawSystemd raw;
  results.note("machine", machine(raw));
  results.note("config", {{"iterations", o.cfg.iterations}, {"smoke", o.cfg.smoke},
                          {"scenarios", std::vector<std::string>(o.only.begin(), o.only.end())}});
  Nerved nerved(o.cfg.nerved, o.cfg.work + "/nerved.log");
  Engine engine;
  Context c{o.cfg, results, nerved, raw, engine, raw.pid_of("org.freedesktop.systemd1"),
            raw.pid_of("org.freedesktop.DBus")};
  // A scenario that fails is reported (stderr, "errors" in the JSON, exit status 1); the others run.
  nlohmann::json errors = nlohmann::json::object();
  bool main_phase = true;  // the main nerved runs; later scenarios start their own
  auto step = [&](const char* name, void (*fn)(Context&)) {
    if (!o.only.count(name)) return;
    std::fprintf(stderr, "nerve_bench: %s\n", name);
    auto t0 = Clock::now();
    try {
      fn(c);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nerve_bench: %s failed: %s\n", name, e.what());
      errors[name] = e.what();
      if (!main_phase) nerved.stop();
    }
    std::fprintf(stderr, "nerve_bench: %s took %.1f s\n", name, ms_since(t0) / 1000);
  };
  std::filesystem::remove_all(o.cfg.work + "/main-runs");
  nerved.start(o.cfg.work + "/main-runs");
  step("engine", run_engine_latency);
  step("cli", run_cli_latency);
  step("throughput", run_throughput);
  step("idle", run_idle);
  if (o.only.count("profile")) run_profile(c, o.out);
  nerved.stop();
  main_phase = false;
  step("startup", run_startup);
  step("memory", run_live_memory);
  results.note("loadavg_at_end", first_line("/proc/loadavg", ""));
  if (!errors.empty()) results.note("errors", errors);
  std::ofstream(o.out + "/bench.json") << results.to_json().dump(1) << "\n";
  std::ofstream(o.out + "/bench.md") << results.to_markdown();
  std::fputs(results.to_markdown().c_str(), stdout);
  return errors.empty();
}

}  // namespace

}  // namespace bench

int main(int argc, char** argv) {
  try {
    auto o = bench::parse(argc, argv);
    return bench::run(o) ? 0 : 1;
  } catch (const sdbus::Error& e) {
    std::fprintf(stderr, "nerve_bench: %s: %s\n", e.getName().c_str(), e.getMessage().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nerve_bench: %s\n", e.what());
  }
  return 1;
}
