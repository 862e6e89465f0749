// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/journal.h"

#include <spdlog/sinks/base_sink.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include <cinttypes>
#include <cstdio>
#include <mutex>

namespace nerve {

namespace {

int send_to_journal(const std::vector<std::string>& fields) {
  std::vector<iovec> iov;
  iov.reserve(fields.size());
  for (const auto& f : fields) iov.push_back({const_cast<char*>(f.data()), f.size()});
  return sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

class JournalSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JournalSink(JournalWriter writer) : writer_(std::move(writer)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    writer_(journal_fields(msg.level, text, ScopedRunFields::current()));
  }
  void flush_() override {}

 private:
  JournalWriter writer_;
};

}  // namespace

int journal_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return 3;
    case spdlog::level::warn: return 4;
    case spdlog::level::info: return 6;
    default: return 7;
  }
}

std::vector<std::string> journal_fields(spdlog::level::level_enum level, std::string_view message,
                                        const RunFields* run) {
  std::vector<std::string> f = {"MESSAGE=" + std::string(message), "PRIORITY=" + std::to_string(journal_priority(level)),
                                "SYSLOG_IDENTIFIER=nerved"};
  if (!run) return f;
  if (!run->run.empty()) f.push_back("NERVE_RUN=" + run->run);
  if (run->attempt) f.push_back("NERVE_ATTEMPT=" + std::to_string(run->attempt));
  if (!run->invocation_id.empty()) f.push_back("NERVE_INVOCATION_ID=" + run->invocation_id);
  if (!run->unit.empty()) f.push_back("USER_UNIT=" + run->unit);
  if (run->message_id) f.push_back(std::string("MESSAGE_ID=") + run->message_id);
  return f;
}

bool is_journal_stream(int fd, const char* journal_stream) {
  if (!journal_stream) return false;
  std::uintmax_t dev = 0, ino = 0;
  int end = 0;
  if (std::sscanf(journal_stream, "%ju:%ju%n", &dev, &ino, &end) != 2 || journal_stream[end] != '\0') return false;
  struct stat st {};
  if (::fstat(fd, &st) < 0) return false;
  return st.st_dev == dev && st.st_ino == ino;
}

std::shared_ptr<spdlog::sinks::sink> make_journal_sink(JournalWriter writer) {
  return std::make_shared<JournalSink>(writer ? std::move(writer) : JournalWriter(send_to_journal));
}

}  // namespace nerve
