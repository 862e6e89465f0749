// SPDX-License-Identifier: LGPL-2.1-or-later
// A record packed for keeping in memory: every record nerved holds is kept as one short
// byte string instead of a Record with a dozen heap strings, so 10,000 finished runs cost about
// 150 bytes each. Strings that many records share (boot id, slice, the cgroup's folder) are kept
// once in a StringPool; the unit is left out when it is the one its run and nonce name, and the
// cgroup's last part when it is the unit. unpack(pack(r)) == r for every record.
#pragma once

#include "record/record.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nerve {

// Strings kept once, named by their index; never shrinks (its strings are few: boot ids, slices,
// cgroup folders).
class StringPool {
 public:
  std::uint32_t index(const std::string& s);
  const std::string& at(std::uint32_t i) const { return strings_.at(i); }
  std::size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

std::string pack(const Record& record, StringPool& pool);
// The record 'pack' was given; 'run' is its id (not packed: the store's key). Throws RecordCorrupt
// on bytes that pack did not make.
Record unpack(std::string_view packed, const std::string& run, const StringPool& pool);

}  // namespace nerve
