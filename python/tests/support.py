# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the integration tests share: a nerved of their own (tests/harness/with-nerved.sh inside
with-user-manager.sh, as ctest runs them), fresh run ids, a process tree that escapes its process
group, and checks of processes and cgroups that wait on events (pipes, pidfds), never sleep."""
import itertools
import os
import select
import sys
import time

RUNS_DIR = os.environ.get("NERVE_TEST_RUNS_DIR", "")
CGROUP_ROOT = os.environ.get("NERVE_CGROUP_ROOT", "/sys/fs/cgroup")
PYTHON = sys.executable
_ids = itertools.count(1)

# The leader prints "leader PID"; it forks a child that setsids, whose own child ignores SIGTERM,
# prints "escaper PID" and keeps the run's stdout open; the middle one exits. So the escaper is in
# another session and process group than the leader, reparented, and only SIGKILL ends it.
ESCAPER = r"""
import os, signal, sys
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print(f"escaper {os.getpid()}", flush=True)
        os.write(w, b"x")
        while True:
            signal.pause()
    os._exit(0)
os.read(r, 1)
print(f"leader {os.getpid()}", flush=True)
while True:
    signal.pause()
"""


def require_nerved(case):
    if not RUNS_DIR:
        case.fail("NERVE_TEST_RUNS_DIR is not set: run these tests through tests/harness/with-nerved.sh "
                  "(ctest -R python does), which starts nerved on a runs folder of its own")


def run_id(name):
    return f"py-{name}-{os.getpid()}-{next(_ids)}"


def read_line(f, timeout=10.0):
    """One line of the binary file F within TIMEOUT seconds ("" on EOF); AssertionError if none.
    Read a byte at a time from the fd, so nothing is left in a buffer that select does not see."""
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([f.fileno()], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"no whole line within {timeout} s (got {line!r})")
        byte = os.read(f.fileno(), 1)
        if not byte:
            break
        line += byte
    return line.decode()


def read_markers(f, count, timeout=10.0):
    """The {name: pid} of COUNT "NAME PID" lines on F."""
    out = {}
    for _ in range(count):
        name, pid = read_line(f, timeout).split()
        out[name] = int(pid)
    return out


def gone(pid):
    """PID is no more, or a zombie (ended, not collected yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def eof_within(f, timeout=10.0):
    """F reaches EOF within TIMEOUT (every holder of the pipe's other end is gone)."""
    ready, _, _ = select.select([f.fileno()], [], [], timeout)
    return bool(ready) and os.read(f.fileno(), 1) == b""


def cgroup_empty(cgroup):
    """The run's cgroup (relative to the cgroup2 root) is gone or has no process."""
    procs = os.path.join(CGROUP_ROOT, cgroup.lstrip("/"), "cgroup.procs")
    try:
        with open(procs) as f:
            return f.read().strip() == ""
    except FileNotFoundError:
        return True


def limits_offered(controller):
    """A limit needing CONTROLLER is taken: always with the user manager (which records a limit whose
    controller is missing); on the cgroup backend (NERVE_TEST_BACKEND=cgroup) only where the subtree
    offers the controller, else it is refused by name."""
    if os.environ.get("NERVE_TEST_BACKEND", "systemd") != "cgroup":
        return True
    with open(os.path.join(CGROUP_ROOT, "cgroup.controllers")) as f:
        return controller in f.read().split()


def receipt_file(run):
    with open(os.path.join(RUNS_DIR, run, "receipt.json")) as f:
        return f.read()
