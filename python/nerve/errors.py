# SPDX-License-Identifier: LGPL-2.1-or-later
"""The errors of nerve's bus API as Python exceptions: one class per error name.

Every error nerved returns is named ``org.nerve.Lifecycle1.Error.<Name>`` (lib/base/errors.h, listed
in docs/dbus-api.md under "Error names") and its message quotes the value at fault. Here each name is
the class ``nerve.<Name>`` (``nerve.NoSuchRun``, ``nerve.ExecFailed``, ...), a subclass of
:class:`NerveError`, so an engine matches on the class, never on the message. An error that does not
come from nerved itself (``org.freedesktop.DBus.Error.ServiceUnknown``: nerved is not running and
cannot be activated; ``InvalidArgs``, ...) is a :class:`BusError` with its own name.
"""

PREFIX = "org.nerve.Lifecycle1.Error."


class NerveError(Exception):
    """An error answered on the bus. ``name`` is the D-Bus error name, ``message`` its text."""

    def __init__(self, name, message=""):
        super().__init__(f"{name}: {message}" if message else name)
        self.name = name
        self.message = message


class BusError(NerveError):
    """An error named outside org.nerve.Lifecycle1.Error: from the bus or the D-Bus library."""


# The names of lib/base/errors.h, in its order; tests/test_unit_errors.py checks the two agree.
ERROR_NAMES = (
    "InvalidRunId", "InvalidArgument", "NoSuchRun", "RunFinished", "ContainmentUnavailable",
    "RecordFailed", "ScopeFailed", "RunNotFinished", "RunBusy", "ExecFailed", "AccessDenied",
    "InvalidProperty", "SealingUnavailable", "Superseded", "LimitExceeded", "Internal",
)

_BY_NAME = {}
for _short in ERROR_NAMES:
    _cls = type(_short, (NerveError,), {
        "__doc__": f"The bus error {PREFIX}{_short} (see docs/dbus-api.md, Error names).",
        "__module__": "nerve",
    })
    globals()[_short] = _cls
    _BY_NAME[PREFIX + _short] = _cls
del _short, _cls


def error_for(name, message=""):
    """The exception for bus error NAME: its own class for nerved's names, else BusError."""
    return _BY_NAME.get(name, BusError)(name, message)


__all__ = ["NerveError", "BusError", "error_for", "ERROR_NAMES", *ERROR_NAMES]
