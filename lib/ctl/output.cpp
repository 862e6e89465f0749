// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ctl/output.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <set>

namespace nerve::ctl {

void print_json(const nlohmann::json& j, JsonMode mode) {
  std::string text = mode == kJsonPretty ? j.dump(2) : j.dump();
  std::printf("%s\n", text.c_str());
}

bool colour_wanted(std::FILE* out) {
  if (const char* no = std::getenv("NO_COLOR"); no && *no) return false;
  if (const char* sc = std::getenv("SYSTEMD_COLORS"); sc && *sc) {
    static const std::set<std::string> off = {"0", "no", "false", "off", "n", "f"};
    static const std::set<std::string> on = {"1", "yes", "true", "on", "y", "t", "16", "256", "24bit"};
    if (off.count(sc)) return false;
    if (on.count(sc)) return true;
  }
  if (const char* term = std::getenv("TERM"); term && std::string(term) == "dumb") return false;
  return ::isatty(::fileno(out)) == 1;
}

std::string paint(const std::string& text, Colour c, bool on) {
  if (!on || c == Colour::None) return text;
  const char* code = c == Colour::Green ? "\x1b[0;32m" : c == Colour::Red ? "\x1b[0;1;31m" : c == Colour::Yellow ? "\x1b[0;33m" : "\x1b[1m";
  return code + text + "\x1b[0m";
}

std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows,
                         bool colour) {
  std::vector<std::vector<Cell>> all;
  if (!header.empty()) {
    std::vector<Cell> h;
    for (const auto& name : header) h.push_back({name, Colour::Bold});
    all.push_back(std::move(h));
  }
  all.insert(all.end(), rows.begin(), rows.end());
  std::vector<std::size_t> width;
  for (const auto& row : all)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].text.size());
    }
  std::string out;
  for (const auto& row : all) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += paint(row[i].text, row[i].colour, colour);
      if (i + 1 < row.size()) out += std::string(width[i] - row[i].text.size() + 1, ' ');
    }
    out += "\n";
  }
  return out;
}

std::string format_age(std::chrono::seconds age) {
  long s = std::max<long>(0, age.count());
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "min";
  if (s < 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}


}  // namespace nerve::ctl
