// SPDX-License-Identifier: LGPL-2.1-or-later
// Launch+reap throughput at 4 and 16 concurrent clients, engine API against raw start+stop jobs,
// alternating phases; the CPU that nerved, the user manager and dbus-daemon spend per run in each
// phase (/proc/PID/stat utime+stime); and a leak check after each phase (no scope, no process).
#include "procs.h"
#include "rows.h"
#include "scenarios.h"

#include <barrier>
#include <thread>

namespace bench {

namespace {

const std::vector<std::string> kSleeper{"/bin/sleep", "1000"};

void engine_client(int ops, std::vector<std::string>* runs) {
  Engine e;
  for (int i = 0; i < ops; ++i) {
    std::string run = Engine::next_run("tp");
    e.launch(run, kSleeper);
    std::string outcome = e.reap(run);
    expect(outcome == "complete", "throughput reap of " + run + ": " + outcome);
    runs->push_back(run);
  }
}

void raw_client(int ops) {
  RawSystemd raw;
  for (int i = 0; i < ops; ++i) {
    std::string unit = RawSystemd::next_unit();
    HeldChild child(kSleeper);
    expect(raw.start_scope(unit, child.pid()), "throughput start of " + unit);
    expect(child.release(), "throughput child of " + unit + " did not exec");
    expect(raw.stop_until_empty(unit, cgroup_of(child.pid())), "throughput stop of " + unit);
    child.wait();
  }
}

struct Cpu {
  std::uint64_t nerved, manager, bus;
};
Cpu cpu_now(Context& c) { return {cpu_ticks(c.nerved.pid()), cpu_ticks(c.manager_pid), cpu_ticks(c.bus_pid)}; }

// Bounded wait until nothing of the phase is left; returns what is left.
nlohmann::json leaks(Context& c, const std::string& folder_prefix, const std::string& unit_glob) {
  int procs = 0;
  std::size_t units = 0;
  std::vector<std::string> folders;
  auto t0 = Clock::now();
  do {
    folders = scope_folders(folder_prefix, &procs);
    units = c.raw.count_units(unit_glob);
    if (folders.empty() && units == 0) break;
    sleep_ms(20);
  } while (ms_since(t0) < 3000);
  return {{"scopes", units}, {"cgroups", folders.size()}, {"processes", procs}};
}

// One phase: `clients` threads doing `ops` launch+reap each, started together.
void phase(Context& c, bool engine, int clients, int ops, nlohmann::json& leak_log) {
  std::vector<std::vector<std::string>> runs(clients);
  std::vector<std::thread> threads;
  Cpu before = cpu_now(c);
  auto t0 = Clock::now();
  for (int i = 0; i < clients; ++i)
    threads.emplace_back([&, i] { engine ? engine_client(ops, &runs[i]) : raw_client(ops); });
  for (auto& t : threads) t.join();
  double secs = ms_since(t0) / 1000;
  Cpu after = cpu_now(c);
  double n = clients * ops;
  std::string col = clients == 4 ? kClients4 : kClients16, side = engine ? "nerve" : "reference";
  c.results.add("throughput", side, col, n / secs);
  c.results.add("cpu_nerved", side, col,
                ticks_to_ms(engine ? after.nerved - before.nerved : after.manager - before.manager) / n);
  c.results.add("cpu_manager", side, col, ticks_to_ms(after.manager - before.manager) / n);
  c.results.add("cpu_bus", side, col, ticks_to_ms(after.bus - before.bus) / n);
  nlohmann::json left = engine ? leaks(c, "nerve-tp-", "nerve-tp-*") : leaks(c, "bench-raw-", "bench-raw-*");
  auto& sum = leak_log[side + ", " + col];
  if (sum.is_null()) sum = nlohmann::json::object();
  for (auto& [k, v] : left.items()) sum[k] = sum.value(k, 0) + v.get<int>();
  for (auto& list : runs)
    for (auto& run : list) c.engine.forget(run);
}

}  // namespace

void run_throughput(Context& c) {
  int total = c.cfg.smoke ? 8 : 96;  // runs per phase
  int rounds = c.cfg.smoke ? 1 : std::max(3, c.cfg.iterations / 6);
  nlohmann::json leak_log = nlohmann::json::object();
  for (int clients : {4, 16}) {
    int ops = (total + clients - 1) / clients;
    for (int r = 0; r < rounds; ++r) {
      phase(c, r % 2 == 0, clients, ops, leak_log);
      phase(c, r % 2 != 0, clients, ops, leak_log);
    }
  }
  c.results.note("leaks", leak_log);
}

}  // namespace bench
