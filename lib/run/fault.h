// Test-only fault injection: NERVE_FAULT=<step> makes nerved die as if SIGKILLed at that step, so the
// integration tests can prove that a crash at any point of a launch or a reap loses nothing.
// Steps: after-intent, after-start-request (StartTransientUnit sent, its job not ended), after-start,
// after-running, after-stop, before-receipt, after-receipt.
#pragma once

namespace nerve {

void fault_point(const char* step);

}  // namespace nerve
