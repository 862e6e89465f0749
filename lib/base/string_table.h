// SPDX-License-Identifier: LGPL-2.1-or-later
// One table per enum: each value and its name in one row, and both directions looked up from those
// rows (after systemd's src/basic/string-table.h), so a new value is one line. An enum gets its table
// by declaring, next to the enum and in its namespace (argument-dependent lookup finds it):
//
//   constexpr auto string_table(RunState) {
//     return std::to_array<Named<RunState>>({
//         {RunState::Launching, "launching"},
//         {RunState::Running, "running"},
//     });
//   }
//
// Then name_of(value) / to_string(value) give its name and from_string<RunState>(name) its value
// (nullopt for a name without a row). The rows are checked when they are compiled: a value or a name
// twice does not build.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace nerve {

template <typename E>
struct Named {
  E value;
  std::string_view name;
};

// An enum with a string table (string_table(E) found by argument-dependent lookup).
template <typename E>
concept StringTabled = std::is_enum_v<E> && requires(E e) { string_table(e); };

// No empty name, no value and no name twice: what every table is checked for when it is compiled.
template <typename E, std::size_t N>
constexpr bool valid_rows(const std::array<Named<E>, N>& rows) {
  for (std::size_t i = 0; i < N; ++i) {
    if (rows[i].name.empty()) return false;
    for (std::size_t j = i + 1; j < N; ++j)
      if (rows[i].value == rows[j].value || rows[i].name == rows[j].name) return false;
  }
  return true;
}

namespace string_table_detail {

template <typename E, std::size_t N>
consteval std::array<Named<E>, N> checked(std::array<Named<E>, N> rows) {
  if (!valid_rows(rows)) throw "a string table has an empty name, or a value or a name twice";
  return rows;
}

template <StringTabled E>
inline constexpr auto kRows = checked(string_table(E{}));

}  // namespace string_table_detail

// The rows of E's table, in their order (to list every name, e.g. for a command line's choices).
template <StringTabled E>
constexpr const auto& string_table_rows() {
  return string_table_detail::kRows<E>;
}

// The name of 'value'; "unknown" for a value without a row (only a number cast to E can be one).
template <StringTabled E>
constexpr std::string_view name_of(E value) {
  for (const auto& row : string_table_detail::kRows<E>)
    if (row.value == value) return row.name;
  return "unknown";
}

template <StringTabled E>
std::string to_string(E value) {
  return std::string(name_of(value));
}

// The value named 'name' (exactly, case included); nullopt for a name without a row.
template <StringTabled E>
constexpr std::optional<E> from_string(std::string_view name) {
  for (const auto& row : string_table_detail::kRows<E>)
    if (row.name == name) return row.value;
  return std::nullopt;
}

}  // namespace nerve
