#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A minimal workflow engine that runs a command through nerve, with the Python package nerve.

It shows what an engine needs and nothing more:
  * nerve.launch: nerved starts the command inside a fresh systemd scope, with this engine's own pipe
    as the command's stdout/stderr, and returns the Run (its pid, its object path);
  * it streams the command's output as it comes;
  * --cancel-after SECONDS: it cancels the run (every process of the scope gets the signal, what is
    left after the grace is killed, and the call returns once the scope is empty);
  * run.wait(): the command's end and the run's final receipt; a JSON summary on the last line.
Because the engine's bus connection owns the run, nerved reaps the run if this engine dies.

Usage: engine.py [--cancel-after SECONDS] [--grace SECONDS] RUN -- CMD [ARG...]
Uses Debian's /usr/bin/python3 with python3-jeepney, and the package nerve: installed
(python3-nerve), or from this source tree's python/ folder.
"""
import argparse
import dataclasses
import json
import os
import select
import signal
import sys
import time

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
if os.path.isdir(os.path.join(here, "nerve")):
    sys.path.insert(0, here)
import nerve  # noqa: E402


def stream(run, name, summary, cancel_at, grace):
    """Print each line of the run's output until EOF (every holder of the pipe is gone, which the
    reap guarantees); cancel the run at CANCEL_AT (time.monotonic()) if it is still going."""
    buf = b""
    while True:
        left = None if cancel_at is None else max(0.0, cancel_at - time.monotonic())
        ready, _, _ = select.select([run.stdout], [], [], left)
        if not ready:
            print(f"engine: cancelling run {name}", file=sys.stderr)
            summary["cancelled"] = run.cancel(signal.SIGTERM, grace=grace).outcome
            cancel_at = None
            continue
        data = os.read(run.stdout.fileno(), 65536)
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace")
            summary["lines"].append(text)
            print(f"[{name}] {text}", flush=True)
    if buf:
        summary["lines"].append(buf.decode(errors="replace"))


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

    summary = {"run": args.run, "lines": [], "exited": None, "cancelled": None}
    try:
        run = nerve.launch(args.run, cmd, stdin=nerve.DEVNULL, stdout=nerve.PIPE, stderr=nerve.STDOUT,
                           grace=args.grace)
    except nerve.NerveError as e:
        print(f"engine: launch failed: {e.name}: {e.message}", file=sys.stderr)
        return 125
    summary["pid"], summary["run_path"] = run.pid, run.path
    print(f"engine: run {args.run} started: pid {run.pid}, object {run.path}", file=sys.stderr)

    cancel_at = None if args.cancel_after is None else time.monotonic() + args.cancel_after
    stream(run, args.run, summary, cancel_at, args.grace)
    run.stdout.close()

    receipt = run.wait()
    if run.exit_code is not None:
        summary["exited"] = {"exit_code": run.exit_code, "signal": run.exit_signal,
                             "cause": run.exit_cause}
        print(f"engine: run {args.run} exited: code {run.exit_code} signal {run.exit_signal} "
              f"cause {run.exit_cause}", file=sys.stderr)
    summary["outcome"] = receipt.outcome
    summary["receipt"] = dataclasses.asdict(receipt)
    print(json.dumps(summary))
    return 0 if receipt.ok else 1


if __name__ == "__main__":
    sys.exit(main())
