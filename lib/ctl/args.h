// nervectl's command line, parsed (with CLI11) against the table of verbs, without any bus call, so
// that it can be tested on its own. Every bad value is a usage error (exit 2) whose message quotes it.
//
// The help has a fixed shape that other tools read (the man-page check):
//   `nervectl --help`: "Usage:" line, description, "Options:", then "Verbs:" with one verb per line
//   ("  NAME  SUMMARY"), ended by an empty line, then the exit codes.
//   `nervectl VERB --help`: "Usage: nervectl SYNOPSIS", the summary, then "Options:" with one option
//   per line ("  --NAME [VALUE]  TEXT").
#pragma once

#include "ctl/ctl.h"
#include "ctl/verb_table.h"

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
Parsed parse_args(const std::vector<std::string>& args);
// parse_args of a program's command line, with its help or usage error already printed (the two
// mains, ctl.cpp and front.cpp, start so).
Parsed parse_and_print(int argc, char** argv);

// The verb of that name in the table (verbs()), or nullptr.
const Verb* find_verb(const std::string& name);

// A -p KEY=VALUE (checked by parse_args: it has a '=' after a KEY) as (KEY, VALUE).
std::pair<std::string, std::string> split_property(const std::string& key_value);

// "launch [--wait] [--grace SECONDS] [--keep] RUN -- CMD [ARG...]"
std::string synopsis(const Verb& verb);

// The help texts described above.
std::string help_text();
std::string verb_help_text(const Verb& verb);

}  // namespace nerve::ctl
