# SPDX-License-Identifier: LGPL-2.1-or-later
"""nerve for Python engines: start each run of a workflow in its own systemd scope through nerved,
and end it provably (its cgroup is empty), with no D-Bus in the engine's code.

    import nerve
    run = nerve.launch("build-42", ["make", "-j8"], stdout=nerve.PIPE, grace=5, timeout=600)
    for line in run.stdout: ...
    receipt = run.wait()           # the command ended: its final Receipt (receipt.cause == "exited")
    run.returncode                 # as subprocess: the exit code, or -SIGNAL

``nerve.launch`` returns a :class:`Run` (``pid``, ``wait``, ``reap``, ``cancel``, ``freeze``,
``thaw``, ``status``); ``nerve.status``, ``nerve.reap``, ``nerve.cancel``, ``nerve.attach`` and
``nerve.forget`` take a run id. ``nerve.aio`` has the same for asyncio engines, awaited. Durations
are seconds (int or float), checked before anything is sent (ValueError quoting the value, at most
nerved's limits); bus errors are exceptions of one class per error name (``nerve.NoSuchRun``, ...,
all :class:`NerveError` with ``.name`` and ``.message``). Receipts, usage and status are dataclasses.

A run belongs to the bus connection that launched it: the module functions share one per process
(nerve.client.default_client; a Client of your own is one more), and when it closes or this process
dies, even by SIGKILL, nerved reaps every run it launched (receipt cause ``owner_gone``) unless the
run was launched with ``keep=True``.

The D-Bus library is Debian's python3-jeepney (0.8 in Debian 12), chosen over the other two Debian
offers:
  * jeepney is pure Python with no dependency of its own, builds messages from signatures (no
    hand-made variants in nerve's code either), and has a blocking, thread-safe connection (a
    receiver thread, file-descriptor passing) and asyncio support, with no main loop to run;
  * python3-dbus-next (0.2.3) is pure Python too, but has only an asyncio and a GLib main-loop
    form, no blocking one for threaded engines, and its last release is from 2021;
  * python3-gi (Gio) needs a GLib main loop for signals, which an asyncio or threaded engine does
    not have, and pulls in gobject-introspection; examples/engine.py used it before this package.
jeepney's asyncio connection does not pass fds, so nerve.aio has its own small one over jeepney's
messages and parser (nerve._aio_connection).
"""
import subprocess as _subprocess

try:
    import jeepney as _jeepney  # noqa: F401
except ImportError as _e:  # an interpreter without Debian's python3-jeepney: say which fix applies
    raise ImportError(
        "nerve needs jeepney, which Debian's python3-jeepney gives /usr/bin/python3: run the engine "
        "with /usr/bin/python3, or in a virtualenv made with --system-site-packages, or install "
        "jeepney (0.8) into this interpreter") from _e

from .errors import *  # noqa: F401,F403: the exception classes, one per bus error name
from .errors import BusError, NerveError, ERROR_NAMES
from .receipt import Live, Receipt, Status, Usage
from .client import Client, Run, default_client
from . import aio  # noqa: F401

PIPE = _subprocess.PIPE
STDOUT = _subprocess.STDOUT
DEVNULL = _subprocess.DEVNULL


def launch(run, argv, *, env=None, cwd=None, stdin=None, stdout=None, stderr=None, grace=None,
           timeout=None, properties=None, keep=False):
    """Start ARGV as run RUN, inside a new transient systemd scope, and return its Run once the
    command has been exec'd in it (nerved's Launch).

    env: the command's whole environment (a mapping; None: this process's). cwd: its folder (None:
    this process's). stdin, stdout, stderr: None (this process's own), PIPE (the Run's
    stdin/stdout/stderr files), DEVNULL, STDOUT (stderr only), an fd or a file. grace: seconds
    between SIGTERM and SIGKILL when the run is reaped (None: nerved's default, 10 s). timeout:
    seconds after which nerved reaps the whole run (cause "timeout"). properties: unit properties
    ({"MemoryMax": "4G", "CPUQuota": "200%", "TasksMax": 64}, `systemd-run -p` syntax; an int size
    is bytes). keep: the run outlives this process's bus connection (end it with reap or cancel).
    When the command ends, nerved reaps the run, so nothing it started stays behind.
    """
    return default_client().launch(run, argv, env=env, cwd=cwd, stdin=stdin, stdout=stdout,
                                   stderr=stderr, grace=grace, timeout=timeout,
                                   properties=properties, keep=keep)


def attach(run):
    """A Run handle of an existing run (wait, reap, cancel, ...), e.g. one launched with keep."""
    return default_client().attach(run)


def status(run):
    """The record, receipt and live state of run RUN (a nerve.Status)."""
    return default_client().status(run)


def reap(run, grace=None):
    """Reap run RUN: SIGTERM to all its processes, SIGKILL after GRACE seconds (None: the run's
    own grace), until its cgroup is empty; its Receipt."""
    return default_client().reap(run, grace)


def cancel(run, signal, grace=None):
    """As reap, with SIGNAL first (the receipt's cause: "cancelled")."""
    return default_client().cancel(run, signal, grace)


def forget(run):
    """Remove the files of reaped run RUN, so that its id can be used again."""
    default_client().forget(run)


__all__ = ["launch", "attach", "status", "reap", "cancel", "forget", "Client", "Run", "Receipt",
           "Usage", "Status", "Live", "NerveError", "BusError", "PIPE", "STDOUT", "DEVNULL",
           "default_client", "aio", *ERROR_NAMES]
