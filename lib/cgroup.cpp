#include "cgroup.h"

#include "durable_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace nerve {

std::optional<std::string> cgroup_root() {
  if (const char* env = std::getenv("NERVE_CGROUP_ROOT"); env && *env) return std::string(env);
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::optional<std::string> found;
  while (std::getline(in, line)) {
    // "36 35 0:30 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw,..."
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    tail >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, dev, root, mount;
    head >> id >> parent >> dev >> root >> mount;
    if (mount == "/sys/fs/cgroup") return mount;
    if (!found) found = mount;
  }
  return found;
}

namespace {
std::string join(const std::string& root, const std::string& path) {
  if (path.empty() || path == "/") return root;
  return root + (path.front() == '/' ? "" : "/") + path;
}
}  // namespace

std::optional<CgroupDir> CgroupDir::open(const std::string& root, const std::string& path) {
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

bool CgroupDir::populated() const {
  std::optional<std::string> text;
  try {
    text = read_file_at(fd_.get(), "cgroup.events", full_path_ + "/cgroup.events");
  } catch (const FsError& e) {
    if (e.err() == ENODEV || e.err() == ENOENT) return false;  // removed: it was empty
    throw;
  }
  if (!text) return false;
  std::istringstream in(*text);
  std::string key, value;
  while (in >> key >> value)
    if (key == "populated") return value == "1";
  return false;
}

namespace {
void collect_pids(int dirfd, const std::string& shown, std::vector<pid_t>& out, int depth) {
  if (depth > 64) return;
  try {
    if (auto procs = read_file_at(dirfd, "cgroup.procs", shown + "/cgroup.procs")) {
      std::istringstream in(*procs);
      pid_t p;
      while (in >> p) out.push_back(p);
    }
  } catch (const FsError&) {
    return;  // removed while we read it
  }
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return;
  }
  while (auto* e = ::readdir(d)) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    int sub = ::openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;
    Fd owned(sub);
    collect_pids(sub, shown + "/" + e->d_name, out, depth + 1);
  }
  ::closedir(d);
}
}  // namespace

std::vector<pid_t> CgroupDir::pids() const {
  std::vector<pid_t> out;
  collect_pids(fd_.get(), full_path_, out, 0);
  return out;
}

bool CgroupDir::kill() const {
  int fd = ::openat(fd_.get(), "cgroup.kill", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  Fd owned(fd);
  return ::write(fd, "1", 1) == 1;
}

std::optional<std::uint64_t> cgroup_id_of(const std::string& root, const std::string& path) {
  struct stat st {};
  if (::stat(join(root, path).c_str(), &st) < 0) return std::nullopt;
  return st.st_ino;
}

}  // namespace nerve
