// SPDX-License-Identifier: LGPL-2.1-or-later
// The options (a{sv}) of Contain and Launch as a caller sends them (bus/run_options.h,
// parse_run_options: the one parse of the dictionary, over the option table). The input is text: its
// first line names the method ("Contain", else Launch), and each line after it is one option
// "KEY TYPE VALUE" (cut at the first two spaces), made into an sdbus::Variant of that D-Bus type:
//   b  "true" is true, anything else false      s  VALUE as it is
//   t u i  VALUE's digits (0 when none)           d  VALUE's digits, as a double
//   as  VALUE cut at each '|'                     a(ss)  VALUE cut at each '|', each cut at its first '='
// A line of another type, or with a string that is not UTF-8 (which no call can carry), is left out;
// a key given twice counts once, the last (a dictionary).
//
// Promises: the options parse or are InvalidArgument or InvalidProperty, never another exception;
// they are refused whenever a key is not the method's or a value not of the option's type; and what
// parses is what was given: each option's value in its place, the defaults where none was given, the
// defaults' properties before the caller's, a grace within one hour and a slice that is a slice name.
#include "base/conventions.h"
#include "base/errors.h"
#include "base/run_controls.h"
#include "base/unit_properties.h"
#include "bus/run_options.h"
#include "fuzz_check.h"

#include <sdbus-c++/Error.h>

#include <algorithm>
#include <charconv>
#include <optional>

using namespace nerve;
using nerve::fuzz::require;

namespace {
using Pairs = std::vector<sdbus::Struct<std::string, std::string>>;

std::vector<std::string> split(std::string_view text, char at) {
  std::vector<std::string> parts;
  for (;;) {
    auto end = text.find(at);
    parts.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) return parts;
    text.remove_prefix(end + 1);
  }
}

template <typename T>
T number(const std::string& text) {
  T n{};
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

std::optional<sdbus::Variant> make_variant(const std::string& type, const std::string& value) {
  if (type == "b") return sdbus::Variant(value == "true");
  if (type == "s") return sdbus::Variant(value);
  if (type == "t") return sdbus::Variant(number<std::uint64_t>(value));
  if (type == "u") return sdbus::Variant(number<std::uint32_t>(value));
  if (type == "i") return sdbus::Variant(number<std::int32_t>(value));
  if (type == "d") return sdbus::Variant(static_cast<double>(number<std::uint64_t>(value)));
  if (type == "as") return sdbus::Variant(split(value, '|'));
  if (type == "a(ss)") {
    Pairs pairs;
    for (const auto& item : split(value, '|')) {
      auto eq = item.find('=');
      pairs.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
    }
    return sdbus::Variant(pairs);
  }
  return std::nullopt;
}

// The value as a caller can send it: sd-bus refuses a string that is not UTF-8 (D-Bus strings are), so
// no call carries one, and the line is left out.
std::optional<sdbus::Variant> variant_of(const std::string& type, const std::string& value) {
  try {
    return make_variant(type, value);
  } catch (const sdbus::Error&) {
    return std::nullopt;
  }
}

ContainRequest defaults() {
  ContainRequest d;
  d.run = "r1";
  d.grace_usec = 7'000'000;
  d.controls.slice = "nerve.slice";
  d.controls.properties = {"TasksMax=100"};
  d.controls.unit_properties = *parse_unit_properties(d.controls.properties);
  return d;
}

// The table's row for KEY when METHOD takes it, else null.
const RunOption* option_of(RunMethod method, const std::string& key) {
  auto table = run_option_table();
  auto it = std::find_if(table.begin(), table.end(), [&](const RunOption& o) { return key == o.name; });
  if (it == table.end() || !(it->methods & static_cast<unsigned>(method))) return nullptr;
  return &*it;
}

// What the parse of OPTIONS, which it accepted, must have made of them.
void check_accepted(RunMethod method, const BusOptions& options, const RunOptions& got, const std::string& text) {
  const ContainRequest d = defaults();
  auto given = [&](const char* key) { return options.count(key) != 0; };
  const ContainRequest& c = got.contain;
  std::uint64_t grace = given("grace_usec") ? options.at("grace_usec").get<std::uint64_t>() : 0;
  require(c.grace_usec == (grace ? grace : d.grace_usec), "grace_usec is given or the default (for 0 too)", text);
  require(c.grace_usec <= kMaxGraceUsec, "a grace is at most one hour", text);
  require(c.keep == (given("keep") && options.at("keep").get<bool>()), "keep is as given", text);
  require(got.sealed == (given("sealed") && options.at("sealed").get<bool>()), "sealed is as given", text);
  bool reap = given("reap_on_exit") ? options.at("reap_on_exit").get<bool>() : method == RunMethod::Launch;
  require(c.reap_on_exit == reap, "reap_on_exit is as given, else true for Launch only", text);
  require(c.controls.slice == (given("slice") ? options.at("slice").get<std::string>() : d.controls.slice),
          "the slice is as given or the default", text);
  require(static_cast<bool>(check_slice_name(c.controls.slice)), "the slice is a slice name", text);
  require(c.controls.timeout.usec() == (given("timeout_usec") ? options.at("timeout_usec").get<std::uint64_t>() : 0),
          "timeout_usec is as given", text);
  require(got.owner_bus_name.has_value() == given("owner_bus_name"), "owner_bus_name is there when given", text);
  std::vector<std::string> properties = d.controls.properties;
  if (given("properties"))
    for (auto& p : options.at("properties").get<Pairs>()) properties.push_back(p.get<0>() + "=" + p.get<1>());
  require(c.controls.properties == properties, "the defaults' properties come first, then the caller's", text);
  auto parsed = parse_unit_properties(properties);
  require(parsed && *parsed == c.controls.unit_properties, "the unit properties are what the properties parse to", text);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = fuzz::text_of(data, size);
  auto lines = fuzz::lines_of(text);
  RunMethod method = !lines.empty() && lines.front() == "Contain" ? RunMethod::Contain : RunMethod::Launch;
  BusOptions options;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto key_end = lines[i].find(' ');
    if (key_end == std::string::npos) continue;
    auto type_end = lines[i].find(' ', key_end + 1);
    std::string key = lines[i].substr(0, key_end);
    std::string type = lines[i].substr(key_end + 1, type_end == std::string::npos ? std::string::npos : type_end - key_end - 1);
    std::string value = type_end == std::string::npos ? "" : lines[i].substr(type_end + 1);
    if (auto v = variant_of(type, value)) options.insert_or_assign(key, std::move(*v));
  }
  bool all_known = std::all_of(options.begin(), options.end(), [&](const auto& kv) {
    const RunOption* o = option_of(method, kv.first);
    return o && kv.second.peekValueType() == o->type;
  });

  auto parsed = parse_run_options(method, options, defaults());
  if (!parsed) {
    const std::string& name = parsed.error().name;
    require(name == error::InvalidArgument || name == error::InvalidProperty,
            "refused options are InvalidArgument or InvalidProperty", text);
    return 0;
  }
  require(all_known, "an unknown key or a value of another type is refused", text);
  check_accepted(method, options, *parsed, text);
  return 0;
}
