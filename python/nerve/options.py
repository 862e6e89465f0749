# SPDX-License-Identifier: LGPL-2.1-or-later
"""The caller's values, checked once before anything is sent: durations in seconds, sizes in bytes,
signals, run ids' type, and the unit properties of a run.

Each bad value is refused with ValueError (TypeError for a value of the wrong kind) quoting it, so a
mistake never reaches nerved as a different value: a grace of 0 would mean "the default" on the bus,
so it is refused here rather than turned into 10 s. The limits are nerved's (lib/base/conventions.h
and docs/dbus-api.md): a grace is more than 0 and at most one hour; a timeout is more than 0 and ends
before what nerved's clock holds (2^63 microseconds).
"""
import math
import numbers
import os

USEC_PER_SEC = 1_000_000
MAX_GRACE_SECONDS = 3600                 # kMaxGraceUsec
MAX_TIMEOUT_USEC = 2 ** 63 - 1           # one that ends later never falls due in nerved
MAX_SIGNAL = 64
# Properties whose value is a size (an int is bytes), and the one that is a duration (an int or
# float is seconds): the keys of docs/dbus-api.md, `properties` of Contain.
SIZE_PROPERTIES = ("MemoryMax", "MemoryHigh", "MemorySwapMax")
DURATION_PROPERTIES = ("RuntimeMaxSec",)
MAX_SIZE_BYTES = 2 ** 64 - 2             # 2^64-1 is systemd's infinity: say "infinity"


def _number(what, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be seconds as an int or float, not {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number of seconds, not {value!r}")
    return value


def grace_usec(value, what="grace"):
    """GRACE seconds as microseconds for the bus; None is 0 there (the default grace)."""
    if value is None:
        return 0
    _number(what, value)
    if value <= 0 or value > MAX_GRACE_SECONDS:
        raise ValueError(f"{what} must be more than 0 and at most {MAX_GRACE_SECONDS} seconds "
                         f"(nerved's limit), not {value!r}")
    usec = round(value * USEC_PER_SEC)
    if usec == 0:
        raise ValueError(f"{what} {value!r} is less than a microsecond")
    return usec


def timeout_usec(value, what="timeout"):
    """A run's TIMEOUT seconds as microseconds; None is no timeout."""
    if value is None:
        return None
    _number(what, value)
    usec = round(value * USEC_PER_SEC) if value > 0 else 0
    if usec <= 0 or usec > MAX_TIMEOUT_USEC:
        raise ValueError(f"{what} must be more than 0 seconds and less than 2^63 microseconds "
                         f"(nerved's limit), not {value!r}")
    return usec


def wait_seconds(value, what="timeout"):
    """A client-side wait (None: no bound), checked as a number of seconds >= 0."""
    if value is None:
        return None
    _number(what, value)
    if value < 0:
        raise ValueError(f"{what} must be 0 or more seconds, not {value!r}")
    return float(value)


def signal_number(value):
    """A signal (an int or a signal.Signals) in 1..64, as Cancel takes it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"signal must be a signal number, not {value!r}")
    if not 1 <= int(value) <= MAX_SIGNAL:
        raise ValueError(f"signal must be in 1..{MAX_SIGNAL}, not {value!r}")
    return int(value)


def run_id(value):
    """The run id's type only; its syntax is nerved's to check (InvalidRunId quotes it)."""
    if not isinstance(value, str):
        raise TypeError(f"a run id is a str, not {value!r}")
    return value


def _property_value(key, value):
    if isinstance(value, str):
        return value
    if key in DURATION_PROPERTIES:
        return f"{timeout_usec(value, what=key)}us"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"property {key} must be a str or an int, not {value!r}")
    if value < 0 or (key in SIZE_PROPERTIES and value > MAX_SIZE_BYTES):
        raise ValueError(f"property {key} must be 0 or more (bytes at most 2^64-2), not {value!r}")
    return str(int(value))


def properties(value):
    """Unit properties as the bus's a(ss): a mapping or (KEY, VALUE) pairs; a value is a str in
    `systemd-run -p` syntax, or an int (sizes: bytes) or, for RuntimeMaxSec, seconds. The keys and
    the strings' syntax are nerved's to check (InvalidProperty names the key and quotes the value)."""
    if value is None:
        return []
    items = value.items() if hasattr(value, "items") else value
    out = []
    for pair in items:
        key, val = pair
        if not isinstance(key, str):
            raise TypeError(f"a property key is a str, not {key!r}")
        out.append((key, _property_value(key, val)))
    return out


def argv(value):
    """The command line: a list of str (or path-like), never one str (which would be split into
    characters)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"argv must be a list of arguments, not the string {value!r}")
    out = [os.fspath(a) for a in value]
    if any(not isinstance(a, str) for a in out):
        raise TypeError(f"every argument must be a str, not {value!r}")
    if not out or not out[0]:
        raise ValueError(f"argv must name a command, not {value!r}")
    return out


def environment(value):
    """The command's whole environment as KEY=VALUE entries (None: this process's)."""
    env = os.environ if value is None else value
    out = []
    for key, val in env.items():
        if not isinstance(key, str) or not isinstance(val, str) or not key or "=" in key:
            raise ValueError(f"an environment entry must be a str KEY (no '=') and a str value, "
                             f"not {key!r}={val!r}")
        out.append(f"{key}={val}")
    return out


def launch_options(grace=None, timeout=None, properties_=None, keep=False):
    """The a{sv} options of Launch, each value as jeepney's (signature, value)."""
    if not isinstance(keep, bool):
        raise TypeError(f"keep must be True or False, not {keep!r}")
    opts = {"reap_on_exit": ("b", True), "keep": ("b", keep)}
    g = grace_usec(grace)
    if g:
        opts["grace_usec"] = ("t", g)
    t = timeout_usec(timeout)
    if t is not None:
        opts["timeout_usec"] = ("t", t)
    props = properties(properties_)
    if props:
        opts["properties"] = ("a(ss)", props)
    return opts
