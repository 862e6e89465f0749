// SPDX-License-Identifier: LGPL-2.1-or-later
// Sizes and shares as systemd takes them for resource limits: a Size is bytes in a uint64 with
// UINT64_MAX meaning "infinity" (CGROUP_LIMIT_MAX: no limit); a share is a percentage held in
// permyriad (1/10000), as systemd's parse_permyriad. Both parsers use checked arithmetic: a value
// that does not fit is refused, never wrapped (CPUQuota=184467440738% is out of range, not 0.9%).
#pragma once

#include "base/result.h"

#include <compare>
#include <cstdint>
#include <limits>
#include <string_view>

namespace nerve {

class Size {
 public:
  static constexpr std::uint64_t kInfinityBytes = std::numeric_limits<std::uint64_t>::max();

  constexpr Size() = default;
  static constexpr Size from_bytes(std::uint64_t bytes) {
    Size s;
    s.bytes_ = bytes;
    return s;
  }
  static constexpr Size infinity() { return from_bytes(kInfinityBytes); }

  constexpr std::uint64_t bytes() const { return bytes_; }
  constexpr bool is_infinity() const { return bytes_ == kInfinityBytes; }
  friend constexpr auto operator<=>(Size, Size) = default;

 private:
  std::uint64_t bytes_ = 0;
};

// A size as systemd's parse_size with base 1024 (the syntax of `systemd-run -p MemoryMax=`): "512"
// (bytes), "4K", "1.5G", "1G 512M", with B K M G T P E; "infinity". Error InvalidArgument when it is
// not a size, negative, or above 2^64-1 bytes; the message says which, for a caller that quotes TEXT.
Result<Size> parse_size(std::string_view text);

// The largest share systemd takes (an int of permyriad): 21474836.47%.
inline constexpr std::uint64_t kMaxPermyriad = std::numeric_limits<std::int32_t>::max();

// "50%", "12.5%", "12.34%" (at most two decimals), "5‰" (one), "1‱" (none) as permyriad; 100% is
// 10000. Error InvalidArgument when it is not a percentage, negative, or above kMaxPermyriad.
Result<std::uint64_t> parse_permyriad(std::string_view text);

}  // namespace nerve
