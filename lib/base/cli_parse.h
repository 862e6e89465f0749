// SPDX-License-Identifier: LGPL-2.1-or-later
// The end of a CLI11 parse, the same for nerved and nervectl: help and --version are answers (exit
// 0, text for stdout), any parse error is a usage error (exit 2, CLI11's message, which names the
// bad value or option). Include only where CLI11 is used (it is header-only and slow to compile).
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace nerve {

struct CliExit {
  int code = 0;         // 0: help or version; 2: usage error
  std::string out;      // code 0: the text for stdout
  std::string message;  // code 2: what was wrong
};

// Parses ARGS (argv without the program name) into APP. nullopt when the program is to go on.
inline std::optional<CliExit> parse_cli(CLI::App& app, std::vector<std::string> args, const std::string& version) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    return CliExit{0, app.help(), ""};
  } catch (const CLI::CallForVersion&) {
    return CliExit{0, version + "\n", ""};
  } catch (const CLI::ParseError& e) {
    return CliExit{2, "", e.what()};
  }
  return std::nullopt;
}

}  // namespace nerve
