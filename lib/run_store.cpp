#include "run_store.h"

#include "durable_file.h"
#include "run_id.h"

#include <dirent.h>
#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace nerve {

namespace {
constexpr const char* kRecordFile = "lifecycle.json";
constexpr const char* kReceiptFile = "receipt.json";
}  // namespace

RunStore::RunStore(std::string runs_dir) : path_(std::move(runs_dir)) {
  while (path_.size() > 1 && path_.back() == '/') path_.pop_back();
  struct stat before {};
  bool existed = ::stat(path_.c_str(), &before) == 0;
  dir_ = open_dir_path(path_, true);
  // The mode is set only on a folder nerved made: --runs-dir may point (through a symlink too) at a
  // folder that is not nerved's to change (issue 8, item 13). One of another user is refused.
  struct stat st {};
  if (::fstat(dir_.get(), &st) < 0) throw FsError("cannot stat folder", path_, errno);
  if (st.st_uid != ::geteuid()) throw FsError("refusing a runs folder owned by uid " + std::to_string(st.st_uid) + ":", path_, EPERM);
  if (!existed) ::fchmod(dir_.get(), 0700);
  else if (st.st_mode & 077) spdlog::warn("runs folder {} is accessible to others (mode {:o}); nerved leaves its mode alone", path_, st.st_mode & 07777);
}

Fd RunStore::open_run(const std::string& run, bool create) const {
  // Callers check run ids; this is the last line of defence against a name that leaves the folder.
  if (run_id_problem(run)) throw FsError("refusing run folder name", run, EINVAL);
  return open_dir_at(dir_.get(), run, create, run_path(run));
}

std::optional<std::string> RunStore::read(const std::string& run, const char* file) const {
  Fd dir;
  try {
    dir = open_run(run, false);
  } catch (const FsError& e) {
    if (e.err() == ENOENT) return std::nullopt;
    throw;
  }
  return read_file_at(dir.get(), file, run_path(run) + "/" + file);
}

std::optional<Record> RunStore::load(const std::string& run) const {
  auto text = read(run, kRecordFile);
  if (!text) return std::nullopt;
  Record r = parse_record(*text);
  if (r.run != run) throw RecordCorrupt("lifecycle.json names run '" + r.run + "', not its folder");
  return r;
}

std::optional<Receipt> RunStore::load_receipt(const std::string& run) const {
  auto text = read(run, kReceiptFile);
  if (!text) return std::nullopt;
  return parse_receipt(*text);
}

void RunStore::save(const Record& record) const {
  Fd dir = open_run(record.run, true);
  try {
    write_file_atomic(dir.get(), kRecordFile, to_json_text(record), run_path(record.run) + "/" + kRecordFile);
  } catch (const FsError&) {
    ::unlinkat(dir_.get(), record.run.c_str(), AT_REMOVEDIR);  // only if it is empty: a folder we just made
    throw;
  }
  notify(record.run);
}

void RunStore::save_receipt(const Receipt& receipt) const {
  Fd dir = open_run(receipt.run, true);
  write_file_atomic(dir.get(), kReceiptFile, to_json_text(receipt),
                    run_path(receipt.run) + "/" + kReceiptFile);
  notify(receipt.run);
}

std::string RunStore::quarantine(const std::string& run) const {
  Fd dir = open_run(run, false);
  Fd q = open_dir_at(dir_.get(), ".quarantine", true, path_ + "/.quarantine");
  std::string stamp = now_rfc3339();
  std::string base = run + "." + stamp;
  std::string target = base + ".lifecycle.json";
  if (::renameat(dir.get(), kRecordFile, q.get(), target.c_str()) < 0 && errno != ENOENT)
    throw FsError("cannot move aside", run_path(run) + "/" + kRecordFile, errno);
  if (::renameat(dir.get(), kReceiptFile, q.get(), (base + ".receipt.json").c_str()) < 0 && errno != ENOENT)
    throw FsError("cannot move aside", run_path(run) + "/" + kReceiptFile, errno);
  ::fsync(q.get());
  ::fsync(dir.get());
  notify(run);
  return path_ + "/.quarantine/" + target;
}

void RunStore::remove(const std::string& run) const {
  {
    Fd dir = open_run(run, false);
    remove_file_at(dir.get(), kReceiptFile, run_path(run) + "/" + kReceiptFile);
    remove_file_at(dir.get(), kRecordFile, run_path(run) + "/" + kRecordFile);
  }
  if (::unlinkat(dir_.get(), run.c_str(), AT_REMOVEDIR) < 0 && errno != ENOENT)
    throw FsError("cannot remove folder", run_path(run), errno);
  ::fsync(dir_.get());
  notify(run);
}

std::vector<std::string> RunStore::runs(std::vector<std::string>* skipped) const {
  std::vector<std::string> out;
  int fd = ::openat(dir_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw FsError("cannot open folder", path_, errno);
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    throw FsError("cannot read folder", path_, errno);
  }
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name == ".quarantine") continue;  // ours
    struct stat st {};
    if (::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
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
