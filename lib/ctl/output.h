// SPDX-License-Identifier: LGPL-2.1-or-later
// How nervectl prints, following systemctl's conventions: JSON in a mode (--json=short|pretty),
// tables with columns as wide as their content, colour only on a terminal.
#pragma once

#include "ctl/ctl.h"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace nerve::ctl {

// J on stdout: one line (short), or indented by two spaces (pretty); then a newline.
void print_json(const nlohmann::json& j, JsonMode mode);

// Whether to colour what goes to OUT: never with NO_COLOR set or SYSTEMD_COLORS false ("0", "no",
// "false", "off"), always with SYSTEMD_COLORS true ("1", "yes", "true", "on", "16", "256", "24bit"),
// else only when OUT is a terminal and TERM is not "dumb".
bool colour_wanted(std::FILE* out);

enum class Colour { None, Green, Red, Yellow, Bold };

// TEXT wrapped in the ANSI sequence of C (TEXT as it is with Colour::None or ON false).
std::string paint(const std::string& text, Colour c, bool on);

struct Cell {
  std::string text;
  Colour colour = Colour::None;
};

// Rows in columns as wide as their widest cell (the header's included when it is given), one space
// between columns, nothing after the last one. Colour does not count for the width.
std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows,
                         bool colour);

// An age as systemctl shows one, in its largest unit: "42s", "5min", "3h", "12d".
std::string format_age(std::chrono::seconds age);

}  // namespace nerve::ctl
