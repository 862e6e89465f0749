# SPDX-License-Identifier: LGPL-2.1-or-later
"""The asyncio form against a real nerved: launch with a pipe read as a stream, wait, cancel, status
and errors, on one event loop."""
import asyncio
import signal
import unittest

import nerve
import nerve.aio

from support import ESCAPER, PYTHON, gone, require_nerved, run_id


class Aio(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        require_nerved(self)
        self.client = await nerve.aio.Client.connect()

    async def asyncTearDown(self):
        self.client.close()

    async def test_launch_read_the_stream_and_wait(self):
        rid = run_id("aio-wait")
        run = await self.client.launch(rid, ["sh", "-c", "echo hello; exit 4"], stdout=nerve.PIPE)
        self.assertEqual(await asyncio.wait_for(run.stdout.read(), 10), b"hello\n")
        receipt = await run.wait(timeout=30)
        self.assertEqual((run.exit_code, run.returncode), (4, 4))
        self.assertEqual(receipt.cause, "exited")
        self.assertEqual(receipt.run, rid)
        self.assertEqual((await self.client.status(rid)).receipt, receipt)

    async def test_stdin_and_stdout_as_streams(self):
        rid = run_id("aio-stdin")
        run = await self.client.launch(rid, ["cat"], stdin=nerve.PIPE, stdout=nerve.PIPE)
        run.stdin.write(b"through cat\n")
        await run.stdin.drain()
        run.stdin.close()
        self.assertEqual(await asyncio.wait_for(run.stdout.read(), 10), b"through cat\n")
        self.assertEqual((await run.wait(timeout=30)).cause, "exited")

    async def test_two_runs_at_once_and_a_cancel_of_an_escaper(self):
        quick, tree = run_id("aio-quick"), run_id("aio-tree")
        a = await self.client.launch(quick, ["sh", "-c", "exit 0"])
        b = await self.client.launch(tree, [PYTHON, "-c", ESCAPER], stdout=nerve.PIPE, grace=0.5)
        pids = {}
        for _ in range(2):
            name, pid = (await asyncio.wait_for(b.stdout.readline(), 10)).decode().split()
            pids[name] = int(pid)
        ra, rb = await asyncio.gather(a.wait(timeout=30), b.cancel(signal.SIGTERM))
        self.assertEqual(ra.cause, "exited")
        self.assertEqual((rb.cause, rb.outcome, rb.killed), ("cancelled", "complete", True))
        self.assertTrue(gone(pids["escaper"]))
        self.assertEqual(await asyncio.wait_for(b.stdout.read(), 10), b"")

    async def test_freeze_thaw_and_errors(self):
        rid = run_id("aio-freeze")
        run = await self.client.launch(rid, ["sleep", "300"], grace=1)
        await run.freeze()
        self.assertTrue(await run.frozen())
        await run.thaw()
        self.assertFalse(await run.frozen())
        self.assertEqual((await run.reap()).outcome, "complete")
        with self.assertRaises(nerve.NoSuchRun):
            await self.client.status(run_id("never"))
        with self.assertRaises(nerve.InvalidRunId):
            await self.client.reap("")
        with self.assertRaises(ValueError):
            await self.client.launch(run_id("bad"), ["true"], timeout=-1)

    async def test_the_module_functions(self):
        rid = run_id("aio-module")
        run = await nerve.aio.launch(rid, ["true"])
        self.assertEqual((await run.wait(timeout=30)).cause, "exited")
        self.assertEqual((await nerve.aio.status(rid)).state, "reaped")


if __name__ == "__main__":
    unittest.main()
