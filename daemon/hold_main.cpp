// SPDX-License-Identifier: LGPL-2.1-or-later
// nerve-hold: the holder of a run's scope (lib/process/holder.h). nerved puts one into each scope it
// starts, in the scope's hold/ leaf, so that the scope's cgroup stays until nerved has read the run's
// figures from its run/ leaf, however the run's own processes end. It ignores every signal that can
// be ignored and waits forever: only SIGKILL (nerved's cgroup.kill of the scope) ends it.
//
// One is started per run, so its start is on every launch's bill. On x86-64 it is built freestanding
// (no libc: its own _start and two system calls, an 11 KB program): starting it costs about 1.1 ms of
// CPU on the benchmark machine, where the same loop linked statically with glibc cost 2.5 ms (glibc's
// start-up: relocations, TLS, tunables, and the page faults of a 750 KB program). Elsewhere, and in
// the sanitizer build, it is the same loop on libc (daemon/CMakeLists.txt chooses).
#if defined(NERVE_HOLD_FREESTANDING) && defined(__x86_64__)

namespace {

constexpr long kSysRtSigaction = 13;
constexpr long kSysPause = 34;
constexpr long kSigKill = 9, kSigStop = 19, kLastSignal = 64;

long syscall4(long number, long a, long b, long c, long d) {
  long ret;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(ret) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return ret;
}

// The kernel's struct sigaction on x86-64 (not libc's): handler, flags, restorer, mask.
struct KernelSigaction {
  unsigned long handler;
  unsigned long flags;
  unsigned long restorer;
  unsigned long mask;
};

}  // namespace

// The kernel enters _start with the stack 16-byte aligned, not as after a call: the attribute makes
// the compiler realign it, or its aligned stores to the stack would fault.
extern "C" [[noreturn]] __attribute__((force_align_arg_pointer)) void _start() {
  KernelSigaction ignore{1 /* SIG_IGN */, 0, 0, 0};
  for (long signo = 1; signo <= kLastSignal; ++signo)
    if (signo != kSigKill && signo != kSigStop) syscall4(kSysRtSigaction, signo, reinterpret_cast<long>(&ignore), 0, 8);
  for (;;) syscall4(kSysPause, 0, 0, 0, 0);
}

#else

#include <signal.h>
#include <unistd.h>

int main() {
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  for (int signo = 1; signo < NSIG; ++signo)
    if (signo != SIGKILL && signo != SIGSTOP) sigaction(signo, &ignore, nullptr);  // glibc's own refuse: fine
  for (;;) pause();
}

#endif
