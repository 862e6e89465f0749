// SPDX-License-Identifier: LGPL-2.1-or-later
#include "scenarios.h"

#include <stdexcept>

namespace bench {

void interleave(int iterations, const std::vector<Contender>& contenders) {
  std::size_t n = contenders.size();
  for (std::size_t k = 0; k < n; ++k) contenders[k](false);
  for (int i = 0; i < iterations; ++i)
    for (std::size_t k = 0; k < n; ++k) contenders[(i + k) % n](true);
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

}  // namespace bench
