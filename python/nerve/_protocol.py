# SPDX-License-Identifier: LGPL-2.1-or-later
"""nerve's bus API as messages, without I/O: the names, the run object paths, one message per method,
the replies turned into values or exceptions, the match rules, and the book of what the signals said.

Both connections (nerve.client, blocking with a receiver thread; nerve.aio, asyncio) send these
messages; the logic of each operation is written once, in nerve._ops, over this module.
"""
import threading

from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, new_method_call

from .errors import error_for

BUS_NAME = "org.nerve.Lifecycle1"
MANAGER_PATH = "/org/nerve/Lifecycle1"
MANAGER = "org.nerve.Lifecycle1.Manager"
RUN_IFACE = "org.nerve.Lifecycle1.Run"
RUN_PATH_PREFIX = "/org/nerve/Lifecycle1/run/"
PROPERTIES = "org.freedesktop.DBus.Properties"
# The bound of the bus's authentication when a client connects, in seconds: jeepney's default (1 s)
# ran out on a loaded machine before dbus-daemon answered; 25 s is sd-bus's bound of a call, which
# nervectl and libnerve connect under.
CONNECT_TIMEOUT = 25.0

_manager = DBusAddress(MANAGER_PATH, bus_name=BUS_NAME, interface=MANAGER)
_dbus = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus",
                    interface="org.freedesktop.DBus")


def run_path(run):
    """The run's object path, as sd_bus_path_encode makes it: every byte of the id but A-Z a-z 0-9,
    and a leading digit, becomes _ and two lowercase hex digits; "" is "_" (docs/dbus-api.md, Run
    object paths). Any str gives a valid path, so even a bad id reaches nerved, which names it."""
    if not run:
        return RUN_PATH_PREFIX + "_"
    return RUN_PATH_PREFIX + "".join(
        chr(b) if chr(b).isascii() and chr(b).isalnum() and not (i == 0 and chr(b).isdigit())
        else "_%02x" % b
        for i, b in enumerate(run.encode("utf-8", "surrogateescape")))


def run_from_path(path):
    """The run id of a run object path (the inverse of run_path), or None for another path."""
    if not path.startswith(RUN_PATH_PREFIX):
        return None
    label, out, i = path[len(RUN_PATH_PREFIX):], bytearray(), 0
    if label == "_":
        return ""
    while i < len(label):
        if label[i] == "_":
            out.append(int(label[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(ord(label[i]))
            i += 1
    return out.decode("utf-8", "surrogateescape")


class Call:
    """One method call to send, and how long to wait for its answer (seconds; None: no bound)."""

    def __init__(self, msg, timeout):
        self.msg = msg
        self.timeout = timeout


def launch(run, argv, env, cwd, stdio, options):
    return new_method_call(_manager, "Launch", "sasassaha{sv}", (run, argv, env, cwd, stdio, options))


def reap(run, grace_usec):
    return new_method_call(_manager, "Reap", "st", (run, grace_usec))


def cancel(run, signal, grace_usec):
    return new_method_call(_manager, "Cancel", "sit", (run, signal, grace_usec))


def get_run_path(run):
    return new_method_call(_manager, "GetRunPath", "s", (run,))


def freeze(run):
    return new_method_call(_manager, "Freeze", "s", (run,))


def thaw(run):
    return new_method_call(_manager, "Thaw", "s", (run,))


def get_run(run):
    return new_method_call(_manager, "GetRun", "s", (run,))


def forget(run):
    return new_method_call(_manager, "Forget", "s", (run,))


def get_property(path, iface, name):
    obj = DBusAddress(path, bus_name=BUS_NAME, interface=PROPERTIES)
    return new_method_call(obj, "Get", "ss", (iface, name))


def get_all(path, iface):
    obj = DBusAddress(path, bus_name=BUS_NAME, interface=PROPERTIES)
    return new_method_call(obj, "GetAll", "s", (iface,))


def add_match(rule):
    return new_method_call(_dbus, "AddMatch", "s", (rule.serialise(),))


def hello():
    return new_method_call(_dbus, "Hello")


def unwrap(reply):
    """The body of a method return; an error reply raised as its exception class."""
    if reply.header.message_type == MessageType.error:
        name = reply.header.fields.get(HeaderFields.error_name, "")
        body = reply.body
        raise error_for(name, body[0] if body and isinstance(body[0], str) else "")
    return reply.body


def variant_value(v):
    """The value of a variant as jeepney gives it: (signature, value)."""
    return v[1]


# The signals every connection listens to, from before its first Launch: the end of each launched
# command, changes of every run object's properties, and nerved's bus name changing hands (nerved
# restarted or stopped: a waiter looks at its run again). As bus rules (sender included) and as local
# filters: a message's sender is nerved's unique name, which only the bus matches to the well-known one.
# (jeepney 0.8 leaves path_namespace out of the rule it sends; sender and arg0 select the same signals.)
def _rules(with_sender):
    sender = {"sender": BUS_NAME} if with_sender else {}
    exited = MatchRule(type="signal", interface=MANAGER, member="RunExited", path=MANAGER_PATH, **sender)
    props = MatchRule(type="signal", interface=PROPERTIES, member="PropertiesChanged",
                      path_namespace=RUN_PATH_PREFIX.rstrip("/"), **sender)
    props.add_arg_condition(0, RUN_IFACE)
    owner = MatchRule(type="signal", interface="org.freedesktop.DBus", member="NameOwnerChanged",
                      path="/org/freedesktop/DBus",
                      sender="org.freedesktop.DBus" if with_sender else None)
    owner.add_arg_condition(0, BUS_NAME)
    return [exited, props, owner]


BUS_RULES = _rules(True)
LOCAL_RULES = _rules(False)


class Exit:
    """A launched command's end, from RunExited: its exit code (-1 when killed by a signal), the
    signal, and the cause nerved gave."""

    def __init__(self, exit_code, signal, cause):
        self.exit_code = exit_code
        self.signal = signal
        self.cause = cause


class RunBook:
    """What the signals said, per run id: the command's exit and the last State. Filled by the
    connection's receiver as signals arrive; `version` counts every change, so a waiter that looked
    at version V waits until it is not V any more (and looks again). Thread-safe; an asyncio
    connection sets `notify` to wake its waiters."""

    def __init__(self):
        self._lock = threading.Lock()
        self.version = 0
        self._exits = {}
        self._states = {}
        self.nerved_changes = 0   # NameOwnerChanged of nerved's name: it started, stopped or restarted
        self.notify = None

    def forget(self, run):
        with self._lock:
            self._exits.pop(run, None)
            self._states.pop(run, None)

    def get(self, run):
        """(version, nerved_changes, Exit or None, last State or None) of RUN."""
        with self._lock:
            return self.version, self.nerved_changes, self._exits.get(run), self._states.get(run)

    def on_message(self, msg):
        member = msg.header.fields.get(HeaderFields.member)
        with self._lock:
            if member == "RunExited":
                run, code, sig, cause = msg.body
                self._exits[run] = Exit(code, sig, cause)
            elif member == "PropertiesChanged":
                run = run_from_path(msg.header.fields.get(HeaderFields.path, ""))
                changed = msg.body[1]
                if run is not None and "State" in changed:
                    self._states[run] = variant_value(changed["State"])
            elif member == "NameOwnerChanged":
                self.nerved_changes += 1
            self.version += 1
        if self.notify is not None:
            self.notify()
