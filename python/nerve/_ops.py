# SPDX-License-Identifier: LGPL-2.1-or-later
"""Each operation of nerve's API written once, for both connections: a generator that yields what it
needs (a Call to answer, or a Wait for the next signal) and returns the result. nerve.client drives
it with blocking calls, nerve.aio with awaits (``drive`` below and ``Client._perform`` in each).

Every call has a bound (docs/dbus-api.md, "Long calls"): 25 s for a quick one; for Reap and Cancel the
grace plus a minute, the grace being the call's own or, without one, the run's (its GraceUSec, asked
first, as nervectl does); for Launch the grace of the reap of an earlier attempt plus a minute.
"""
import os
import subprocess
import time

from . import _protocol as proto
from . import options
from .errors import BusError
from .receipt import FINAL_STATES, Receipt, Status

CALL_TIMEOUT = 25.0           # kCallTimeoutUsec
REAP_MARGIN = 60.0            # kReapCallMarginUsec
MAX_GRACE_USEC = options.MAX_GRACE_SECONDS * options.USEC_PER_SEC
EXIT_AFTER_REAP = 5.0         # how long a RunExited may follow the reap that ended its run


class Wait:
    """Wait until the book's version is not VERSION (a signal came), or raise TimeoutError at
    DEADLINE (time.monotonic(); None: never)."""

    def __init__(self, version, deadline):
        self.version = version
        self.deadline = deadline


def drive(op, perform):
    """Run generator OP to its end with the blocking PERFORM(request) -> answer."""
    answer, failure = None, None
    while True:
        try:
            request = op.throw(failure) if failure is not None else op.send(answer)
        except StopIteration as done:
            return done.value
        answer, failure = None, None
        try:
            answer = perform(request)
        except Exception as e:  # handed to the operation, which may clean up and re-raise
            failure = e


async def adrive(op, perform):
    """drive() with an async PERFORM."""
    answer, failure = None, None
    while True:
        try:
            request = op.throw(failure) if failure is not None else op.send(answer)
        except StopIteration as done:
            return done.value
        answer, failure = None, None
        try:
            answer = await perform(request)
        except Exception as e:
            failure = e


def _reap_bound(grace_usec):
    return (grace_usec or MAX_GRACE_USEC) / 1e6 + REAP_MARGIN


def _property(path, iface, name):
    """A property's value; None when it cannot be read (an old nerved, or no such object)."""
    try:
        (value,) = yield proto.Call(proto.get_property(path, iface, name), CALL_TIMEOUT)
    except BusError:
        return None
    return proto.variant_value(value)


def reap(run, grace, signal=None):
    """Reap (SIGNAL None) or Cancel RUN; its receipt."""
    options.run_id(run)
    g = options.grace_usec(grace)
    sig = None if signal is None else options.signal_number(signal)
    bound_usec = g or (yield from _property(proto.run_path(run), proto.RUN_IFACE, "GraceUSec"))
    msg = proto.reap(run, g) if sig is None else proto.cancel(run, sig, g)
    _outcome, text = yield proto.Call(msg, _reap_bound(bound_usec))
    return Receipt.from_json(text)


def simple(msg_of, run):
    """A call of one run id answered with nothing (Freeze, Thaw, Forget)."""
    options.run_id(run)
    yield proto.Call(msg_of(run), CALL_TIMEOUT)


def status(run):
    options.run_id(run)
    (text,) = yield proto.Call(proto.get_run(run), CALL_TIMEOUT)
    return Status.from_json(text)


def frozen(run):
    value = yield from _property(proto.run_path(run), proto.RUN_IFACE, "Frozen")
    return bool(value)


def attach(run):
    """(path, pid) of an existing run: NoSuchRun or InvalidRunId from GetRunPath otherwise."""
    options.run_id(run)
    (path,) = yield proto.Call(proto.get_run_path(run), CALL_TIMEOUT)
    pid = yield from _property(path, proto.RUN_IFACE, "MainPID")
    return path, pid or 0


class Stdio:
    """The three fds a Launch sends, and this side's ends of the pipes it made. subprocess's
    constants: None inherits this process's fd, PIPE makes a pipe, DEVNULL is /dev/null, STDOUT (for
    stderr) is stdout's; an int is an fd, anything with fileno() its fd."""

    def __init__(self, stdin, stdout, stderr):
        self.send, self.close_after, self.ours = [], [], [None, None, None]
        try:
            for n, spec in enumerate((stdin, stdout, stderr)):
                self.send.append(self._one(n, spec))
        except BaseException:
            self.close_all()
            raise

    def _one(self, n, spec):
        if spec is None:
            return n
        if spec == subprocess.STDOUT and n == 2:
            return self.send[1]
        if spec == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            self.close_after.append(fd)
            return fd
        if spec == subprocess.PIPE:
            r, w = os.pipe2(os.O_CLOEXEC)
            theirs, ours = (r, w) if n == 0 else (w, r)
            self.close_after.append(theirs)
            self.ours[n] = ours
            return theirs
        fd = spec if isinstance(spec, int) and not isinstance(spec, bool) else spec.fileno()
        if fd < 0:
            raise ValueError(f"stdio {n}: not an fd nor PIPE, DEVNULL or STDOUT: {spec!r}")
        return fd

    def sent(self):
        """After the call: the command's ends are nerved's now (it duplicated them)."""
        for fd in self.close_after:
            os.close(fd)
        self.close_after = []

    def close_all(self):
        self.sent()
        for fd in self.ours:
            if fd is not None:
                os.close(fd)
        self.ours = [None, None, None]


def launch(book, run, argv, env, cwd, stdin, stdout, stderr, grace, timeout, properties, keep):
    """Launch RUN; (path, pid, grace_usec, our pipe ends [stdin, stdout, stderr])."""
    options.run_id(run)
    args = options.argv(argv)
    environ = options.environment(env)
    opts = options.launch_options(grace=grace, timeout=timeout, properties_=properties, keep=keep)
    folder = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
    g = opts.get("grace_usec", ("t", 0))[1]
    bound_usec = g or (yield from _property(proto.MANAGER_PATH, proto.MANAGER, "DefaultGraceUSec"))
    stdio = Stdio(stdin, stdout, stderr)
    try:
        book.forget(run)
        path, pid = yield proto.Call(proto.launch(run, args, environ, folder, stdio.send, opts),
                                     _reap_bound(bound_usec))
    except BaseException:
        stdio.close_all()
        raise
    stdio.sent()
    return path, pid, g, stdio.ours


def _exit_from_status(exit_status):
    """An Exit from the run object's ExitStatus (code, or 128 + signal), when RunExited was missed."""
    if exit_status is None or exit_status < 0:
        return None
    if 128 < exit_status <= 128 + options.MAX_SIGNAL:
        return proto.Exit(-1, exit_status - 128, "")
    return proto.Exit(exit_status, 0, "")


def wait(book, run, deadline, launched=True):
    """Until RUN's command ended (RunExited) or its reap began (State), then its final receipt by a
    Reap (which returns the receipt of a reap already done, or waits for one under way). (Exit or
    None, Receipt). The run object is read once at first and again whenever nerved's name changed
    hands (a restarted nerved sends no RunExited for a command that ended while it was down).
    LAUNCHED: this connection launched it, so its RunExited is in the book (or still to come)."""
    looked_at = None
    while True:
        version, nerved_changes, exit_, state = book.get(run)
        if exit_ is not None or state in FINAL_STATES:
            break
        if looked_at != nerved_changes:
            looked_at = nerved_changes
            (props,) = yield proto.Call(proto.get_all(proto.run_path(run), proto.RUN_IFACE), CALL_TIMEOUT)
            exit_ = _exit_from_status(proto.variant_value(props["ExitStatus"])) if "ExitStatus" in props else None
            if exit_ is not None or proto.variant_value(props.get("State", ("s", ""))) in FINAL_STATES:
                break
            continue
        yield Wait(version, deadline)
    receipt = yield from reap(run, None)
    if exit_ is None:
        exit_ = yield from _exit_after_reap(book, run, deadline if launched else time.monotonic())
    return exit_, receipt


def _exit_after_reap(book, run, deadline):
    """The command's end once its run is reaped: its RunExited, or its ExitStatus (set with it).
    A reap can finish just before nerved has collected the command's status, so a RunExited may
    still come: it is waited for, at most EXIT_AFTER_REAP seconds and not after DEADLINE; None if
    nerved never saw the command end (it restarted meanwhile)."""
    status = yield from _property(proto.run_path(run), proto.RUN_IFACE, "ExitStatus")
    exit_ = _exit_from_status(status)
    until = time.monotonic() + EXIT_AFTER_REAP
    until = until if deadline is None else min(until, deadline)
    while exit_ is None:
        version, _changes, exit_, _state = book.get(run)
        if exit_ is not None:
            break
        try:
            yield Wait(version, until)
        except TimeoutError:
            break
    return exit_
