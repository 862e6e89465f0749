// SPDX-License-Identifier: LGPL-2.1-or-later
// nerved.conf (nerved/daemon_config.h): any text is a configuration or an error of the config kind
// that names the file and a line; what is accepted keeps the rules the file's keys state (an absolute
// runs folder, a grace from 1 us to 1 h, a NAME.slice, a keep_finished that is a duration).
#include "base/conventions.h"
#include "fuzz_check.h"
#include "nerved/daemon_config.h"

using namespace nerve;
using nerve::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = fuzz::text_of(data, size);
  auto config = parse_daemon_config(text, "nerved.conf");
  if (!config) {
    require(config.error().name == kConfigError, "a bad file is a config error", text);
    require(config.error().message.rfind("nerved.conf:", 0) == 0, "the error names the file and the line", text);
    return 0;
  }
  if (config->runs_dir) require(!config->runs_dir->empty() && config->runs_dir->front() == '/', "runs_dir is absolute", text);
  if (config->default_grace)
    require(config->default_grace->usec() > 0 && config->default_grace->usec() <= kMaxGraceUsec, "grace is 1us..1h", text);
  if (config->default_slice) {
    const std::string& s = *config->default_slice;
    require(s.size() > 6 && s.compare(s.size() - 6, 6, ".slice") == 0, "default_slice is NAME.slice", text);
  }
  return 0;
}
