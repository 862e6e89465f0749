// SPDX-License-Identifier: LGPL-2.1-or-later
// Time helpers of the benchmark: one monotonic clock, milliseconds as double, the regimes' idle.
#pragma once

#include <chrono>
#include <string>

namespace bench {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
inline double ms_since(Clock::time_point t0) { return ms_between(t0, Clock::now()); }

void sleep_ms(double ms);

// How long the machine is left idle before each measured operation.
//   b2b:  none; the operation follows the previous one (and its untimed clean-up) at once;
//   warm: 5 ms, so the previous operation's asynchronous tail has settled, caches are hot;
//   cold: 100 ms, longer than the kernel's cgroup-migration fast window (~16 ms) and
//         long enough for daemons to go back to sleep.
enum class Regime { B2B, Warm, Cold };
const char* regime_name(Regime r);
void pause_for(Regime r);

}  // namespace bench
