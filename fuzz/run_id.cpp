// SPDX-License-Identifier: LGPL-2.1-or-later
// Run ids, as callers give them on the bus and the command line and as the runs folder's names are
// (base/run_id.h): run_id_problem and check_run_id agree; a valid id never names a path outside the
// runs folder, and its scope is a valid unit name.
#include "base/errors.h"
#include "base/run_id.h"
#include "fuzz_check.h"

using namespace nerve;
using nerve::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string id = fuzz::text_of(data, size);
  auto problem = run_id_problem(id);
  auto checked = check_run_id(id);
  require(static_cast<bool>(checked) == !problem, "check_run_id agrees with run_id_problem", id);
  if (!checked) {
    require(checked.error().name == std::string(error::InvalidRunId), "a bad id is InvalidRunId", id);
  } else {
    require(!id.empty() && id.size() <= kRunIdMax, "a valid id has 1 to 128 characters", id);
    require(id.find('/') == std::string::npos && id.front() != '.', "a valid id names no other folder", id);
    require(is_valid_unit_name(scope_unit_name(id, "0123456789abcdef")), "a valid id's scope is a unit name", id);
  }
  (void)is_valid_unit_name(id);
  return 0;
}
