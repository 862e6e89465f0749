#!/usr/bin/python3
"""A minimal workflow engine that runs a command through nerve's D-Bus API (org.nerve.Lifecycle1).

It shows what an engine needs and nothing more:
  * Launch: nerved starts the command inside a fresh systemd scope, with this engine's own pipe as the
    command's stdout/stderr, and answers with the run's object path and the command's pid;
  * it streams the command's output as it comes;
  * it watches the run instead of polling: RunExited, and PropertiesChanged on the run's object;
  * --cancel-after SECONDS: it cancels the run (Cancel passes a signal to every process of the scope,
    kills what is left after the grace, and returns once the scope is empty);
  * at the end it reads the run's receipt and prints a JSON summary on its last line.
Because the engine's bus connection owns the run, nerved reaps the run if this engine dies.

Usage: engine.py [--cancel-after SECONDS] [--grace SECONDS] RUN -- CMD [ARG...]
Uses only Debian's python3-gi (Gio), with /usr/bin/python3.
"""
import argparse
import json
import os
import signal
import sys

from gi.repository import Gio, GLib

BUS_NAME = "org.nerve.Lifecycle1"
MANAGER_PATH = "/org/nerve/Lifecycle1"
MANAGER = "org.nerve.Lifecycle1.Manager"
RUN_IFACE = "org.nerve.Lifecycle1.Run"


def run_object_path(run):
    """The run's object path, as sd_bus_path_encode makes it: every character but A-Z a-z 0-9, and a
    leading digit, becomes _ and two hex digits."""
    return "/org/nerve/Lifecycle1/run/" + "".join(
        c if c.isascii() and c.isalnum() and not (i == 0 and c.isdigit()) else "_%02x" % ord(c)
        for i, c in enumerate(run))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cancel-after", type=float, default=None, help="cancel the run after this many seconds")
    ap.add_argument("--grace", type=float, default=2.0, help="seconds between the signal and SIGKILL")
    ap.add_argument("run")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("missing CMD")

    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    loop = GLib.MainLoop()
    summary = {"run": args.run, "lines": [], "exited": None, "states": [], "cancelled": None}

    # The command's stdout and stderr are this engine's pipe; stdin is /dev/null.
    read_end, write_end = os.pipe()
    devnull = os.open(os.devnull, os.O_RDONLY)
    fds = Gio.UnixFDList.new()
    stdio = [fds.append(devnull), fds.append(write_end), fds.append(write_end)]
    options = {
        "grace_usec": GLib.Variant("t", int(args.grace * 1e6)),
        "reap_on_exit": GLib.Variant("b", True),
    }
    env = [f"{k}={v}" for k, v in os.environ.items()]
    params = GLib.Variant("(sasassaha{sv})", (args.run, cmd, env, os.getcwd(), stdio, options))

    # Subscribe before launching, so no signal can be missed.
    def on_exited(_conn, _sender, _path, _iface, _signal, params):
        run, code, sig, cause = params.unpack()
        if run == args.run:
            summary["exited"] = {"exit_code": code, "signal": sig, "cause": cause}
            print(f"engine: run {run} exited: code {code} signal {sig} cause {cause}", file=sys.stderr)
            maybe_done()

    # Done when the output is closed AND the command's end was reported (they come in either order);
    # give RunExited a bounded while after EOF.
    eof = False

    def maybe_done():
        if eof and summary["exited"] is not None:
            loop.quit()

    bus.signal_subscribe(BUS_NAME, MANAGER, "RunExited", MANAGER_PATH, None, Gio.DBusSignalFlags.NONE, on_exited)

    def on_props(_conn, _sender, _path, _iface, _signal, params):
        iface, changed, _ = params.unpack()
        if iface == RUN_IFACE and "State" in changed:
            summary["states"].append(changed["State"])

    bus.signal_subscribe(BUS_NAME, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                         run_object_path(args.run), None, Gio.DBusSignalFlags.NONE, on_props)

    try:
        reply, _ = bus.call_with_unix_fd_list_sync(
            BUS_NAME, MANAGER_PATH, MANAGER, "Launch", params, GLib.VariantType("(ou)"),
            Gio.DBusCallFlags.NONE, -1, fds, None)
    except GLib.Error as e:
        print(f"engine: launch failed: {Gio.DBusError.get_remote_error(e)}: {e.message}", file=sys.stderr)
        return 125
    finally:
        # The fd list holds its own copies: close them too, or this engine itself would keep the
        # pipe open and never see EOF.
        for fd in [write_end, devnull] + list(fds.steal_fds()):
            os.close(fd)
    run_path, pid = reply.unpack()
    summary["pid"] = pid
    summary["run_path"] = run_path
    print(f"engine: run {args.run} started: pid {pid}, object {run_path}", file=sys.stderr)

    # Stream the output until EOF: EOF comes only when every process holding the pipe is gone,
    # which nerve guarantees once the run is reaped.
    buf = b""

    def on_output(fd, _cond):
        nonlocal buf, eof
        data = os.read(fd, 65536)
        if not data:
            if buf:
                summary["lines"].append(buf.decode(errors="replace"))
            eof = True
            GLib.timeout_add(10000, loop.quit)  # RunExited should follow at once; never wait forever
            maybe_done()
            return False
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace")
            summary["lines"].append(text)
            print(f"[{args.run}] {text}")
            sys.stdout.flush()
        return True

    GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, read_end, GLib.IOCondition.IN | GLib.IOCondition.HUP, on_output)

    if args.cancel_after is not None:
        def cancel():
            print(f"engine: cancelling run {args.run}", file=sys.stderr)
            res = bus.call_sync(BUS_NAME, MANAGER_PATH, MANAGER, "Cancel",
                                GLib.Variant("(sit)", (args.run, signal.SIGTERM, int(args.grace * 1e6))),
                                GLib.VariantType("(ss)"), Gio.DBusCallFlags.NONE, int((args.grace + 60) * 1000), None)
            summary["cancelled"] = res.unpack()[0]
            return False
        GLib.timeout_add(int(args.cancel_after * 1000), cancel)

    loop.run()
    os.close(read_end)

    # Once the output is closed the run may still be being reaped; Reap waits for it (and is harmless
    # if reap_on_exit already did it), then the receipt is final.
    res = bus.call_sync(BUS_NAME, MANAGER_PATH, MANAGER, "Reap", GLib.Variant("(st)", (args.run, 0)),
                        GLib.VariantType("(ss)"), Gio.DBusCallFlags.NONE, 120000, None)
    outcome, receipt = res.unpack()
    summary["outcome"] = outcome
    summary["receipt"] = json.loads(receipt)
    print(json.dumps(summary))
    return 0 if outcome in ("complete", "no_scope") else 1


if __name__ == "__main__":
    sys.exit(main())
