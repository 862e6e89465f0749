// SPDX-License-Identifier: LGPL-2.1-or-later
#include "record/record_pack.h"

#include "base/run_id.h"

namespace nerve {

std::uint32_t StringPool::index(const std::string& s) {
  auto [it, added] = index_.try_emplace(s, static_cast<std::uint32_t>(strings_.size()));
  if (added) strings_.push_back(s);
  return it->second;
}

namespace {

enum Flags : std::uint8_t {
  kUnitDerived = 1,
  kCgroupEndsInUnit = 2,
  kKeep = 4,
  kReapOnExit = 8,
  kLeafOfCgroup = 16,
  kUnreleased = 32,
  kCgroupBackend = 64,
};

class Writer {
 public:
  void num(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  void str(std::string_view s) {
    num(s.size());
    out_.append(s);
  }
  std::string done() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  std::uint64_t num() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) throw RecordCorrupt("packed record ends early");
      auto b = static_cast<unsigned char>(in_.front());
      in_.remove_prefix(1);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw RecordCorrupt("packed record: number too long");
  }
  std::string str() {
    auto n = num();
    if (n > in_.size()) throw RecordCorrupt("packed record ends early");
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }

 private:
  std::string_view in_;
};

std::uint64_t zigzag(std::int64_t v) { return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63); }
std::int64_t unzigzag(std::uint64_t v) { return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1); }

bool ends_in_unit(const Record& r) {
  return !r.unit.empty() && r.cgroup.size() > r.unit.size() &&
         r.cgroup.compare(r.cgroup.size() - r.unit.size(), r.unit.size(), r.unit) == 0 &&
         r.cgroup[r.cgroup.size() - r.unit.size() - 1] == '/';
}

}  // namespace

std::string pack(const Record& r, StringPool& pool) {
  std::uint8_t flags = 0;
  bool derived = !r.unit.empty() && r.unit == scope_unit_name(r.run, r.nonce);
  bool suffix = ends_in_unit(r);
  if (derived) flags |= kUnitDerived;
  if (suffix) flags |= kCgroupEndsInUnit;
  if (r.keep) flags |= kKeep;
  if (r.reap_on_exit) flags |= kReapOnExit;
  bool leaf_of_cgroup = !r.leaf.empty() && r.leaf == leaf_of(r.cgroup);
  if (leaf_of_cgroup) flags |= kLeafOfCgroup;
  if (!r.released) flags |= kUnreleased;
  if (r.backend == BackendKind::Cgroup) flags |= kCgroupBackend;
  Writer w;
  w.num(flags);
  w.num(zigzag(r.version));
  w.num(r.attempt);
  w.num(static_cast<std::uint64_t>(r.state));
  w.num(static_cast<std::uint64_t>(r.owner.kind));
  w.num(r.cgroup_id);
  w.num(zigzag(r.leader_pid));
  w.num(r.grace_usec);
  w.num(zigzag(r.owner.pid));
  w.num(r.owner.start_time);
  w.num(r.timeout_usec);
  w.num(r.leader_start_time);
  w.num(pool.index(r.boot_id));
  w.num(pool.index(r.slice));
  w.num(pool.index(suffix ? r.cgroup.substr(0, r.cgroup.size() - r.unit.size() - 1) : r.cgroup));
  w.str(derived ? std::string_view() : std::string_view(r.unit));
  w.str(r.nonce);
  w.str(r.invocation_id);
  w.str(r.owner.name);
  w.str(r.parent);
  w.str(r.created_at);
  w.str(r.updated_at);
  w.num(r.properties.size());
  for (const auto& p : r.properties) w.str(p);
  w.num(r.leaf_id);
  w.str(leaf_of_cgroup ? std::string_view() : std::string_view(r.leaf));
  return w.done();
}

Record unpack(std::string_view packed, const std::string& run, const StringPool& pool) {
  Reader in(packed);
  Record r;
  r.run = run;
  auto flags = in.num();
  r.version = static_cast<int>(unzigzag(in.num()));
  r.attempt = static_cast<unsigned>(in.num());
  r.state = static_cast<RunState>(in.num());
  r.owner.kind = static_cast<OwnerKind>(in.num());
  r.cgroup_id = in.num();
  r.leader_pid = static_cast<int>(unzigzag(in.num()));
  r.grace_usec = in.num();
  r.owner.pid = static_cast<int>(unzigzag(in.num()));
  r.owner.start_time = in.num();
  r.timeout_usec = in.num();
  r.leader_start_time = in.num();
  r.boot_id = pool.at(static_cast<std::uint32_t>(in.num()));
  r.slice = pool.at(static_cast<std::uint32_t>(in.num()));
  r.cgroup = pool.at(static_cast<std::uint32_t>(in.num()));
  r.unit = in.str();
  r.nonce = in.str();
  if (flags & kUnitDerived) r.unit = scope_unit_name(run, r.nonce);
  if (flags & kCgroupEndsInUnit) r.cgroup += "/" + r.unit;
  r.keep = flags & kKeep;
  r.reap_on_exit = flags & kReapOnExit;
  r.released = !(flags & kUnreleased);
  r.backend = flags & kCgroupBackend ? BackendKind::Cgroup : BackendKind::Systemd;
  r.invocation_id = in.str();
  r.owner.name = in.str();
  r.parent = in.str();
  r.created_at = in.str();
  r.updated_at = in.str();
  auto n = in.num();
  for (std::uint64_t i = 0; i < n; ++i) r.properties.push_back(in.str());
  r.leaf_id = in.num();
  r.leaf = in.str();
  if (flags & kLeafOfCgroup) r.leaf = leaf_of(r.cgroup);
  return r;
}

}  // namespace nerve
