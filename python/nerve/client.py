# SPDX-License-Identifier: LGPL-2.1-or-later
"""The blocking form: a Client (one bus connection, thread-safe) and the Run handles it gives.

The connection is jeepney's threading one: a receiver thread reads every message, hands replies to
the threads waiting for them and signals to the connection's RunBook, so any number of threads may
call and wait at once. The runs a Client launches are owned by its connection: when it closes, or
this process dies (even by SIGKILL), nerved reaps them, unless they were launched with keep=True.
"""
import os
import queue
import threading
import time

from jeepney.io import threading as jthreading

from . import _ops
from . import _protocol as proto
from . import options
from .run_handle import RunHandle


class _Sink(queue.Queue):
    """A filter's queue that hands each message to a function at once (on the receiver thread)."""

    def __init__(self, handler):
        super().__init__()
        self._handler = handler

    def put(self, item, block=True, timeout=None):
        self._handler(item)

    def put_nowait(self, item):
        self._handler(item)


class Client:
    """One connection to the session bus (or BUS, a D-Bus address), listening to nerved's signals
    from the start, so that nothing a run says after its Launch can be missed."""

    def __init__(self, bus="SESSION"):
        self._conn = jthreading.open_dbus_connection(bus=bus, enable_fds=True, auth_timeout=proto.CONNECT_TIMEOUT)
        self._router = jthreading.DBusRouter(self._conn)
        self.book = proto.RunBook()
        self._changed = threading.Condition()
        self.book.notify = self._wake
        self._filters = [self._router.filter(rule, queue=_Sink(self.book.on_message))
                         for rule in proto.LOCAL_RULES]
        for rule in proto.BUS_RULES:
            self._perform(proto.Call(proto.add_match(rule), _ops.CALL_TIMEOUT))

    @property
    def unique_name(self):
        """The connection's unique bus name: the owner of the runs it launches."""
        return self._conn.unique_name

    def close(self):
        """Close the connection: nerved reaps every run it launched without keep."""
        self._router.close()
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _wake(self):
        with self._changed:
            self._changed.notify_all()

    def _perform(self, request):
        if isinstance(request, proto.Call):
            reply = self._router.send_and_get_reply(request.msg, timeout=request.timeout)
            return proto.unwrap(reply)
        with self._changed:
            left = None if request.deadline is None else request.deadline - time.monotonic()
            if not self._changed.wait_for(lambda: self.book.version != request.version, timeout=left):
                raise TimeoutError("the run did not end in time")
        return None

    def _drive(self, op):
        return _ops.drive(op, self._perform)

    def launch(self, run, argv, *, env=None, cwd=None, stdin=None, stdout=None, stderr=None,
               grace=None, timeout=None, properties=None, keep=False):
        """Start ARGV as run RUN in its own scope (nerved's Launch); see nerve.launch."""
        path, pid, grace_usec, ours = self._drive(_ops.launch(
            self.book, run, argv, env, cwd, stdin, stdout, stderr, grace, timeout, properties, keep))
        files = [None if fd is None else os.fdopen(fd, "wb" if n == 0 else "rb")
                 for n, fd in enumerate(ours)]
        return Run(self, run, path, pid, grace_usec, *files)

    def attach(self, run):
        """A handle of an existing run (launched by another connection, or before a restart)."""
        path, pid = self._drive(_ops.attach(run))
        return Run(self, run, path, pid, 0, launched=False)

    def status(self, run):
        """The run's record, receipt and live state (GetRun), as a nerve.Status."""
        return self._drive(_ops.status(run))

    def reap(self, run, grace=None):
        """Reap the run: TERM, SIGKILL after GRACE seconds (None: the run's grace); its Receipt."""
        return self._drive(_ops.reap(run, grace))

    def cancel(self, run, signal, grace=None):
        """Cancel the run with SIGNAL, SIGKILL after GRACE; its Receipt."""
        return self._drive(_ops.reap(run, grace, signal))

    def freeze(self, run):
        self._drive(_ops.simple(proto.freeze, run))

    def thaw(self, run):
        self._drive(_ops.simple(proto.thaw, run))

    def forget(self, run):
        """Remove the files of a reaped run, so that its id can be used again."""
        self._drive(_ops.simple(proto.forget, run))


class Run(RunHandle):
    """A run of a blocking Client: its id (``run``), object ``path``, command ``pid`` and, for
    PIPE, the ``stdin`` (writable), ``stdout`` and ``stderr`` (readable) binary files."""

    def wait(self, timeout=None):
        """Wait until the command ended (or the run's reap began), then return the final Receipt.
        ``exit_code``/``exit_signal`` are then set; TimeoutError after TIMEOUT seconds (the run goes
        on)."""
        t = options.wait_seconds(timeout)
        deadline = None if t is None else time.monotonic() + t
        exit_, receipt = self.client._drive(_ops.wait(self.client.book, self.run, deadline,
                                                                       self.launched))
        return self._ended(exit_, receipt)

    def reap(self, grace=None):
        return self._ended(None, self.client.reap(self.run, grace))

    def cancel(self, signal, grace=None):
        return self._ended(None, self.client.cancel(self.run, signal, grace))

    def freeze(self):
        self.client.freeze(self.run)

    def thaw(self):
        self.client.thaw(self.run)

    @property
    def frozen(self):
        """The run's cgroup is frozen now (its Frozen property)."""
        return self.client._drive(_ops.frozen(self.run))

    def status(self):
        return self.client.status(self.run)


_default = None
_default_pid = None
_default_lock = threading.Lock()


def default_client():
    """This process's shared Client, opened on first use (again in a forked child: a connection is
    never shared across fork)."""
    global _default, _default_pid
    with _default_lock:
        if _default is None or _default_pid != os.getpid():
            _default, _default_pid = Client(), os.getpid()
        return _default
