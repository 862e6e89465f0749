// SPDX-License-Identifier: LGPL-2.1-or-later
// Durations, sizes and shares as every input gives them (base/duration.h parse_duration, base/size.h
// parse_size and parse_permyriad: the command lines, nerved.conf, the unit properties): any text
// parses or is InvalidArgument, and the checked arithmetic holds exactly, never a wrapped or rounded
// number. "Nus" and "NB" (digits only) are N, or refused when N is beyond the type; a bare N is N
// seconds (or milliseconds, the other default unit callers use) unless that overflows; "N%" is N * 100
// permyriad up to kMaxPermyriad; and a duration that parses reads back from format_duration as itself.
#include "base/duration.h"
#include "base/errors.h"
#include "base/size.h"
#include "fuzz_check.h"

#include <charconv>
#include <optional>

using namespace nerve;
using nerve::fuzz::require;

namespace {
// The number N of TEXT "N<suffix>", digits only before the suffix: nullopt when TEXT is not of that
// form, and 'too_large' set when N is beyond 64 bits.
std::optional<std::uint64_t> plain_count(std::string_view text, std::string_view suffix, bool& too_large) {
  too_large = false;
  if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) return std::nullopt;
  auto digits = text.substr(0, text.size() - suffix.size());
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (end != digits.data() + digits.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) too_large = true;
  else if (ec != std::errc()) return std::nullopt;
  return n;
}

template <typename T>
void require_invalid_argument(const Result<T>& r, const char* what, std::string_view text) {
  if (!r) require(r.error().name == std::string(error::InvalidArgument), what, text);
}

void check_duration(std::string_view text) {
  auto seconds = parse_duration(text);
  auto msec = parse_duration(text, kUsecPerMsec);
  require_invalid_argument(seconds, "a bad duration is InvalidArgument", text);
  require_invalid_argument(msec, "a bad duration (ms) is InvalidArgument", text);
  bool too_large = false;
  if (auto n = plain_count(text, "us", too_large)) {
    bool fits = !too_large && *n != Duration::kInfinityUsec;
    require(static_cast<bool>(seconds) == fits, "Nus parses exactly when N is below infinity", text);
    if (seconds) require(seconds->usec() == *n, "Nus is N microseconds", text);
  }
  if (auto n = plain_count(text, "", too_large); n && !too_large) {
    std::uint64_t usec = 0;
    bool fits = !__builtin_mul_overflow(*n, kUsecPerSec, &usec) && usec != Duration::kInfinityUsec;
    require(static_cast<bool>(seconds) == fits, "a bare N parses exactly when N seconds fit", text);
    if (seconds) require(seconds->usec() == usec, "a bare N is N seconds", text);
    if (msec && !__builtin_mul_overflow(*n, kUsecPerMsec, &usec)) require(msec->usec() == usec, "a bare N is N ms", text);
  }
  if (seconds && !seconds->is_infinity()) {
    std::string formatted = format_duration(*seconds);
    auto again = parse_duration(formatted);
    require(again && *again == *seconds, "a duration reads back from format_duration", formatted);
  }
}

void check_size(std::string_view text) {
  auto size = parse_size(text);
  require_invalid_argument(size, "a bad size is InvalidArgument", text);
  bool too_large = false;
  for (std::string_view suffix : {"B", ""}) {
    auto n = plain_count(text, suffix, too_large);
    if (!n) continue;
    require(static_cast<bool>(size) == !too_large, "NB and a bare N parse exactly when N fits", text);
    if (size) require(size->bytes() == *n, "NB and a bare N are N bytes", text);
  }
}

void check_share(std::string_view text) {
  auto share = parse_permyriad(text);
  require_invalid_argument(share, "a bad share is InvalidArgument", text);
  if (share) require(*share <= kMaxPermyriad, "a share is at most kMaxPermyriad", text);
  bool too_large = false;
  if (auto n = plain_count(text, "%", too_large)) {
    bool fits = !too_large && *n <= kMaxPermyriad / 100;
    require(static_cast<bool>(share) == fits, "N% parses exactly when N * 100 is at most kMaxPermyriad", text);
    if (share) require(*share == *n * 100, "N% is N * 100 permyriad", text);
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = fuzz::text_of(data, size);
  check_duration(text);
  check_size(text);
  check_share(text);
  return 0;
}
