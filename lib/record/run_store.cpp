// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/timestamps.h"
#include "record/run_store.h"

#include "base/durable_file.h"
#include "base/run_id.h"

#include <dirent.h>
#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <malloc.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <utility>

namespace nerve {

namespace {
constexpr const char* kRecordFile = "lifecycle.json";
constexpr const char* kReceiptFile = "receipt.json";
constexpr std::string_view kSupersededPrefix = "receipt.attempt-", kSupersededSuffix = ".json";

std::string superseded_name(unsigned attempt) {
  return std::string(kSupersededPrefix) + std::to_string(attempt) + std::string(kSupersededSuffix);
}

// The names of the superseded attempts' receipts in a run's folder (dirfd), by attempt.
std::vector<std::string> superseded_names(int dirfd, const std::string& shown) {
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw FsError("cannot open folder", shown, errno);
  DIR* d = ::fdopendir(fd);
  if (!d) {
    FsError e("cannot read folder", shown, errno);
    ::close(fd);
    throw e;
  }
  std::vector<std::pair<unsigned long, std::string>> found;
  while (auto* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (!name.starts_with(kSupersededPrefix) || !name.ends_with(kSupersededSuffix)) continue;
    auto digits = name.substr(kSupersededPrefix.size(), name.size() - kSupersededPrefix.size() - kSupersededSuffix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
    found.emplace_back(std::stoul(std::string(digits)), std::string(name));
  }
  ::closedir(d);
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [attempt, name] : found) out.push_back(std::move(name));
  return out;
}
}  // namespace

RunStore::RunStore(std::string runs_dir) : path_(std::move(runs_dir)) {
  while (path_.size() > 1 && path_.back() == '/') path_.pop_back();
  struct stat before {};
  bool existed = ::stat(path_.c_str(), &before) == 0;
  dir_ = open_dir_path(path_, IfMissing::Create);
  // The mode is set only on a folder nerved made: --runs-dir may point (through a symlink too) at a
  // folder that is not nerved's to change. One of another user is refused.
  struct stat st {};
  if (::fstat(dir_.get(), &st) < 0) throw FsError("cannot stat folder", path_, errno);
  if (st.st_uid != ::geteuid()) throw FsError("refusing a runs folder owned by uid " + std::to_string(st.st_uid) + ":", path_, EPERM);
  if (!existed) ::fchmod(dir_.get(), 0700);
  else if (st.st_mode & 077) spdlog::warn("runs folder {} is accessible to others (mode {:o}); nerved leaves its mode alone", path_, st.st_mode & 07777);
}

OpenedFolder RunStore::open_run(const std::string& run, IfMissing if_missing) const {
  // Callers check run ids; this is the last line of defence against a name that leaves the folder.
  if (run_id_problem(run)) throw FsError("refusing run folder name", run, EINVAL);
  return open_dir_at(dir_.get(), run, if_missing, run_path(run));
}

std::optional<std::string> RunStore::read(const std::string& run, const char* file) const {
  Fd dir;
  try {
    dir = open_run(run, IfMissing::Fail).fd;
  } catch (const FsError& e) {
    if (e.err() == ENOENT) return std::nullopt;
    throw;
  }
  return read_file_at(dir.get(), file, run_path(run) + "/" + file);
}

namespace {
Error io_error(const FsError& e) { return {store_error::Io, e.what()}; }

// Runs 'fn', turning the exceptions of the file layer into the store's errors.
template <typename Fn>
auto guarded(Fn&& fn) -> Result<decltype(fn())> {
  try {
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      return {};
    } else {
      return fn();
    }
  } catch (const RecordCorrupt& e) {
    return Error{store_error::Corrupt, e.what()};
  } catch (const FsError& e) {
    return io_error(e);
  }
}
}  // namespace

Result<std::optional<Record>> RunStore::load_from_disk(const std::string& run) const {
  return guarded([&]() -> std::optional<Record> {
    auto text = read(run, kRecordFile);
    if (!text) return std::nullopt;
    Record r = parse_record(*text);
    if (r.run != run) throw RecordCorrupt("lifecycle.json names run '" + r.run + "', not its folder");
    return r;
  });
}

Result<std::optional<Record>> RunStore::load(const std::string& run) const {
  if (auto it = memory_.find(run); it != memory_.end())
    return guarded([&] { return std::optional<Record>(unpack(it->second.packed, run, pool_)); });
  auto r = load_from_disk(run);
  if (r && *r) {
    memory_[run].packed = pack(**r, pool_);
    ++generation_;
  }
  return r;
}

Result<std::optional<Receipt>> RunStore::load_receipt(const std::string& run) const {
  auto r = guarded([&]() -> std::optional<Receipt> {
    auto text = read(run, kReceiptFile);
    if (!text) return std::nullopt;
    return parse_receipt(*text);
  });
  if (auto it = memory_.find(run); it != memory_.end()) remember_receipt(it->second, r);
  return r;
}

void RunStore::remember_receipt(Entry& e, const Result<std::optional<Receipt>>& r) const {
  ++generation_;
  if (!r) {
    e.receipt = ReceiptFile::Unreadable;
    return;
  }
  e.receipt = *r ? ReceiptFile::Present : ReceiptFile::Absent;
  if (!*r) return;
  e.outcome = (*r)->outcome;
  e.cause = (*r)->cause;
  auto at = parse_rfc3339((*r)->reaped_at);
  e.reaped_at_us = at ? std::chrono::duration_cast<std::chrono::microseconds>(at->time_since_epoch()).count() : 0;
}

ReceiptSummary RunStore::summary_of(const Entry& e) const {
  ReceiptSummary s;
  s.file = e.receipt.value_or(ReceiptFile::Absent);
  if (s.file != ReceiptFile::Present) return s;
  s.outcome = e.outcome;
  s.cause = e.cause;
  if (e.reaped_at_us) s.reaped_at = std::chrono::system_clock::time_point(std::chrono::microseconds(e.reaped_at_us));
  return s;
}

ReceiptSummary RunStore::receipt_summary(const std::string& run) const {
  auto it = memory_.find(run);
  if (it == memory_.end()) {
    auto r = load_receipt(run);
    Entry e;
    remember_receipt(e, r);
    return summary_of(e);
  }
  if (!it->second.receipt) (void)load_receipt(run);
  return summary_of(it->second);
}

std::optional<ReceiptSummary> RunStore::known_receipt_summary(const std::string& run) const {
  auto it = memory_.find(run);
  if (it == memory_.end() || !it->second.receipt) return std::nullopt;
  return summary_of(it->second);
}

std::optional<Cause> RunStore::final_cause(const std::string& run) const {
  auto it = memory_.find(run);
  if (it == memory_.end() || it->second.receipt != ReceiptFile::Present || !is_final(it->second.outcome)) return std::nullopt;
  return it->second.cause;
}

void RunStore::changed(const std::string& run, std::optional<Record> after, Folder folder) const {
  StoreChange c;
  auto it = memory_.find(run);
  if (it != memory_.end()) {
    c.before = unpack(it->second.packed, run, pool_);
    c.cause_before = final_cause(run);
  }
  if (after) {
    if (it == memory_.end()) it = memory_.emplace(run, Entry{}).first;
    if (folder == Folder::Created) it->second.receipt = ReceiptFile::Absent;  // a folder nerved just made holds no receipt: not read
    it->second.packed = pack(*after, pool_);
    c.cause_after = final_cause(run);
  } else if (it != memory_.end()) {
    memory_.erase(it);
    if (++removed_since_trim_ >= 1024) trim();
  }
  c.after = std::move(after);
  ++generation_;
  notify(run, c);
}

Result<void> RunStore::save(const Record& record, Sync sync) const {
  return guarded([&] {
    auto [dir, folder] = open_run(record.run, IfMissing::Create);
    try {
      write_file_atomic(dir.get(), kRecordFile, to_json_text(record), run_path(record.run) + "/" + kRecordFile, sync);
      // A new run's folder is an entry of the runs folder: durable only once that folder is synced.
      if (folder == Folder::Created && sync == Sync::Durable && ::fsync(dir_.get()) < 0)
        throw FsError("cannot fsync the folder of", run_path(record.run), errno);
    } catch (const FsError&) {
      if (folder == Folder::Created) ::unlinkat(dir_.get(), record.run.c_str(), AT_REMOVEDIR);  // only if it is empty
      throw;
    }
    changed(record.run, record, folder);
  });
}

Result<void> RunStore::save_receipt(const Receipt& receipt, Sync sync) const {
  return guarded([&] {
    Fd dir = open_run(receipt.run, IfMissing::Create).fd;
    write_file_atomic(dir.get(), kReceiptFile, to_json_text(receipt), run_path(receipt.run) + "/" + kReceiptFile, sync);
    StoreChange c;
    c.receipt = &receipt;
    auto it = memory_.find(receipt.run);
    if (it != memory_.end()) {
      c.before = c.after = unpack(it->second.packed, receipt.run, pool_);
      c.cause_before = final_cause(receipt.run);
      remember_receipt(it->second, std::optional<Receipt>(receipt));
      c.cause_after = final_cause(receipt.run);
    }
    ++generation_;
    notify(receipt.run, c);
  });
}

std::vector<std::string> RunStore::in_memory() const {
  std::vector<std::string> out;
  out.reserve(memory_.size());
  for (const auto& [run, e] : memory_) out.push_back(run);
  return out;
}

void RunStore::drop_memory() const {
  memory_.clear();
  ++generation_;
  trim();
}

Result<void> RunStore::save_superseded_receipt(const Receipt& receipt) const {
  return guarded([&] {
    Fd dir = open_run(receipt.run, IfMissing::Fail).fd;
    std::string name = superseded_name(receipt.attempt);
    write_file_atomic(dir.get(), name, to_json_text(receipt), run_path(receipt.run) + "/" + name, Sync::Durable);
  });
}

Result<std::vector<Receipt>> RunStore::superseded_receipts(const std::string& run) const {
  return guarded([&] {
    std::vector<Receipt> out;
    Fd dir;
    try {
      dir = open_run(run, IfMissing::Fail).fd;
    } catch (const FsError& e) {
      if (e.err() == ENOENT) return out;
      throw;
    }
    for (const auto& name : superseded_names(dir.get(), run_path(run)))
      if (auto text = read_file_at(dir.get(), name, run_path(run) + "/" + name)) out.push_back(parse_receipt(*text));
    return out;
  });
}

Result<std::vector<std::string>> RunStore::reload(std::vector<std::string>* skipped) const {
  drop_memory();
  auto names = runs(skipped);
  if (!names) return names;
  for (const auto& run : *names) (void)load(run);  // errors are for the caller's own load to meet
  trim();  // the parser's garbage
  return names;
}

void RunStore::trim() { ::malloc_trim(0); }

Result<std::string> RunStore::quarantine(const std::string& run) const {
  return guarded([&] {
    Fd dir = open_run(run, IfMissing::Fail).fd;
    Fd q = open_dir_at(dir_.get(), ".quarantine", IfMissing::Create, path_ + "/.quarantine").fd;
    std::string base = run + "." + now_rfc3339();
    std::string target = base + ".lifecycle.json";
    if (::renameat(dir.get(), kRecordFile, q.get(), target.c_str()) < 0 && errno != ENOENT)
      throw FsError("cannot move aside", run_path(run) + "/" + kRecordFile, errno);
    if (::renameat(dir.get(), kReceiptFile, q.get(), (base + ".receipt.json").c_str()) < 0 && errno != ENOENT)
      throw FsError("cannot move aside", run_path(run) + "/" + kReceiptFile, errno);
    for (const auto& name : superseded_names(dir.get(), run_path(run)))
      if (::renameat(dir.get(), name.c_str(), q.get(), (base + "." + name).c_str()) < 0 && errno != ENOENT)
        throw FsError("cannot move aside", run_path(run) + "/" + name, errno);
    ::fsync(q.get());
    ::fsync(dir.get());
    changed(run, std::nullopt);
    return path_ + "/.quarantine/" + target;
  });
}

Result<void> RunStore::remove(const std::string& run) const {
  return guarded([&] {
    {
      Fd dir = open_run(run, IfMissing::Fail).fd;
      remove_file_at(dir.get(), kReceiptFile, run_path(run) + "/" + kReceiptFile);
      for (const auto& name : superseded_names(dir.get(), run_path(run)))
        remove_file_at(dir.get(), name, run_path(run) + "/" + name);
      remove_file_at(dir.get(), kRecordFile, run_path(run) + "/" + kRecordFile);
    }
    if (::unlinkat(dir_.get(), run.c_str(), AT_REMOVEDIR) < 0 && errno != ENOENT)
      throw FsError("cannot remove folder", run_path(run), errno);
    ::fsync(dir_.get());
    changed(run, std::nullopt);
  });
}

Result<std::vector<std::string>> RunStore::runs(std::vector<std::string>* skipped) const {
  std::vector<std::string> out;
  int fd = ::openat(dir_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(FsError("cannot open folder", path_, errno));
  DIR* d = ::fdopendir(fd);
  if (!d) {
    FsError e("cannot read folder", path_, errno);
    ::close(fd);
    return io_error(e);
  }
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name == ".quarantine") continue;  // ours
    // The entry's type from readdir when the file system gives it (one fstatat less per run).
    struct stat st {};
    if (e->d_type == DT_DIR) st.st_mode = S_IFDIR;
    else if (e->d_type == DT_LNK) st.st_mode = S_IFLNK;
    else if (::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
    if (S_ISLNK(st.st_mode)) {
      if (skipped) skipped->push_back(run_path(name) + " is a symlink");
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (skipped) skipped->push_back(run_path(name) + " is not a folder");
      continue;
    }
    if (auto why = run_id_problem(name)) {
      if (skipped) skipped->push_back(run_path(name) + ": " + *why);
      continue;
    }
    out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string default_runs_dir() {
  if (const char* s = std::getenv("XDG_STATE_HOME"); s && *s == '/') return std::string(s) + "/nerve/runs";
  const char* home = std::getenv("HOME");
  std::string h = home && *home ? home : "";
  if (h.empty()) {
    if (auto* pw = ::getpwuid(::getuid())) h = pw->pw_dir;
  }
  return h + "/.local/state/nerve/runs";
}

}  // namespace nerve
