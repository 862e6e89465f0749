# SPDX-License-Identifier: LGPL-2.1-or-later
"""The blocking form against a real nerved (through tests/harness/with-nerved.sh, inside a private
user manager): launch with a pipe, wait with the exact receipt, reap of a process tree that escaped
its process group, cancel, freeze/thaw, status, and the errors as their classes."""
import json
import os
import re
import signal
import unittest

import nerve
from nerve.receipt import Receipt

from support import (CGROUP_ROOT, ESCAPER, PYTHON, cgroup_empty, eof_within, gone, limits_offered, read_line,
                     read_markers, receipt_file, require_nerved, run_id)


class Engine(unittest.TestCase):
    def setUp(self):
        require_nerved(self)
        self.client = nerve.Client()

    def tearDown(self):
        self.client.close()

    def launch(self, *args, **kwargs):
        run = self.client.launch(*args, **kwargs)
        for f in (run.stdin, run.stdout, run.stderr):
            if f is not None:
                self.addCleanup(f.close)
        return run

    def test_launch_with_stdout_to_a_pipe_and_wait_gives_the_exact_receipt(self):
        rid = run_id("wait")
        run = self.launch(rid, ["sh", "-c", "echo out; echo err >&2; exit 3"],
                                 stdout=nerve.PIPE, stderr=nerve.STDOUT, grace=2)
        self.assertGreater(run.pid, 0)
        self.assertEqual(run.path, "/org/nerve/Lifecycle1/run/" + rid.replace("-", "_2d"))
        self.assertEqual(run.stdout.read(), b"out\nerr\n")
        receipt = run.wait(timeout=30)
        self.assertEqual((run.exit_code, run.exit_signal, run.returncode), (3, 0, 3))
        self.assertEqual(receipt.run, rid)
        self.assertEqual(receipt.attempt, 1)
        self.assertRegex(receipt.unit, r"^nerve-" + re.escape(rid) + r"-[0-9a-f]{16}\.scope$")
        self.assertRegex(receipt.invocation_id, r"^[0-9a-f]{32}$")
        self.assertEqual(receipt.cause, "exited")
        self.assertIn(receipt.outcome, ("complete", "no_scope"))
        self.assertFalse(receipt.killed)
        self.assertTrue(receipt.ok and receipt.final)
        self.assertRegex(receipt.reaped_at, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
        # Exactly what nerved wrote, and what status says.
        self.assertEqual(receipt, Receipt.from_json(receipt_file(rid)))
        st = self.client.status(rid)
        self.assertEqual(st.state, "reaped")
        self.assertEqual(st.receipt, receipt)
        self.assertEqual(st.leader_pid, run.pid)
        self.assertEqual(json.loads(receipt_file(rid))["outcome"], receipt.outcome)

    def test_stdin_from_a_pipe_and_the_environment_and_folder_given(self):
        rid = run_id("stdin")
        run = self.launch(rid, ["sh", "-c", 'cat; echo "$GREETING $PWD"'], stdin=nerve.PIPE,
                          stdout=nerve.PIPE, env={"GREETING": "hello", "PATH": "/usr/bin:/bin"}, cwd="/tmp")
        run.stdin.write(b"from stdin\n")
        run.stdin.close()
        self.assertEqual(run.stdout.read(), b"from stdin\nhello /tmp\n")
        self.assertEqual(run.wait(timeout=30).cause, "exited")
        self.assertEqual(run.returncode, 0)

    def test_reap_ends_a_process_tree_that_escaped_with_setsid_and_ignores_term(self):
        rid = run_id("escaper")
        run = self.launch(rid, [PYTHON, "-c", ESCAPER], stdout=nerve.PIPE, grace=0.5)
        pids = read_markers(run.stdout, 2)   # both started: the markers prove it
        self.assertEqual(pids["leader"], run.pid)
        with open(f"/proc/{pids['escaper']}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        self.assertNotEqual(int(fields[3]), run.pid, "the escaper is in its own session")
        receipt = run.reap()
        self.assertEqual(receipt.outcome, "complete")
        self.assertEqual(receipt.cause, "reaped")
        self.assertTrue(receipt.killed, "the TERM ignorer can only have gone by SIGKILL")
        self.assertTrue(gone(pids["escaper"]) and gone(pids["leader"]))
        self.assertTrue(eof_within(run.stdout), "a holder of the pipe outlived the reap")
        self.assertTrue(cgroup_empty(self.client.status(rid).cgroup))

    def test_cancel_passes_the_signal_and_ends_the_run(self):
        rid = run_id("cancel")
        script = ("import signal, sys\n"
                  "def on_int(*_):\n    print('got INT', flush=True); sys.exit(7)\n"
                  "signal.signal(signal.SIGINT, on_int)\nprint('ready', flush=True)\n"
                  "while True: signal.pause()\n")
        run = self.launch(rid, [PYTHON, "-c", script], stdout=nerve.PIPE, grace=5)
        self.assertEqual(read_line(run.stdout), "ready\n")
        receipt = run.cancel(signal.SIGINT)
        self.assertEqual(receipt.cause, "cancelled")
        self.assertEqual(receipt.outcome, "complete")
        self.assertFalse(receipt.killed, "it ended on SIGINT, before the grace")
        self.assertEqual(run.stdout.read(), b"got INT\n")
        self.assertEqual(run.wait(timeout=10), receipt)
        self.assertEqual((run.exit_code, run.exit_signal), (7, 0))

    def test_freeze_and_thaw(self):
        rid = run_id("freeze")
        run = self.launch(rid, ["sleep", "300"], grace=1)
        self.assertFalse(run.frozen)
        run.freeze()
        self.assertTrue(run.frozen)
        cgroup = self.client.status(rid).cgroup
        with open(os.path.join(CGROUP_ROOT, cgroup.lstrip("/"), "cgroup.events")) as f:
            self.assertIn("frozen 1", f.read())
        run.thaw()
        self.assertFalse(run.frozen)
        self.assertEqual(run.reap().outcome, "complete")

    def test_status_of_a_running_run_and_after_its_reap(self):
        rid = run_id("status")
        # The cgroup backend refuses a limit whose controller its subtree lacks (by name): there the
        # record keeps no property, and the refusal is the C++ suite's RunControlsEnforced.
        props = {"TasksMax": 32} if limits_offered("pids") else {}
        run = self.launch(rid, ["sleep", "300"], grace=1, timeout=600, properties=props)
        st = self.client.status(rid)
        self.assertEqual((st.run, st.state, st.attempt, st.leader_pid), (rid, "running", 1, run.pid))
        self.assertTrue(st.running)
        self.assertIsNone(st.receipt)
        self.assertTrue(st.live.populated)
        self.assertIn(run.pid, st.live.pids)
        self.assertEqual(st.record["timeout_usec"], 600_000_000)
        self.assertEqual(st.record["properties"], ["TasksMax=32"] if props else [])
        # The run's processes are in the run/ leaf of its scope (the scope's holder is in hold/).
        with open(f"/proc/{run.pid}/cgroup") as f:
            self.assertIn("0::" + st.cgroup + "/run\n", f.read())
        receipt = self.client.reap(rid)
        after = self.client.status(rid)
        self.assertEqual(after.state, "reaped")
        self.assertFalse(after.running)
        self.assertEqual(after.receipt, receipt)
        self.assertEqual(self.client.attach(rid).pid, run.pid)

    def test_errors_are_their_classes(self):
        with self.assertRaises(nerve.InvalidRunId) as e:
            self.client.status("bad id!")
        self.assertEqual(e.exception.name, "org.nerve.Lifecycle1.Error.InvalidRunId")
        self.assertIn("'bad id!'", e.exception.message)
        with self.assertRaises(nerve.NoSuchRun):
            self.client.status(run_id("never"))
        with self.assertRaises(nerve.NoSuchRun):
            self.client.reap(run_id("never"))
        with self.assertRaises(nerve.ExecFailed):
            self.client.launch(run_id("notfound"), ["/nonexistent/command"])
        with self.assertRaises(nerve.InvalidProperty) as e:
            self.client.launch(run_id("prop"), ["true"], properties={"NoSuchKey": "1"})
        self.assertIn("NoSuchKey", e.exception.message)
        rid = run_id("finished")
        self.client.launch(rid, ["true"]).wait(timeout=30)
        with self.assertRaises(nerve.RunFinished):
            self.client.launch(rid, ["true"])
        self.client.forget(rid)
        self.client.launch(rid, ["true"]).wait(timeout=30)   # its id is free again
        for bad in (0, 3601):
            with self.assertRaises(ValueError):
                self.client.launch(run_id("grace"), ["true"], grace=bad)

    def test_the_module_functions_share_one_connection(self):
        rid = run_id("module")
        run = nerve.launch(rid, ["sh", "-c", "exit 0"], stdout=nerve.DEVNULL)
        self.assertIs(run.client, nerve.default_client())
        self.assertEqual(run.wait(timeout=30).cause, "exited")
        self.assertEqual(nerve.status(rid).state, "reaped")
        self.assertEqual(nerve.reap(rid), run.receipt)


if __name__ == "__main__":
    unittest.main()
