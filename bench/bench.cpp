// nerve_bench: how long nerve's steps take, measured from a client over the bus.
//
//   contain: a forked child calls Contain for itself (scope created, membership checked, record
//            durable) until the reply: what `nervectl launch` adds before CMD can exec;
//   launch:  the engine API's Launch (fork, contain, exec confirmed) until the reply;
//   reap:    Reap of a 3-process tree that heeds TERM (StopUnit/KillUnit, cgroup empty, receipt);
//   reap+kill: Reap with a 100 ms grace of a tree whose processes ignore TERM (SIGKILL path).
// Prints median, 90th percentile and max of each in milliseconds. Needs a running nerved and a user
// manager: scripts/bench.sh provides both.
#include "nerve-proxy.h"

#include <sdbus-c++/sdbus-c++.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void report(const char* what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-10s n=%-4zu median %7.2f ms   p90 %7.2f ms   max %7.2f ms\n", what, v.size(), v[v.size() / 2],
              v[v.size() * 9 / 10], v.back());
}

std::unique_ptr<sdbus::IProxy> manager(sdbus::IConnection& bus) {
  return sdbus::createProxy(bus, "org.nerve.Lifecycle1", "/org/nerve/Lifecycle1");
}

double reap(sdbus::IProxy& m, const std::string& run, uint64_t grace_usec) {
  std::string outcome, receipt;
  auto t0 = Clock::now();
  m.callMethod("Reap").onInterface("org.nerve.Lifecycle1.Manager").withArguments(run, grace_usec).storeResultsTo(outcome, receipt);
  double t = ms(Clock::now() - t0);
  if (outcome != "complete") std::fprintf(stderr, "bench: reap of %s: %s\n", run.c_str(), outcome.c_str());
  return t;
}

// A child that contains itself, reports the time Contain took, then becomes a 3-process tree.
double contain_child(const std::string& run, bool ignore_term, pid_t* child) {
  int p[2];
  if (::pipe(p) < 0) std::exit(1);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    auto bus = sdbus::createSessionBusConnection();
    auto m = manager(*bus);
    std::tuple<std::string, std::string, std::string, uint32_t> reply;
    auto t0 = Clock::now();
    m->callMethod("Contain").onInterface("org.nerve.Lifecycle1.Manager")
        .withArguments(run, uint64_t{1'000'000}, std::map<std::string, sdbus::Variant>{}).storeResultsTo(reply);
    double t = ms(Clock::now() - t0);
    m.reset();
    bus.reset();
    (void)!::write(p[1], &t, sizeof t);
    ::close(p[1]);
    const char* tree = ignore_term ? "trap '' TERM; sleep 1000 & sleep 1000 & wait"
                                   : "sleep 1000 & sleep 1000 & wait";
    ::execl("/bin/sh", "sh", "-c", tree, nullptr);
    ::_exit(127);
  }
  ::close(p[1]);
  double t = -1;
  if (::read(p[0], &t, sizeof t) != sizeof t) std::fprintf(stderr, "bench: contain of %s failed\n", run.c_str());
  ::close(p[0]);
  *child = pid;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 50;
  auto bus = sdbus::createSessionBusConnection();
  bus->setMethodCallTimeout(60'000'000);
  auto m = manager(*bus);
  std::string tag = std::to_string(::getpid());
  std::vector<double> contain, launch, reap_term, reap_kill;
  int devnull = ::open("/dev/null", O_RDWR);

  for (int i = 0; i < n; ++i) {
    pid_t child;
    std::string run = "bench-" + tag + "-c" + std::to_string(i);
    contain.push_back(contain_child(run, false, &child));
    ::usleep(20'000);  // let the tree start (the reap is what is measured, not this)
    reap_term.push_back(reap(*m, run, 0));
    ::waitpid(child, nullptr, 0);
  }
  for (int i = 0; i < n / 5 + 1; ++i) {
    pid_t child;
    std::string run = "bench-" + tag + "-k" + std::to_string(i);
    contain_child(run, true, &child);
    ::usleep(20'000);
    reap_kill.push_back(reap(*m, run, 100'000));
    ::waitpid(child, nullptr, 0);
  }
  for (int i = 0; i < n; ++i) {
    std::string run = "bench-" + tag + "-l" + std::to_string(i);
    std::vector<sdbus::UnixFd> stdio{sdbus::UnixFd(devnull), sdbus::UnixFd(devnull), sdbus::UnixFd(devnull)};
    std::map<std::string, sdbus::Variant> opts{{"reap_on_exit", sdbus::Variant(false)}};
    sdbus::ObjectPath path;
    uint32_t pid = 0;
    auto t0 = Clock::now();
    m->callMethod("Launch").onInterface("org.nerve.Lifecycle1.Manager")
        .withArguments(run, std::vector<std::string>{"/bin/sleep", "1000"}, std::vector<std::string>{"PATH=/usr/bin:/bin"},
                       std::string("/"), stdio, opts)
        .storeResultsTo(path, pid);
    launch.push_back(ms(Clock::now() - t0));
    reap(*m, run, 0);
  }
  std::printf("nerve_bench: %d runs each\n", n);
  report("contain", contain);
  report("launch", launch);
  report("reap", reap_term);
  report("reap+kill", reap_kill);
  return 0;
}
