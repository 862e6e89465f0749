// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ctl/args.h"

#include "base/errors.h"
#include "generated/nerve_version.h"
#include "base/cli_parse.h"
#include "base/conventions.h"
#include "base/duration.h"
#include "base/run_id.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nerve::ctl {

namespace {

// A usage error: printed with the verb's usage line, exit 2.
struct UsageError {
  std::string message;
};

struct OptionText {
  Opt opt;
  const char* name;
  const char* value;  // nullptr for a flag; "[=X]" for a flag that may take a value (--json=MODE)
  const char* help;
};

const OptionText kOptions[] = {
    {Opt::Wait, "--wait", nullptr,
     "stay in the foreground as the run's supervisor: reap the run when CMD exits, pass TERM, INT, HUP "
     "and QUIT on to the whole scope, exit with CMD's status"},
    {Opt::Grace, "--grace", "SECONDS",
     "time between the stop signal and SIGKILL, in seconds or with a unit (500ms), more than 0 and at most "
     "3600 (default: the grace given at launch; at launch, 10)"},
    {Opt::Keep, "--keep", nullptr, "do not reap the run when its owner (the calling process) exits"},
    {Opt::Sealed, "--sealed", nullptr,
     "start CMD in a cgroup namespace rooted at its scope, which it cannot leave by itself; refused where "
     "the host cannot seal (see the verb sealing)"},
    {Opt::Property, "--property", "KEY=VALUE",
     "a unit property of the scope (-p; repeatable), as systemd-run -p: MemoryMax, MemoryHigh, MemorySwapMax, "
     "CPUQuota, CPUWeight, TasksMax, IOWeight, AllowedCPUs, RuntimeMaxSec"},
    {Opt::Timeout, "--timeout", "DURATION",
     "end the whole run after DURATION (RuntimeMaxSec of the scope), e.g. 90, 500ms, 10min; infinity: never"},
    {Opt::Slice, "--slice", "NAME", "put the scope into slice NAME (default: nerved's, nerve.slice)"},
    {Opt::Signal, "--signal", "SIG",
     "the signal sent first to every process of the run, by name (TERM, INT, HUP, KILL, ..., with or without "
     "SIG) or number (default: TERM)"},
    {Opt::Json, "--json", "[=MODE]",
     "print the answer as JSON: MODE short (one line; plain --json), pretty (indented) or off (as without "
     "--json)"},
    {Opt::NoLegend, "--no-legend", nullptr, "print neither the column headers nor the closing count"},
    {Opt::Format, "--format", "FORMAT",
     "openmetrics (OpenMetrics 1.0, the default) or prometheus (the text format 0.0.4 of nerved's metrics file)"},
};

// "--grace SECONDS", "--json[=MODE]", "--wait".
std::string option_usage(const OptionText& t) {
  if (!t.value) return t.name;
  return std::string(t.name) + (t.value[0] == '[' ? "" : " ") + t.value;
}

JsonMode parse_json_mode(const std::string& text) {
  if (text == "short") return kJsonShort;
  if (text == "pretty") return kJsonPretty;
  if (text == "off") return kJsonOff;
  throw UsageError{"--json takes short, pretty or off, not " + quote_value(text)};
}

const OptionText& text_of(Opt opt) {
  return *std::find_if(std::begin(kOptions), std::end(kOptions), [&](const OptionText& t) { return t.opt == opt; });
}

// " RUN", " RUN -- CMD [ARG...]", " set [SLICE]": each word, in brackets if it may be left out.
std::string operands_text(const Operands& o) {
  std::string s;
  for (unsigned i = 0; i < o.max; ++i) {
    std::string word = i == 0 && o.sub ? o.sub : o.name;
    s += " " + (i < o.min ? word : "[" + word + "]");
  }
  return o.command ? s + " -- CMD [ARG...]" : s;
}

std::string version_text() { return "nervectl " NERVE_VERSION; }

// Seconds ("0.2", "3600") or a duration with a unit ("500ms", "1min"), more than 0 and at most 1h.
std::uint64_t parse_grace(const std::string& text) {
  auto d = parse_duration(text);
  if (!d || d->is_zero() || d->usec() > kMaxGraceUsec)
    throw UsageError{"--grace takes seconds (or a duration such as 500ms), more than 0 and at most 3600, not " +
                     quote_value(text)};
  return d->usec();
}

int parse_signal(const std::string& text) {
  std::string name = text.rfind("SIG", 0) == 0 ? text.substr(3) : text;
  for (int s = 1; s < 32; ++s)
    if (const char* abbrev = sigabbrev_np(s); abbrev && name == abbrev) return s;
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(text.c_str(), &end, 10);
  if (errno || end == text.c_str() || *end || n < 1 || n > 64)
    throw UsageError{"--signal takes a signal name (TERM, INT, KILL, ...) or a number from 1 to 64, not " +
                     quote_value(text)};
  return static_cast<int>(n);
}

std::string checked_run(const std::string& run) {
  if (auto why = run_id_problem(run)) throw UsageError{"invalid run id " + quote_value(run) + ": " + *why};
  return run;
}

// What CLI11 fills in for one verb; checked into VerbArgs by finish().
struct Raw {
  std::string grace;
  std::string timeout;
  CLI::Option* timeout_opt = nullptr;
  std::string signal;
  std::string run;
  CLI::Option* signal_opt = nullptr;
  std::string json;
  CLI::Option* grace_opt = nullptr;
  CLI::Option* run_opt = nullptr;
  CLI::Option* json_opt = nullptr;
};

void add_verb(CLI::App& app, const Verb& verb, VerbArgs& a, Raw& raw) {
  CLI::App* sub = app.add_subcommand(verb.name, verb.summary);
  sub->allow_extras();  // unknown options and extra words: reported by finish(), in nervectl's words
  for (Opt o : verb.options) {
    const OptionText& t = text_of(o);
    if (o == Opt::Grace) raw.grace_opt = sub->add_option(t.name, raw.grace, t.help)->type_name(t.value);
    if (o == Opt::Signal) raw.signal_opt = sub->add_option(t.name, raw.signal, t.help)->type_name(t.value);
    if (o == Opt::Wait) sub->add_flag(t.name, a.wait, t.help);
    if (o == Opt::Keep) sub->add_flag(t.name, a.keep, t.help);
    if (o == Opt::Sealed) sub->add_flag(t.name, a.sealed, t.help);
    if (o == Opt::Json) raw.json_opt = sub->add_flag("--json{short}", raw.json, t.help);  // --json=MODE too
    if (o == Opt::NoLegend) sub->add_flag(t.name, a.no_legend, t.help);
    if (o == Opt::Property)
      sub->add_option(std::string("-p,") + t.name, a.controls.properties, t.help)->type_name(t.value)->allow_extra_args(false);
    if (o == Opt::Timeout) raw.timeout_opt = sub->add_option(t.name, raw.timeout, t.help)->type_name(t.value);
    if (o == Opt::Slice) sub->add_option(t.name, a.controls.slice, t.help)->type_name(t.value);
    if (o == Opt::Format) sub->add_option(t.name, a.format, t.help)->type_name(t.value);
  }
  if (verb.operands.max > 0 && !verb.operands.sub) raw.run_opt = sub->add_option("RUN", raw.run, "the run id");
}

// slice set [SLICE]: the words after the options.
void finish_slice_set(const Verb& verb, const std::vector<std::string>& words, VerbArgs& a) {
  const Operands& o = verb.operands;
  for (const auto& w : words)
    if (w.rfind("-", 0) == 0) throw UsageError{"unknown option '" + w + "'"};
  if (words.empty() || words[0] != o.sub)
    throw UsageError{"expected '" + std::string(o.sub) + "' after '" + verb.name + "'"};
  if (words.size() > o.max) throw UsageError{"too many arguments"};
  if (words.size() == 2) a.slice_operand = words[1];
  if (a.controls.properties.empty()) throw UsageError{"expected at least one -p KEY=VALUE"};
}

// The run controls: KEY=VALUE properties and the timeout's syntax (nerved checks the rest).
void finish_controls(VerbArgs& a, const Raw& raw) {
  for (const auto& p : a.controls.properties)
    if (p.find('=') == std::string::npos || p.front() == '=')
      throw UsageError{"property " + quote_value(p) + " is not KEY=VALUE"};
  if (!raw.timeout_opt || raw.timeout_opt->count() == 0) return;
  auto d = parse_duration(raw.timeout);
  if (!d || d->is_zero())
    throw UsageError{"--timeout takes a duration such as 90, 500ms or 10min, or infinity, not " +
                     quote_value(raw.timeout) + (d ? "" : ": " + d.error().message)};
  a.controls.timeout_usec = d->is_infinity() ? 0 : d->usec();  // infinity: no timeout, as none given
}

// The checks CLI11 does not make: extra words, the run id, the grace, the command.
void finish(const Verb& verb, CLI::App& sub, VerbArgs& a, Raw& raw, bool separator) {
  finish_controls(a, raw);
  const Operands& o = verb.operands;
  if (o.sub) return finish_slice_set(verb, sub.remaining(), a);
  bool has_run = raw.run_opt && raw.run_opt->count() > 0;
  for (const auto& extra : sub.remaining()) {
    if (extra == "--") continue;  // CLI11 passes on the end-of-options mark with the extras
    if (extra.rfind("--", 0) == 0) throw UsageError{"unknown option '" + extra + "'"};
    // A word that starts with one '-' is a run id ("-x" is a valid one), as before CLI11.
    if (o.max == 0 || has_run) throw UsageError{"too many arguments"};
    raw.run = extra;
    has_run = true;
  }
  if (o.min > 0 && !has_run) throw UsageError{"missing " + std::string(o.name)};
  if (has_run) a.run = checked_run(raw.run);
  if (raw.grace_opt && raw.grace_opt->count() > 0) a.grace_usec = parse_grace(raw.grace);
  if (raw.signal_opt && raw.signal_opt->count() > 0) a.signal = parse_signal(raw.signal);
  if (raw.json_opt && raw.json_opt->count() > 0) a.json = parse_json_mode(raw.json);
  if (o.command && (!separator || a.cmd.empty()))
    throw UsageError{"expected '-- CMD [ARG...]' after the run id"};
}

Parsed usage_error(Verbs verbs, const Verb* verb, const std::string& message) {
  Parsed p;
  p.exit_code = kExitUsage;
  if (verb)
    p.err = "nervectl " + std::string(verb->name) + ": " + message + "\nUsage: nervectl " + synopsis(*verb) + "\n";
  else
    p.err = "nervectl: " + message + "\n\n" + help_text(verbs);
  return p;
}

Parsed parse_verb(Verbs verbs, const Verb* verb, std::vector<std::string> args) {
  Parsed p;
  bool separator = false;
  if (verb && verb->operands.command) {
    auto sep = std::find(args.begin() + 1, args.end(), "--");
    separator = sep != args.end();
    if (separator) p.args.cmd.assign(sep + 1, args.end());
    args.erase(sep, args.end());
  }
  CLI::App app("nervectl", "nervectl");
  app.set_version_flag("--version", version_text());
  app.formatter_fn([verbs](const CLI::App* a, std::string, CLI::AppFormatMode) {
    const Verb* v = find_verb(verbs, a->get_name());
    return v ? verb_help_text(*v) : help_text(verbs);
  });
  Raw raw;
  if (verb) add_verb(app, *verb, p.args, raw);
  if (auto exit = parse_cli(app, args, version_text())) {
    if (exit->code != 0) return usage_error(verbs, verb, exit->message);
    p.out = exit->out;
    return p;
  }
  if (!verb) return usage_error(verbs, nullptr, "missing VERB");
  try {
    finish(*verb, *app.get_subcommand(verb->name), p.args, raw, separator);
  } catch (const UsageError& e) {
    return usage_error(verbs, verb, e.message);
  }
  p.verb = verb;
  return p;
}

}  // namespace

const Verb* find_verb(Verbs verbs, const std::string& name) {
  for (const auto& v : verbs)
    if (name == v.name) return &v;
  return nullptr;
}

std::pair<std::string, std::string> split_property(const std::string& key_value) {
  auto eq = key_value.find('=');
  return {key_value.substr(0, eq), eq == std::string::npos ? std::string() : key_value.substr(eq + 1)};
}

std::string synopsis(const Verb& verb) {
  std::string s = verb.name;
  for (Opt o : verb.options) {
    s += " [" + option_usage(text_of(o)) + "]";
  }
  return s + operands_text(verb.operands);
}

std::string help_text(Verbs verbs) {
  std::string s =
      "Usage: nervectl VERB [OPTIONS] ...\n\n"
      "Starts workflow runs inside systemd user scopes and reaps them completely, through nerved.\n\n"
      "Options:\n"
      "  -h, --help  print this help (after a verb: the verb's help) and exit\n"
      "  --version   print the version and exit\n\n"
      "Verbs:\n";
  for (const auto& v : verbs) {
    std::string name = v.name;
    s += "  " + name + std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') + v.summary + "\n";
  }
  return s +
         "\nRun 'nervectl VERB --help' for the options of a verb.\n\n"
         "Exit codes: 0 ok, 1 error from nerved (reap: refused; doctor: a check failed), 2 usage,\n"
         "3 status: not running, 4 status: no such run, 69 nerved or the bus unreachable,\n"
         "75 reap pending retry, 125 launch: the command was not started.\n";
}

std::string verb_help_text(const Verb& verb) {
  std::string s = "Usage: nervectl " + synopsis(verb) + "\n\n" + verb.summary + ".\n\nOptions:\n";
  for (Opt o : verb.options) {
    const OptionText& t = text_of(o);
    std::string left = option_usage(t);
    s += "  " + left + std::string(left.size() < 17 ? 17 - left.size() : 1, ' ') + t.help + "\n";
  }
  return s + "  -h, --help       print this help and exit\n";
}

Parsed parse_args(Verbs verbs, const std::vector<std::string>& args) {
  if (args.empty()) return usage_error(verbs, nullptr, "missing VERB");
  if (args[0] == "help") {
    Parsed p;
    p.out = help_text(verbs);
    return p;
  }
  const Verb* verb = find_verb(verbs, args[0]);
  if (!verb && args[0].rfind("-", 0) != 0) return usage_error(verbs, nullptr, "unknown verb '" + args[0] + "'");
  return parse_verb(verbs, verb, args);
}

int dispatch(Verbs verbs, int argc, char** argv) {
  Parsed p = parse_args(verbs, std::vector<std::string>(argv + 1, argv + argc));
  std::fputs(p.out.c_str(), stdout);
  std::fputs(p.err.c_str(), stderr);
  if (!p.verb) return p.exit_code;
  return p.verb->handler.run(Call{*p.verb, p.args, argv});
}

}  // namespace nerve::ctl
