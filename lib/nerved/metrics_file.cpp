// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nerved/metrics_file.h"

#include "base/defaults.h"
#include "base/durable_file.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

namespace nerve {

MetricsFile::MetricsFile(Timers& timers, std::string path, Clock::duration interval, std::function<std::string()> text)
    : timers_(timers), path_(std::move(path)), interval_(interval), text_(std::move(text)) {
  std::size_t slash = path_.rfind('/');
  folder_ = slash == 0 ? "/" : path_.substr(0, slash);
  name_ = path_.substr(slash + 1);
}

MetricsFile::~MetricsFile() {
  if (timer_) timers_.cancel_timer(*timer_);
  if (::unlink(path_.c_str()) == 0) spdlog::info("metrics file {} removed", path_);
}

void MetricsFile::changed() {
  Clock::time_point now = timers_.now();
  Clock::time_point at = last_write_ && *last_write_ + interval_ > now ? *last_write_ + interval_ : now;
  if (timer_ && due_ <= at) return;  // a write is due as soon or sooner
  schedule(at);
}

void MetricsFile::schedule(Clock::time_point at) {
  if (timer_) timers_.cancel_timer(*timer_);
  due_ = at;
  Clock::time_point now = timers_.now();
  timer_ = timers_.add_timer(at > now ? at - now : Clock::duration::zero(), [this] {
    timer_.reset();
    write();
  });
}

void MetricsFile::write() {
  last_write_ = timers_.now();
  try {
    Fd folder = open_dir_path(folder_, IfMissing::Fail);
    // Lazy: the file is rewritten soon anyway, and after a crash of the machine no nerved is behind it.
    write_file_atomic(folder.get(), name_, text_(), path_, Sync::Lazy, 0644);
    ++writes_;
    if (!last_error_.empty()) spdlog::info("metrics file {} written again", path_);
    last_error_.clear();
  } catch (const std::exception& e) {
    if (last_error_ != e.what()) spdlog::error("cannot write the metrics file: {}; trying again later", e.what());
    last_error_ = e.what();
  }
  schedule(*last_write_ + kMetricsRefresh);
}

}  // namespace nerve
