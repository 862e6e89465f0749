// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved's lines in the systemd journal. When nerved's stderr is the journal stream systemd gave it
// (JOURNAL_STREAM=DEV:INO matches stderr, the documented test, systemd.exec(5)), nerved logs through
// sd_journal_sendv instead: PRIORITY from the spdlog level (trace/debug 7, info 6, warning 4,
// error 3, critical 2), SYSLOG_IDENTIFIER=nerved, and for a line about a run (run_log.h) the fields
// NERVE_RUN, NERVE_ATTEMPT, NERVE_INVOCATION_ID and USER_UNIT=<the run's scope>, so that
// `journalctl --user -u nerve-RUN-....scope` shows nerve's lines next to the run's own. Launch, reap
// and reconcile outcomes carry a MESSAGE_ID (below; `journalctl MESSAGE_ID=...`). Otherwise: stderr.
#pragma once

#include <spdlog/sinks/sink.h>
#include <spdlog/spdlog.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nerve {

// Fixed 128-bit ids (`systemd-id128 new`), documented in nerved(8).
namespace message_id {
inline constexpr const char* Launch = "e78403b11ed74fcab95b19789a5780e9";     // a run's scope holds its command
inline constexpr const char* Reap = "57db9560f0614451ac3607a8b56f472f";       // a reap's outcome (receipt)
inline constexpr const char* Reconcile = "74c84b178c534b868b1cc805dd76bdde";  // what reconciliation did to a run
}  // namespace message_id

// What a line about a run carries into the journal (empty strings and attempt 0 are left out).
struct RunFields {
  std::string run;
  unsigned attempt = 0;
  std::string unit;
  std::string invocation_id;
  const char* message_id = nullptr;
};

// The fields of the lines logged on this thread while it lives (nerved has one thread).
class ScopedRunFields {
 public:
  explicit ScopedRunFields(const RunFields& fields) : previous_(current()) { current() = &fields; }
  ~ScopedRunFields() { current() = previous_; }
  ScopedRunFields(const ScopedRunFields&) = delete;
  ScopedRunFields& operator=(const ScopedRunFields&) = delete;
  static const RunFields*& current() {
    thread_local const RunFields* fields = nullptr;
    return fields;
  }

 private:
  const RunFields* previous_;
};

int journal_priority(spdlog::level::level_enum level);
// "MESSAGE=...", "PRIORITY=N", "SYSLOG_IDENTIFIER=nerved", then the run's fields, if any.
std::vector<std::string> journal_fields(spdlog::level::level_enum level, std::string_view message,
                                        const RunFields* run);
// Whether JOURNAL_STREAM ("DEV:INO", may be null) names the file open on FD.
bool is_journal_stream(int fd, const char* journal_stream);

// Sends one entry's fields; returns 0 or a negative errno (sd_journal_sendv's convention).
using JournalWriter = std::function<int(const std::vector<std::string>&)>;
// A sink that writes every line to the journal (through WRITER; default sd_journal_sendv).
std::shared_ptr<spdlog::sinks::sink> make_journal_sink(JournalWriter writer = {});

}  // namespace nerve
