// SPDX-License-Identifier: LGPL-2.1-or-later
#include "system/cgroup_limits.h"

#include "base/duration.h"
#include "base/errors.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <fstream>

namespace nerve {

namespace {

constexpr std::uint64_t kPage = 4096;
// systemd's default CPUQuotaPeriodUSec: 100 ms, so cpu.max's quota is the per-second quota / 10.
constexpr std::uint64_t kQuotaPeriodUsec = 100'000;
constexpr std::uint64_t kMinQuotaUsec = 1'000;  // the kernel refuses a quota under 1 ms

std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t n = 0;
  in >> n;
  return in ? n : 0;
}

std::string limit_text(std::uint64_t v) { return v == kInfinity ? "max" : std::to_string(v); }

// v * scale / UINT32_MAX without overflow (scale <= UINT32_MAX, so the result is <= v).
std::uint64_t scaled(std::uint64_t v, std::uint32_t scale) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(v) * scale / UINT32_MAX);
}

Error cannot_apply(const std::string& key, const std::string& why) {
  return Error{error::InvalidProperty, "property " + quote_value(key) + " cannot be applied by the cgroup backend: " + why};
}

}  // namespace

HostLimits read_host_limits() {
  HostLimits h;
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) h.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(size);
  std::uint64_t pid_max = read_number("/proc/sys/kernel/pid_max");
  std::uint64_t threads_max = read_number("/proc/sys/kernel/threads-max");
  h.tasks = pid_max && threads_max ? std::min(pid_max, threads_max) : (pid_max ? pid_max : threads_max);
  return h;
}

std::string property_key(const std::string& bus_name) {
  if (bus_name == "CPUQuotaPerSecUSec") return "CPUQuota";
  if (bus_name == "RuntimeMaxUSec") return "RuntimeMaxSec";
  if (bus_name.ends_with("Scale")) return bus_name.substr(0, bus_name.size() - 5);
  return bus_name;
}

std::string cpu_list(const std::vector<std::uint8_t>& mask) {
  std::string out;
  auto bit = [&mask](unsigned c) { return c / 8 < mask.size() && (mask[c / 8] >> (c % 8)) & 1u; };
  const unsigned n = static_cast<unsigned>(mask.size() * 8);
  for (unsigned c = 0; c < n; ++c) {
    if (!bit(c)) continue;
    unsigned last = c;
    while (last + 1 < n && bit(last + 1)) ++last;
    out += (out.empty() ? "" : ",") + std::to_string(c) + (last > c ? "-" + std::to_string(last) : "");
    c = last;
  }
  return out;
}

const std::vector<std::string>& limit_files() {
  static const std::vector<std::string> files = {"memory.max", "memory.high", "memory.swap.max", "pids.max",
                                                 "cpu.max",    "cpu.weight",  "io.weight",       "cpuset.cpus"};
  return files;
}

namespace {
std::optional<std::uint64_t> number_in(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text == "max") return kInfinity;
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return n;
}

// "0-3,6" as AllowedCPUs' bitmask; nullopt when it does not parse.
std::optional<std::vector<std::uint8_t>> cpu_mask(std::string_view text) {
  auto p = parse_unit_property("AllowedCPUs=" + std::string(text.substr(0, text.find('\n'))));
  if (!p) return std::nullopt;
  return std::get<std::vector<std::uint8_t>>(p->value);
}
}  // namespace

std::map<std::string, PropertyValue> limits_from_files(const std::map<std::string, std::string>& files) {
  std::map<std::string, PropertyValue> out;
  auto text = [&files](const char* file) -> std::optional<std::string_view> {
    auto it = files.find(file);
    if (it == files.end()) return std::nullopt;
    return std::string_view(it->second);
  };
  for (auto [file, name] : {std::pair{"memory.max", "MemoryMax"}, {"memory.high", "MemoryHigh"},
                            {"memory.swap.max", "MemorySwapMax"}, {"pids.max", "TasksMax"}, {"cpu.weight", "CPUWeight"}})
    if (auto t = text(file))
      if (auto n = number_in(*t)) out[name] = *n;
  if (auto t = text("io.weight"); t && t->starts_with("default "))
    if (auto n = number_in(t->substr(8, t->find('\n') == std::string_view::npos ? std::string_view::npos : t->find('\n') - 8)))
      out["IOWeight"] = *n;
  if (auto t = text("cpu.max")) {
    auto space = t->find(' ');
    auto quota = number_in(t->substr(0, space));
    auto period = space == std::string_view::npos ? std::nullopt : number_in(t->substr(space + 1));
    if (quota && period && *period)
      out["CPUQuotaPerSecUSec"] = *quota == kInfinity ? kInfinity
                                                       : static_cast<std::uint64_t>(static_cast<unsigned __int128>(*quota) *
                                                                                    kUsecPerSec / *period);
  }
  if (auto t = text("cpuset.cpus"); t && !t->empty() && t->front() != '\n')
    if (auto mask = cpu_mask(*t)) out["AllowedCPUs"] = *mask;
  return out;
}

Result<CgroupWrite> cgroup_write_for(const UnitProperty& p, const HostLimits& host) {
  const std::string key = property_key(p.name);
  const auto* number = std::get_if<std::uint64_t>(&p.value);
  const auto* scale = std::get_if<std::uint32_t>(&p.value);
  auto write = [&key](const char* controller, const char* file, std::string text) -> Result<CgroupWrite> {
    return CgroupWrite{controller, file, std::move(text), key};
  };
  auto memory = [&](const char* file) -> Result<CgroupWrite> {
    if (number) return write("memory", file, limit_text(*number));
    if (!scale) return cannot_apply(key, "unexpected value type");
    if (!host.memory_bytes) return cannot_apply(key, "the machine's memory size cannot be read");
    return write("memory", file, std::to_string(scaled(host.memory_bytes / kPage, *scale) * kPage));
  };
  if (p.name == "MemoryMax" || p.name == "MemoryMaxScale") return memory("memory.max");
  if (p.name == "MemoryHigh" || p.name == "MemoryHighScale") return memory("memory.high");
  if (p.name == "MemorySwapMax" || p.name == "MemorySwapMaxScale") return memory("memory.swap.max");
  if (p.name == "TasksMax" && number) return write("pids", "pids.max", limit_text(*number));
  if (p.name == "TasksMaxScale" && scale) {
    if (!host.tasks) return cannot_apply(key, "the kernel's pid limit cannot be read");
    return write("pids", "pids.max", std::to_string(std::max<std::uint64_t>(scaled(host.tasks, *scale), 1)));
  }
  if (p.name == "CPUQuotaPerSecUSec" && number) {
    if (*number == kInfinity) return write("cpu", "cpu.max", "max " + std::to_string(kQuotaPeriodUsec));
    std::uint64_t quota = std::max(*number / (kUsecPerSec / kQuotaPeriodUsec), kMinQuotaUsec);
    return write("cpu", "cpu.max", std::to_string(quota) + " " + std::to_string(kQuotaPeriodUsec));
  }
  if (p.name == "CPUWeight" && number) return write("cpu", "cpu.weight", std::to_string(*number == kInfinity ? 100 : *number));
  if (p.name == "IOWeight" && number)
    return write("io", "io.weight", "default " + std::to_string(*number == kInfinity ? 100 : *number));
  if (p.name == "AllowedCPUs") {
    const auto* mask = std::get_if<std::vector<std::uint8_t>>(&p.value);
    if (!mask) return cannot_apply(key, "unexpected value type");
    return write("cpuset", "cpuset.cpus", cpu_list(*mask));
  }
  if (p.name == "RuntimeMaxUSec")
    return cannot_apply(key, "a run's time limit is its timeout (--timeout), and a slice has none here");
  return cannot_apply(key, "no cgroup file stands for it");
}

}  // namespace nerve
