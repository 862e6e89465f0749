// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/cgroup_tree.h"

#include "base/fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <system_error>

namespace nerve {

namespace {
Error io_error(const std::string& what, const std::string& path, int err) {
  return Error{cgroup_tree_error::Io, "cannot " + what + " " + path + ": " + std::error_code(err, std::generic_category()).message()};
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}
}  // namespace

Result<void> make_folder(const std::string& path, bool* existed) {
  if (existed) *existed = false;
  if (::mkdir(path.c_str(), 0755) == 0) return {};
  if (errno == EEXIST) {
    if (existed) *existed = true;
    return {};
  }
  return io_error("make the cgroup", path, errno);
}

Result<void> remove_tree(const std::string& path) {
  for (const auto& sub : subfolders(path))
    if (auto r = remove_tree(path + "/" + sub); !r) return r;
  if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return {};
  return io_error("remove the cgroup", path, errno);
}

Result<void> write_control(const std::string& path, const std::string& text) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return io_error("open", path, errno);
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return io_error("write " + std::string(text.size() > 40 ? "to" : "'" + text + "' to"), path, errno);
  return {};
}

Result<std::string> read_control(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return io_error("open", path, errno);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) return io_error("read", path, errno);
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::vector<std::string> subfolders(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = ::opendir(path.c_str());
  if (!d) return out;
  while (auto* e = ::readdir(d))
    if (e->d_type == DT_DIR && e->d_name[0] != '.') out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

std::string enable_controllers(const std::string& path, std::string* refused) {
  auto offered = read_control(path + "/cgroup.controllers");
  if (!offered) {
    if (refused) *refused = offered.error().message;
    return "";
  }
  auto names = words(*offered);
  std::string all;
  for (const auto& c : names) all += (all.empty() ? "+" : " +") + c;
  if (!names.empty() && !write_control(path + "/cgroup.subtree_control", all))
    for (const auto& c : names)
      if (auto r = write_control(path + "/cgroup.subtree_control", "+" + c); !r && refused)
        *refused += (refused->empty() ? "" : "; ") + c + ": " + r.error().message;
  std::string now;
  for (const auto& c : enabled_controllers(path)) now += (now.empty() ? "" : " ") + c;
  return now;
}

std::vector<std::string> enabled_controllers(const std::string& path) {
  auto text = read_control(path + "/cgroup.subtree_control");
  return text ? words(*text) : std::vector<std::string>{};
}

}  // namespace nerve
