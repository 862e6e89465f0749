// SPDX-License-Identifier: LGPL-2.1-or-later
// Fleet metrics against what the test did: a known set of runs (started, reaped, cancelled, one
// left running, a Launch that fails, a Contain that is refused), then `nervectl metrics` and nerved's
// metrics file checked figure by figure against it and against the receipts; then the real
// prometheus-node-exporter from Debian serves that file (with a second user's copy next to it) over
// loopback, its scrape is checked against nervectl's figures, and `promtool check metrics` accepts
// nervectl's text and the scrape.
#include "engine_fixture.h"
#include "generated/nerve_version.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace nerve::itest {
namespace {

// Where Debian installs them (NERVE_TEST_NODE_EXPORTER and NERVE_TEST_PROMTOOL name others).
std::string program(const char* env, const char* debian) {
  const char* given = std::getenv(env);
  return given && *given ? given : debian;
}
const std::string kNodeExporter = program("NERVE_TEST_NODE_EXPORTER", "/usr/bin/prometheus-node-exporter");
const std::string kPromtool = program("NERVE_TEST_PROMTOOL", "/usr/bin/promtool");

std::string user_name() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw ? pw->pw_name : std::to_string(::geteuid());
}

// A sample's series with its labels sorted by name, as node_exporter serves them ("a{x=\"1\",y=\"2\"}").
std::string canonical(const std::string& series) {
  auto open = series.find('{');
  if (open == std::string::npos) return series;
  std::vector<std::string> labels;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = open + 1; i + 1 < series.size(); ++i) {
    char c = series[i];
    if (quoted && c == '\\') {
      cur += c;
      cur += series[++i];
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      labels.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) labels.push_back(cur);
  std::sort(labels.begin(), labels.end());
  std::string out = series.substr(0, open) + "{";
  for (std::size_t i = 0; i < labels.size(); ++i) out += (i ? "," : "") + labels[i];
  return out + "}";
}

// Every sample of an exposition: its canonical series -> value.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  for (const auto& line : lines_of(text)) {
    if (line.empty() || line[0] == '#') continue;
    auto space = line.rfind(' ');
    out[canonical(line.substr(0, space))] = std::stod(line.substr(space + 1));
  }
  return out;
}

// The samples of the families named PREFIX..., of user USER.
std::map<std::string, double> of_family(const std::map<std::string, double>& all, const std::string& prefix) {
  std::map<std::string, double> out;
  for (const auto& [series, v] : all)
    if (series.rfind(prefix, 0) == 0) out[series] = v;
  return out;
}

// A free port on 127.0.0.1 (bound, read, closed: node_exporter takes it right after).
int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) < 0) {
    ::close(s);
    return -1;
  }
  ::close(s);
  return ntohs(a.sin_port);
}

// GET /metrics from 127.0.0.1:PORT (HTTP/1.0: the server closes when it has answered); the body.
std::string scrape(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) {
    ::close(s);
    return "";
  }
  std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n";
  (void)!::write(s, req.data(), req.size());
  bool eof = false;
  std::string got = read_until_eof(s, kEventTimeout, &eof);
  ::close(s);
  auto body = got.find("\r\n\r\n");
  return body == std::string::npos ? "" : got.substr(body + 4);
}

class FleetMetrics : public AnEngine {
 protected:
  FleetMetrics() {
    char name[] = "/tmp/nerve-textfile-XXXXXX";
    if (::mkdtemp(name)) textfile_dir_ = name;
    ::chmod(textfile_dir_.c_str(), 0755);
    file_ = textfile_dir_ + "/nerve-" + user_ + ".prom";
    nerved_args_ = {"--metrics-file", file_, "--metrics-interval", "100ms"};
  }
  ~FleetMetrics() override {
    std::error_code ignored;
    std::filesystem::remove_all(textfile_dir_, ignored);
  }

  std::string metrics_text(const std::string& format) {
    auto out = ctl({"metrics", "--format", format});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return out.out;
  }
  // The canonical series of NAME with LABELS ("a=\"1\",b=\"2\"") and this user's label.
  std::string series(const std::string& name, const std::string& labels = "") {
    return canonical(name + "{user=\"" + user_ + "\"" + (labels.empty() ? "" : "," + labels) + "}");
  }

  // Launches RUN (sleep 300, or ARGV), watched; its pid.
  pid_t start(const std::string& run, std::vector<std::string> argv = {"sleep", "300"}) {
    watch_run(run);
    auto [object, pid] = launch(run, argv, devnull_);
    track(pid, false);
    return pid;
  }

  // The known set of runs; what each ended with is in its receipt.
  void do_known_runs() {
    connect();
    start("m-exit", {"true"});  // reaped when it exits
    ASSERT_TRUE(pump_until([&] { return saw_state("m-exit", "reaped"); }));
    start("m-cancel");
    EXPECT_EQ(std::get<0>(cancel("m-cancel", SIGINT)), "complete");
    start("m-reap");
    EXPECT_EQ(std::get<0>(reap("m-reap")), "complete");
    start("m-live");  // left running
    EXPECT_THROW(launch("m-bad", {"/nonexistent/command"}, devnull_), sdbus::Error);
    auto wait = ctl({"launch", "--wait", "m-wait", "--", "true"});
    EXPECT_EQ(wait.exit_code, 0) << wait.err;
    auto refused = ctl({"launch", "m-prop", "-p", "NoSuchProperty=1", "--", "true"});
    EXPECT_NE(refused.exit_code, 0);
  }

  std::string user_ = user_name();
  std::string textfile_dir_, file_;
  int devnull_ = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
};

TEST_F(FleetMetrics, CountWhatTheTestDidInNervectlAndInTheFile) {
  ASSERT_NO_FATAL_FAILURE(do_known_runs());
  auto m = samples(metrics_text("prometheus"));

  EXPECT_EQ(m[series("nerve_launches_total", "method=\"launch\",result=\"started\"")], 4);
  EXPECT_EQ(m[series("nerve_launches_total", "method=\"launch\",result=\"error\"")], 1);
  EXPECT_EQ(m[series("nerve_launches_total", "method=\"contain\",result=\"started\"")], 1);
  EXPECT_EQ(m[series("nerve_launches_total", "method=\"contain\",result=\"error\"")], 1);
  EXPECT_EQ(m[series("nerve_launch_duration_seconds_count", "method=\"launch\"")], 4);
  EXPECT_EQ(m[series("nerve_launch_duration_seconds_count", "method=\"contain\"")], 1);
  EXPECT_GT(m[series("nerve_launch_duration_seconds_sum", "method=\"launch\"")], 0);

  // Reaps and usage totals: as the receipts on disk have them (each final: one reap each).
  std::map<std::string, double> reaps;
  double reap_seconds = 0, cpu_user = 0, cpu_system = 0;
  std::size_t receipts = 0;
  for (const auto& run : list_folder(runs_)) {
    if (!std::filesystem::exists(runs_ + "/" + run + "/receipt.json")) continue;
    Receipt r = receipt(run);
    ASSERT_TRUE(is_final(r.outcome)) << run;
    ++receipts;
    reaps[series("nerve_reaps_total", "outcome=\"" + to_string(r.outcome) + "\",cause=\"" +
                                         to_string(r.cause.value_or(Cause::Reaped)) + "\"")] += 1;
    reap_seconds += static_cast<double>(r.duration_usec) / 1e6;
    if (r.usage) {
      cpu_user += static_cast<double>(r.usage->cpu_user_usec.value_or(0)) / 1e6;
      cpu_system += static_cast<double>(r.usage->cpu_system_usec.value_or(0)) / 1e6;
    }
  }
  EXPECT_GE(receipts, 4u);  // m-exit, m-cancel, m-reap, m-wait (and m-bad's, if its failure wrote one)
  EXPECT_EQ(of_family(m, "nerve_reaps_total"), reaps);
  EXPECT_EQ(m[series("nerve_reaps_total", "outcome=\"complete\",cause=\"cancelled\"")], 1);
  EXPECT_EQ(m[series("nerve_reaps_total", "outcome=\"complete\",cause=\"reaped\"")], 1);
  EXPECT_EQ(m[series("nerve_reap_duration_seconds_count")], static_cast<double>(receipts));
  EXPECT_NEAR(m[series("nerve_reap_duration_seconds_sum")], reap_seconds, 1e-6);
  EXPECT_NEAR(m[series("nerve_run_cpu_seconds_total", "mode=\"user\"")], cpu_user, 1e-6);
  EXPECT_NEAR(m[series("nerve_run_cpu_seconds_total", "mode=\"system\"")], cpu_system, 1e-6);
  EXPECT_EQ(m[series("nerve_reap_retries_pending")], 0);

  // Runs by state: as nervectl list has them; m-live is the one running.
  auto list = ctl({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::map<std::string, double> states;
  for (const auto& r : nlohmann::json::parse(list.out)) states[r.at("state").get<std::string>()] += 1;
  EXPECT_EQ(states["running"], 1);
  for (const auto& [state, n] : states) EXPECT_EQ(m[series("nerve_runs", "state=\"" + state + "\"")], n) << state;

  // nerved's own figures, against /proc of its pid.
  double fds = static_cast<double>(list_folder("/proc/" + std::to_string(nerved_pid_) + "/fd").size());
  EXPECT_NEAR(m[series("nerve_daemon_open_fds")], fds, 3);
  EXPECT_GT(m[series("nerve_daemon_resident_memory_bytes")], 1e6);
  EXPECT_EQ(m.count(series("nerve_build_info", "version=\"" NERVE_VERSION "\"")), 1u);

  // OpenMetrics (the default) has the same samples, and ends with # EOF.
  std::string om = ctl({"metrics"}).out;
  EXPECT_TRUE(om.ends_with("# EOF\n"));
  EXPECT_EQ(of_family(samples(om), "nerve_reaps_total"), reaps);
  EXPECT_NE(om.find("# TYPE nerve_reaps counter\n"), std::string::npos);

  // The file: kept current (within the interval), with the same counters, mode 0644.
  std::map<std::string, double> in_file;
  EXPECT_TRUE(eventually(
      [&] {
        in_file = samples(read_file(file_).value_or(""));
        return of_family(in_file, "nerve_reaps_total") == reaps &&
               of_family(in_file, "nerve_launches_total") == of_family(m, "nerve_launches_total");
      },
      kEventTimeout))
      << read_file(file_).value_or("(no file)");
  struct stat st {};
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(list_folder(textfile_dir_), std::vector<std::string>{"nerve-" + user_ + ".prom"});

  auto bad = ctl({"metrics", "--format", "json"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("'json'"), std::string::npos) << bad.err;  // InvalidArgument quotes the format
  reap("m-live");
  stop_nerved();
  EXPECT_FALSE(std::filesystem::exists(file_)) << "nerved left its metrics file behind when it stopped";
}

// node_exporter's textfile collector on the file nerved keeps, and a copy of it as another user's
// file next to it (one nerved per user per host: the `user` label keeps their series apart).
TEST_F(FleetMetrics, NodeExporterServesTheFileAndPromtoolAcceptsItAndNervectlsText) {
  ASSERT_TRUE(::access(kNodeExporter.c_str(), X_OK) == 0 && ::access(kPromtool.c_str(), X_OK) == 0)
      << kNodeExporter << " and " << kPromtool
      << " are needed (Debian packages prometheus-node-exporter and prometheus: scripts/install-deps.sh)";
  ASSERT_NO_FATAL_FAILURE(do_known_runs());
  std::string ours = metrics_text("prometheus");
  auto expected = samples(ours);
  ASSERT_TRUE(eventually(
      [&] {
        auto in_file = samples(read_file(file_).value_or(""));
        return of_family(in_file, "nerve_reaps_total") == of_family(expected, "nerve_reaps_total") &&
               of_family(in_file, "nerve_launches_total") == of_family(expected, "nerve_launches_total");
      },
      kEventTimeout))
      << read_file(file_).value_or("(no file)");
  std::string other = read_file(file_).value_or("");
  for (std::size_t at; (at = other.find("user=\"" + user_ + "\"")) != std::string::npos;)
    other.replace(at, 7 + user_.size(), "user=\"nerve-other-user\"");
  std::ofstream(textfile_dir_ + "/nerve-nerve-other-user.prom") << other;

  int port = free_port();
  ASSERT_GT(port, 0);
  int err[2];
  ASSERT_EQ(::pipe2(err, O_CLOEXEC), 0);
  SpawnSpec spec = command({kNodeExporter, "--collector.disable-defaults", "--collector.textfile",
                            "--collector.textfile.directory=" + textfile_dir_, "--web.disable-exporter-metrics",
                            "--web.listen-address=127.0.0.1:" + std::to_string(port)});
  spec.stderr_fd = err[1];
  pid_t exporter = spawn(spec);
  track(exporter, false);
  ::close(err[1]);
  std::string said;
  // Its stderr stays open until the scrape is done: a Go program dies of SIGPIPE writing to a
  // closed stderr (it logs more after this line).
  bool listening = read_until(err[0], "Listening on", kEventTimeout, &said);
  ASSERT_TRUE(listening) << "node_exporter did not say it listens: " << said;
  std::string scraped = scrape(port);
  ::close(err[0]);
  auto got = samples(scraped);
  ASSERT_EQ(got.count("node_textfile_scrape_error"), 1u) << "no scrape from node_exporter: " << scraped;
  EXPECT_EQ(got["node_textfile_scrape_error"], 0) << scraped;
  for (const char* family : {"nerve_reaps_total", "nerve_launches_total", "nerve_runs{", "nerve_reap_duration_seconds",
                             "nerve_build_info"}) {
    std::map<std::string, double> ours_only, users_only;
    for (const auto& [series, v] : of_family(got, family)) {
      if (series.find("user=\"" + user_ + "\"") != std::string::npos) ours_only[series] = v;
      if (series.find("user=\"nerve-other-user\"") != std::string::npos) users_only[series] = v;
    }
    EXPECT_EQ(ours_only, of_family(expected, family)) << family << " as node_exporter serves it:\n" << scraped;
    EXPECT_EQ(users_only.size(), ours_only.size()) << family;
  }

  // promtool's lint: nervectl's text (the file's format) and what node_exporter served.
  for (const auto& [what, text] : {std::pair{"nervectl metrics --format prometheus", ours}, {"the scrape", scraped}}) {
    std::string file = path("promtool-input");
    std::ofstream(file) << text;
    SpawnSpec check = command({"/bin/sh", "-c", kPromtool + " check metrics < " + file});
    Output out = run(check);
    EXPECT_EQ(out.exit_code, 0) << "promtool check metrics on " << what << ":\n" << out.out << out.err;
    EXPECT_EQ(out.out + out.err, "") << what;
  }
}

}  // namespace
}  // namespace nerve::itest
