#include "cgroup_watch.h"

#include <sys/epoll.h>
#include <sys/inotify.h>

#include <cerrno>
#include <system_error>
#include <vector>

namespace nerve {

CgroupWatcher::CgroupWatcher(EventLoop& loop)
    : loop_(loop), inotify_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
  if (!inotify_) throw std::system_error(errno, std::generic_category(), "inotify_init1");
  loop_.watch_fd(inotify_.get(), EPOLLIN, [this](std::uint32_t) { on_ready(); });
}

CgroupWatcher::~CgroupWatcher() { loop_.unwatch_fd(inotify_.get()); }

int CgroupWatcher::watch(const std::string& cgroup_dir, std::function<void()> changed) {
  std::string file = cgroup_dir + "/cgroup.events";
  int wd = ::inotify_add_watch(inotify_.get(), file.c_str(), IN_MODIFY | IN_DELETE_SELF);
  if (wd < 0) return -1;
  watches_[wd] = std::move(changed);
  return wd;
}

void CgroupWatcher::unwatch(int handle) {
  if (handle < 0) return;
  if (watches_.erase(handle)) ::inotify_rm_watch(inotify_.get(), handle);
}

void CgroupWatcher::on_ready() {
  alignas(inotify_event) char buf[4096];
  std::vector<int> fired;
  for (;;) {
    ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      fired.push_back(ev->wd);
      if (ev->mask & IN_IGNORED) fired.push_back(-ev->wd - 1);  // mark: the kernel dropped it
      p += sizeof(inotify_event) + ev->len;
    }
  }
  for (int wd : fired) {
    if (wd < 0) {
      // The watch is gone with its folder; call once more so the owner sees the removal.
      int real = -wd - 1;
      auto it = watches_.find(real);
      if (it == watches_.end()) continue;
      auto fn = std::move(it->second);
      watches_.erase(it);
      fn();
      continue;
    }
    auto it = watches_.find(wd);
    if (it == watches_.end()) continue;
    auto fn = it->second;  // the callback may unwatch itself
    fn();
  }
}

}  // namespace nerve
