// SPDX-License-Identifier: LGPL-2.1-or-later
// Test-only fault injection: NERVE_FAULT=<step> makes nerved die as if SIGKILLed at that step, so the
// integration tests can prove that a crash at any point of a launch or a reap loses nothing.
// Steps of a launch: after-intent, after-start-request (StartTransientUnit sent, its job not ended),
// after-start, before-running (the leaves made, the running record not written). Steps of a reap, in
// their order: after-fence (the run's fence durable; for a run with children, before any of them is
// reaped), after-child-fence and after-child-receipt (the same points of a child's reap: the run's
// record names a parent), before-stop (a run without a parent: its children reaped, nothing of the
// run signalled yet; before-child-stop for a child), after-stop, before-receipt, after-receipt (a run
// without a parent). after-stop and before-receipt are those of whichever reap gets there first: in a
// nested reap, the child's.
#pragma once

#include <string>

namespace nerve {

void fault_point(const char* step);
// The step of a reap of a run with PARENT ("" for none): CHILD_STEP for a child run, else STEP.
inline void fault_point(const std::string& parent, const char* step, const char* child_step) {
  fault_point(parent.empty() ? step : child_step);
}

}  // namespace nerve
