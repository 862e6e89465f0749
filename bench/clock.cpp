// SPDX-License-Identifier: LGPL-2.1-or-later
#include "clock.h"

#include <thread>

namespace bench {

void sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

const char* regime_name(Regime r) {
  switch (r) {
    case Regime::B2B: return "back to back";
    case Regime::Warm: return "warm";
    case Regime::Cold: return "cold";
  }
  return "?";
}

void pause_for(Regime r) {
  switch (r) {
    case Regime::B2B: break;
    case Regime::Warm: sleep_ms(5); break;
    case Regime::Cold: sleep_ms(100); break;
  }
}

}  // namespace bench
