// SPDX-License-Identifier: LGPL-2.1-or-later
// nervectl's command line, parsed (with CLI11) against the table of verbs (verb_table.h), without any
// bus call, so that it can be tested on its own; and the one call that runs a verb. Every bad value is a usage error (exit 2) whose message quotes it.
//
// The help has a fixed shape that other tools read (the man-page check):
//   `nervectl --help`: "Usage:" line, description, "Options:", then "Verbs:" with one verb per line
//   ("  NAME  SUMMARY"), ended by an empty line, then the exit codes.
//   `nervectl VERB --help`: "Usage: nervectl SYNOPSIS", the summary, then "Options:" with one option
//   per line ("  --NAME [VALUE]  TEXT").
#pragma once

#include "ctl/ctl.h"

#include <string>
#include <utility>
#include <vector>

namespace nerve::ctl {

struct Parsed {
  const Verb* verb = nullptr;  // set when the verb is to run; then exit_code is unused
  VerbArgs args;
  int exit_code = 0;
  std::string out;  // for stdout (help, version)
  std::string err;  // for stderr (usage errors)
};

// ARGS is argv without the program name.
Parsed parse_args(Verbs verbs, const std::vector<std::string>& args);
// A program's command line parsed against its table, its help or usage error printed, and its verb's
// handler run: the whole of the two mains (front.cpp, full/ctl.cpp). Returns the exit code.
int dispatch(Verbs verbs, int argc, char** argv);

// The verb of that name in the table, or nullptr.
const Verb* find_verb(Verbs verbs, const std::string& name);

// A -p KEY=VALUE (checked by parse_args: it has a '=' after a KEY) as (KEY, VALUE).
std::pair<std::string, std::string> split_property(const std::string& key_value);

// "launch [--wait] [--grace SECONDS] [--keep] RUN -- CMD [ARG...]"
std::string synopsis(const Verb& verb);

// The help texts described above.
std::string help_text(Verbs verbs);
std::string verb_help_text(const Verb& verb);

}  // namespace nerve::ctl
