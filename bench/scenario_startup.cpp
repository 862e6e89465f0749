// SPDX-License-Identifier: LGPL-2.1-or-later
// Startup with 0, 1,000 and 10,000 records, 100 of them live runs to adopt (sizes / 10 in smoke
// mode): time from exec to the bus name owned and to the startup reconciliation done, RSS once
// done, and a warm engine Launch at that size. The sizes alternate from restart to restart.
//
// Finished records are copies of one record that nerved itself wrote (Launch, Reap), with the run
// id replaced: whatever the record format, nerved reads what it wrote.
#include "procs.h"
#include "scenarios.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace bench {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// Copies the template run's folder under `count` new run ids.
void clone_record(const fs::path& dir, const std::string& tpl, int count) {
  std::vector<std::pair<std::string, std::string>> files;
  for (auto& f : fs::directory_iterator(dir / tpl)) files.emplace_back(f.path().filename(), slurp(f.path()));
  for (int i = 0; i < count; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "fin-%06d", i);
    fs::create_directory(dir / id);
    fs::permissions(dir / id, fs::perms::owner_all);
    for (auto [name, text] : files) {
      replace_all(text, tpl, id);
      std::ofstream(dir / id / name, std::ios::binary) << text;
    }
  }
}

// A runs folder with `records` records, `live` of them running `sleep` (owned by c.engine's connection).
void fill(Context& c, const fs::path& dir, int records, int live) {
  fs::create_directories(dir);
  c.nerved.start(dir);
  std::string tpl = "benchtemplaterun";
  c.engine.launch(tpl, {"/bin/sleep", "1000"});
  expect(c.engine.reap(tpl) == "complete", "template reap");
  for (int i = 0; i < live; ++i) c.engine.launch(Engine::next_run("live"), {"/bin/sleep", "1000"});
  c.nerved.stop();
  if (records > live) clone_record(dir, tpl, records - live - 1);
}

void measure(Context& c, const fs::path& dir, const char* size) {
  StartTimes t = c.nerved.start(dir);
  sleep_ms(200);
  c.results.add("startup_name", "nerve", size, t.name_owned_ms);
  if (t.reconciled_ms >= 0) c.results.add("startup_reconciled", "nerve", size, t.reconciled_ms);
  c.results.add("startup_rss", "nerve", size, rss_mb(c.nerved.pid()));
  for (int i = 0; i < 3; ++i) {
    std::string run = Engine::next_run("grow");
    sleep_ms(5);
    auto t0 = Clock::now();
    c.engine.launch(run, {"/bin/sleep", "1000"});
    c.results.add("records_launch", "nerve", size, ms_since(t0));
    c.engine.reap(run);
    c.engine.forget(run);
  }
  c.nerved.stop();
}

}  // namespace

void run_startup(Context& c) {
  int s = c.cfg.scale(), live = 100 / s;
  fs::path base = fs::path(c.cfg.work) / "startup";
  fs::remove_all(base);
  const std::vector<std::pair<const char*, int>> sizes{{"0", 0}, {"1x", 1000 / s}, {"10x", 10000 / s}};
  for (auto& [name, n] : sizes) fill(c, base / name, n, n ? live : 0);
  int reps = c.cfg.smoke ? 1 : 5;
  for (int r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      auto& [name, n] = sizes[(r + k) % sizes.size()];
      measure(c, base / name, name);
    }
  c.results.note("startup_sizes", {{"0", 0}, {"1x", 1000 / s}, {"10x", 10000 / s}, {"live", live}});
  // End the live runs: a nerved on each folder reaps them.
  for (auto& [name, n] : sizes) {
    if (!n) continue;
    c.nerved.start(base / name);
    for (auto& e : fs::directory_iterator(base / name))
      if (e.path().filename().string().rfind("live-", 0) == 0) c.engine.reap(e.path().filename());
    c.nerved.stop();
  }
}

}  // namespace bench
