// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's RSS with 0, 100 and 1,000 live runs (sizes / 10 in smoke mode), launched through the
// engine API by 4 clients; all of them are reaped afterwards.
#include "procs.h"
#include "scenarios.h"

#include <filesystem>
#include <memory>
#include <thread>

namespace bench {

namespace {

// Runs fn(engine, i) for i in [0, n) on the engines, one thread each.
void parallel(std::vector<std::unique_ptr<Engine>>& engines, int n,
              const std::function<void(Engine&, int)>& fn) {
  std::vector<std::thread> threads;
  int k = static_cast<int>(engines.size());
  for (int t = 0; t < k; ++t)
    threads.emplace_back([&, t] {
      for (int i = t; i < n; i += k) fn(*engines[t], i);
    });
  for (auto& th : threads) th.join();
}

}  // namespace

void run_live_memory(Context& c) {
  std::filesystem::path dir = std::filesystem::path(c.cfg.work) / "live-runs";
  std::filesystem::remove_all(dir);
  c.nerved.start(dir);
  std::vector<std::unique_ptr<Engine>> engines;
  for (int i = 0; i < 4; ++i) engines.push_back(std::make_unique<Engine>());
  std::vector<std::string> runs;
  for (int i = 0; i < 1000 / c.cfg.scale(); ++i) runs.push_back("mem-" + std::to_string(i));
  sleep_ms(200);
  c.results.add("live_rss", "nerve", "0", rss_mb(c.nerved.pid()));
  std::size_t done = 0;
  for (auto [size, count] : {std::pair{"1x", runs.size() / 10}, std::pair{"10x", runs.size()}}) {
    parallel(engines, static_cast<int>(count - done),
             [&](Engine& e, int i) { e.launch(runs[done + i], {"/bin/sleep", "1000"}); });
    done = count;
    sleep_ms(200);
    c.results.add("live_rss", "nerve", size, rss_mb(c.nerved.pid()));
  }
  parallel(engines, static_cast<int>(runs.size()), [&](Engine& e, int i) {
    expect(e.reap(runs[i]) == "complete", "reap of live run " + runs[i]);
  });
  c.nerved.stop();
}

}  // namespace bench
