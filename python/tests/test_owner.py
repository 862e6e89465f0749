# SPDX-License-Identifier: LGPL-2.1-or-later
"""A run ends with the Python engine that launched it, even when that process is SIGKILLed: its bus
connection owns the run, and nerved reaps it when the connection goes (cause owner_gone)."""
import os
import signal
import subprocess
import sys
import unittest

import nerve

from support import ESCAPER, PYTHON, cgroup_empty, gone, read_markers, require_nerved, run_id

HERE = os.path.dirname(os.path.abspath(__file__))

ENGINE = r"""
import sys
import nerve
run = nerve.launch(sys.argv[1], [sys.executable, "-c", sys.argv[2]], stdout=nerve.PIPE, grace=0.5)
for _ in range(2):
    sys.stdout.write(run.stdout.readline().decode())
sys.stdout.flush()
sys.stdin.read()   # until this process is killed
"""


class OwnerGone(unittest.TestCase):
    def setUp(self):
        require_nerved(self)

    def test_a_sigkilled_engine_takes_its_run_with_it(self):
        rid = run_id("owner")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        engine = subprocess.Popen([PYTHON, "-c", ENGINE, rid, ESCAPER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=env)
        try:
            pids = read_markers(engine.stdout, 2, timeout=20)
        finally:
            engine.kill()               # SIGKILL: no handler, no cleanup, only the socket closes
            engine.wait()
            engine.stdin.close()
            engine.stdout.close()
        self.assertEqual(engine.returncode, -signal.SIGKILL)
        run = nerve.attach(rid)
        self.assertEqual(run.pid, pids["leader"])
        receipt = run.wait(timeout=30)
        self.assertEqual(receipt.cause, "owner_gone")
        self.assertEqual(receipt.outcome, "complete")
        self.assertTrue(receipt.killed, "the escaper ignores TERM")
        self.assertTrue(gone(pids["leader"]), "the command outlived its engine")
        self.assertTrue(gone(pids["escaper"]), "the escaper outlived its engine")
        st = nerve.status(rid)
        self.assertEqual(st.state, "reaped")
        self.assertTrue(cgroup_empty(st.cgroup))
        self.assertEqual(st.record["owner"]["kind"], "bus")


if __name__ == "__main__":
    unittest.main()
