// SPDX-License-Identifier: LGPL-2.1-or-later
// What the fuzz targets share: the input as text and lines, and the check that turns a broken
// promise of a parser into a crash (the one thing a fuzzer notices), with the input's text in the
// message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace nerve::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The text cut at each '\n' (no empty last line).
inline std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    auto end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return lines;
}

// Aborts, saying which promise was broken and for what, unless 'ok'.
inline void require(bool ok, const char* promise, std::string_view input) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: broken promise: %s\nfuzz: input: '%.*s'\n", promise, static_cast<int>(input.size()),
               input.data());
  std::abort();
}

}  // namespace nerve::fuzz
