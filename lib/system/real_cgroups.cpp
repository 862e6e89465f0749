// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/real_cgroups.h"

#include "base/durable_file.h"
#include "base/host.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <system_error>
#include <vector>

namespace nerve {

namespace {
std::string join(const std::string& root, const std::string& path) {
  if (path.empty() || path == "/") return root;
  return root + (path.front() == '/' ? "" : "/") + path;
}

// Appends the pids of cgroup.procs of 'dirfd' and of every folder below it. *complete turns false
// when some part could not be read for another reason than its removal (a removed cgroup held none).
void collect_pids(int dirfd, const std::string& shown, std::vector<pid_t>& out, int depth, bool* complete) {
  if (depth > 64) return void(*complete = false);
  try {
    if (auto procs = read_file_at(dirfd, "cgroup.procs", shown + "/cgroup.procs")) {
      std::istringstream in(*procs);
      pid_t p;
      while (in >> p) out.push_back(p);
    }
  } catch (const FsError& e) {
    if (e.err() != ENODEV && e.err() != ENOENT) *complete = false;
    return;  // removed while we read it
  }
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return void(*complete = false);
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return void(*complete = false);
  }
  errno = 0;
  while (auto* e = ::readdir(d)) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    int sub = ::openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
      if (errno != ENOENT) *complete = false;
      errno = 0;
      continue;
    }
    Fd owned(sub);
    collect_pids(sub, shown + "/" + e->d_name, out, depth + 1, complete);
    errno = 0;
  }
  if (errno != 0 && errno != ENOENT && errno != ENODEV) *complete = false;
  ::closedir(d);
}

// A cgroup folder opened once and then used only through its fd.
class CgroupDir {
 public:
  // Opens root + path. nullopt if the folder does not exist; throws FsError on other errors.
  static std::optional<CgroupDir> open(const std::string& root, const std::string& path) {
    std::string full = join(root, path);
    int fd = ::open(full.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;
      throw FsError("cannot open cgroup", full, errno);
    }
    Fd owned(fd);
    struct stat st {};
    if (::fstat(fd, &st) < 0) throw FsError("cannot stat cgroup", full, errno);
    return CgroupDir(std::move(owned), st.st_ino, full);
  }

  std::uint64_t id() const { return id_; }
  int fd() const { return fd_.get(); }

  // A folder removed meanwhile reads as not populated (a cgroup folder can only be removed when empty).
  bool populated() const { return event_is_one("populated"); }
  bool frozen() const { return event_is_one("frozen"); }

 private:
  bool event_is_one(const std::string& wanted) const {
    std::optional<std::string> text;
    try {
      text = read_file_at(fd_.get(), "cgroup.events", shown_ + "/cgroup.events");
    } catch (const FsError& e) {
      if (e.err() == ENODEV || e.err() == ENOENT) return false;  // removed: it was empty
      throw;
    }
    if (!text) return false;
    std::istringstream in(*text);
    std::string key, value;
    while (in >> key >> value)
      if (key == wanted) return value == "1";
    return false;
  }

 public:
  // The pids below; *complete (if given) false when some part could not be read.
  std::vector<pid_t> pids(bool* complete = nullptr) const {
    std::vector<pid_t> out;
    bool all = true;
    collect_pids(fd_.get(), shown_, out, 0, &all);
    if (complete) *complete = all;
    return out;
  }

  // Writes "1" to cgroup.kill: SIGKILL to every process below, atomically.
  bool kill() const { return write_one("cgroup.kill", "1"); }
  // Writes "0" to cgroup.freeze: the cgroup (and what is below it) is thawed.
  bool thaw() const { return write_one("cgroup.freeze", "0"); }
  Usage usage() const { return read_usage(fd_.get()); }

 private:
  bool write_one(const char* file, const char* value) const {
    int fd = ::openat(fd_.get(), file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    Fd owned(fd);
    return ::write(fd, value, 1) == 1;
  }

  CgroupDir(Fd fd, std::uint64_t id, std::string shown) : fd_(std::move(fd)), id_(id), shown_(std::move(shown)) {}
  Fd fd_;
  std::uint64_t id_ = 0;
  std::string shown_;  // the path, for error messages
};
}  // namespace

RealCgroups::RealCgroups(std::string root, EventLoop& loop)
    : root_(std::move(root)),
      loop_(loop),
      inotify_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)),
      primer_(MigrationPrimer::enabled() ? MigrationPrimer::open_own_procs(root_) : Fd()) {
  if (!inotify_) throw std::system_error(errno, std::generic_category(), "inotify_init1");
  loop_.watch_fd(inotify_.get(), EPOLLIN, [this](std::uint32_t) { on_inotify(); });
}

RealCgroups::~RealCgroups() { loop_.unwatch_fd(inotify_.get()); }

std::optional<std::uint64_t> RealCgroups::id(const std::string& cgroup) {
  struct stat st {};
  if (::stat(join(root_, cgroup).c_str(), &st) < 0) return std::nullopt;
  return st.st_ino;
}

Result<bool> RealCgroups::populated(const std::string& cgroup) {
  try {
    auto dir = CgroupDir::open(root_, cgroup);
    return dir && dir->populated();
  } catch (const FsError& e) {
    return Error{"nerve.Cgroup.Unreadable", e.what()};
  }
}

std::vector<pid_t> RealCgroups::pids(const std::string& cgroup) {
  try {
    auto dir = CgroupDir::open(root_, cgroup);
    return dir ? dir->pids() : std::vector<pid_t>{};
  } catch (const FsError&) {
    return {};
  }
}

Result<std::vector<pid_t>> RealCgroups::live_pids(const std::string& cgroup) {
  try {
    auto dir = CgroupDir::open(root_, cgroup);
    if (!dir) return std::vector<pid_t>{};
    bool complete = true;
    auto out = dir->pids(&complete);
    if (!complete) return Error{"nerve.Cgroup.Unreadable", "cannot read every cgroup.procs below " + join(root_, cgroup)};
    return out;
  } catch (const FsError& e) {
    return Error{"nerve.Cgroup.Unreadable", e.what()};
  }
}

namespace {
// Runs 'fn' on the folder of 'cgroup' once its id is checked to be 'expected_id'; nullopt if gone,
// replaced or unreadable.
template <typename Fn>
auto with_checked_dir(const std::string& root, const std::string& cgroup, std::uint64_t expected_id, Fn fn)
    -> std::optional<decltype(fn(std::declval<const CgroupDir&>()))> {
  try {
    auto dir = CgroupDir::open(root, cgroup);
    if (!dir || expected_id == 0 || dir->id() != expected_id) return std::nullopt;
    return fn(*dir);
  } catch (const FsError&) {
    return std::nullopt;
  }
}
}  // namespace

bool RealCgroups::kill_if(const std::string& cgroup, std::uint64_t expected_id) {
  return with_checked_dir(root_, cgroup, expected_id, [](const CgroupDir& d) { return d.kill(); }).value_or(false);
}

bool RealCgroups::thaw_if(const std::string& cgroup, std::uint64_t expected_id) {
  return with_checked_dir(root_, cgroup, expected_id, [](const CgroupDir& d) { return d.thaw(); }).value_or(false);
}

bool RealCgroups::frozen(const std::string& cgroup) {
  try {
    auto dir = CgroupDir::open(root_, cgroup);
    return dir && dir->frozen();
  } catch (const FsError&) {
    return false;
  }
}

std::optional<Usage> RealCgroups::usage(const std::string& cgroup, std::uint64_t expected_id) {
  return with_checked_dir(root_, cgroup, expected_id, [](const CgroupDir& d) { return d.usage(); });
}

int RealCgroups::watch(const std::string& cgroup, std::function<void()> changed) {
  std::string file = join(root_, cgroup) + "/cgroup.events";
  // inotify gives the same watch descriptor to every watch of one file: the handles share it.
  int wd = ::inotify_add_watch(inotify_.get(), file.c_str(), IN_MODIFY | IN_DELETE_SELF);
  if (wd < 0) return -1;
  int handle = next_handle_++;
  watches_[handle] = {wd, std::move(changed)};
  by_wd_[wd].push_back(handle);
  return handle;
}

void RealCgroups::unwatch(int handle) {
  auto it = watches_.find(handle);
  if (handle < 0 || it == watches_.end()) return;
  int wd = it->second.wd;
  watches_.erase(it);
  auto& handles = by_wd_[wd];
  std::erase(handles, handle);
  if (!handles.empty()) return;
  by_wd_.erase(wd);
  ::inotify_rm_watch(inotify_.get(), wd);
}

namespace {
Error leaves_failed(const std::string& cgroup, const std::string& step, int err) {
  return Error{"nerve.Cgroup.LeavesFailed",
               "cannot " + step + " in cgroup " + cgroup + ": " + std::error_code(err, std::generic_category()).message()};
}

bool write_text_at(int dirfd, const std::string& file, const std::string& text) {
  int fd = ::openat(dirfd, file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Fd owned(fd);
  return ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// Enables for the leaves every controller the scope offers: all at once, else one by one (a controller
// the kernel refuses to enable must not keep the others out).
void enable_controllers(const CgroupDir& scope, const std::string& shown, Leaves& out) {
  std::optional<std::string> offered;
  try {
    offered = read_file_at(scope.fd(), "cgroup.controllers", shown + "/cgroup.controllers");
  } catch (const FsError& e) {
    out.controllers_error = e.what();
    return;
  }
  std::istringstream in(offered.value_or(""));
  std::vector<std::string> names;
  std::string all;
  for (std::string c; in >> c;) names.push_back(c), all += (all.empty() ? "+" : " +") + c;
  if (names.empty()) return;
  if (write_text_at(scope.fd(), "cgroup.subtree_control", all)) {
    for (const auto& c : names) out.controllers += (out.controllers.empty() ? "" : " ") + c;
    return;
  }
  for (const auto& c : names) {
    if (write_text_at(scope.fd(), "cgroup.subtree_control", "+" + c))
      out.controllers += (out.controllers.empty() ? "" : " ") + c;
    else
      out.controllers_error += (out.controllers_error.empty() ? "not enabled: " : ", ") + c + " (" +
                               std::error_code(errno, std::generic_category()).message() + ")";
  }
}
}  // namespace

Result<Leaves> RealCgroups::make_leaves(const std::string& cgroup, std::uint64_t expected_id, pid_t pid, pid_t holder) {
  std::optional<CgroupDir> scope;
  try {
    scope = CgroupDir::open(root_, cgroup);
  } catch (const FsError& e) {
    return Error{"nerve.Cgroup.LeavesFailed", e.what()};
  }
  if (!scope || scope->id() != expected_id) return leaves_failed(cgroup, "find the scope's folder", ENOENT);
  for (const char* leaf : {kHoldLeaf, kRunLeaf})
    if (::mkdirat(scope->fd(), leaf, 0755) < 0 && errno != EEXIST) return leaves_failed(cgroup, std::string("make ") + leaf + "/", errno);
  if (!write_text_at(scope->fd(), std::string(kHoldLeaf) + "/cgroup.procs", std::to_string(holder)))
    return leaves_failed(cgroup, "move the holder " + std::to_string(holder) + " into hold/", errno);
  if (!write_text_at(scope->fd(), std::string(kRunLeaf) + "/cgroup.procs", std::to_string(pid)))
    return leaves_failed(cgroup, "move process " + std::to_string(pid) + " into run/", errno);
  struct stat st {};
  if (::fstatat(scope->fd(), kRunLeaf, &st, AT_SYMLINK_NOFOLLOW) < 0) return leaves_failed(cgroup, "stat run/", errno);
  Leaves out;
  out.run_id = st.st_ino;
  enable_controllers(*scope, join(root_, cgroup), out);
  return out;
}

std::optional<std::string> RealCgroups::member_of(pid_t pid) { return proc_cgroup(pid); }
std::optional<std::uint64_t> RealCgroups::start_time(pid_t pid) { return proc_start_time(pid); }

void RealCgroups::on_inotify() {
  alignas(inotify_event) char buf[4096];
  std::vector<std::pair<int, bool>> fired;  // wd, and whether the kernel dropped it (folder gone)
  for (;;) {
    ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      fired.emplace_back(ev->wd, (ev->mask & IN_IGNORED) != 0);
      p += sizeof(inotify_event) + ev->len;
    }
  }
  for (auto [wd, dropped] : fired) {
    auto it = by_wd_.find(wd);
    if (it == by_wd_.end()) continue;
    std::vector<int> handles = it->second;  // a callback may unwatch (or watch) meanwhile
    if (dropped) {
      // The watch is gone with its folder: each owner is called once more, to see the removal.
      by_wd_.erase(it);
      for (int h : handles) {
        auto w = watches_.find(h);
        if (w == watches_.end()) continue;
        auto fn = std::move(w->second.fn);
        watches_.erase(w);
        fn();
      }
      continue;
    }
    for (int h : handles) {
      auto w = watches_.find(h);
      if (w == watches_.end()) continue;
      auto fn = w->second.fn;  // the callback may unwatch itself
      fn();
    }
  }
}

}  // namespace nerve
