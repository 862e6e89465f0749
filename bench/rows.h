// SPDX-License-Identifier: LGPL-2.1-or-later
// The rows of the benchmark's table: what each measures, against what, and its target.
#pragma once

#include <string>
#include <vector>

namespace bench {

struct RowDef {
  const char* id;
  const char* what;
  const char* unit;
  const char* reference;  // comparison rows: the reference contender; growth rows: what 0/1x/10x are
  const char* target;     // the row's target, for the reader; the benchmark never judges
  std::vector<const char*> columns;  // regimes or concurrencies (comparison rows)
  bool growth = false;
};

const std::vector<RowDef>& row_defs();
const RowDef* row_def(const std::string& id);

// Column names shared by the scenarios.
inline constexpr const char* kClients4 = "4 clients";
inline constexpr const char* kClients16 = "16 clients";

}  // namespace bench
