# SPDX-License-Identifier: LGPL-2.1-or-later
"""The asyncio form, for engines that are event loops: the same calls as the blocking form, awaited.

    run = await nerve.aio.launch("build-42", ["make", "-j8"], stdout=nerve.PIPE)
    async for line in run.stdout: ...
    receipt = await run.wait()

A Client is one connection on the running loop (nerve.aio._aio_connection: jeepney's messages over a
non-blocking socket that passes fds); the module functions use one per loop, opened on first use.
The runs it launches are owned by that connection: closed, or this process dead, nerved reaps them
(unless keep=True). With PIPE, ``stdout``/``stderr`` are asyncio.StreamReader and ``stdin`` an
asyncio.StreamWriter.
"""
import asyncio
import os
import time
import weakref

from . import _ops
from . import _protocol as proto
from . import options
from ._aio_connection import AsyncConnection
from .run_handle import RunHandle


class Client:
    """One bus connection on the running loop; ``await Client.connect()`` opens it."""

    def __init__(self, conn):
        self._conn = conn
        self.book = proto.RunBook()
        self._waiters = set()
        self.book.notify = self._wake
        for rule in proto.LOCAL_RULES:
            conn.add_handler(rule, self.book.on_message)

    @classmethod
    async def connect(cls, bus="SESSION"):
        client = cls(await AsyncConnection.open(bus))
        for rule in proto.BUS_RULES:
            await client._perform(proto.Call(proto.add_match(rule), _ops.CALL_TIMEOUT))
        return client

    @property
    def unique_name(self):
        return self._conn.unique_name

    def close(self):
        """Close the connection: nerved reaps every run it launched without keep."""
        self._conn.close()

    def _wake(self):
        for fut in self._waiters:
            if not fut.done():
                fut.set_result(None)
        self._waiters.clear()

    async def _perform(self, request):
        if isinstance(request, proto.Call):
            return await self._conn.call(request.msg, request.timeout)
        if self.book.version != request.version:
            return None
        fut = asyncio.get_running_loop().create_future()
        self._waiters.add(fut)
        left = None if request.deadline is None else max(0.0, request.deadline - time.monotonic())
        try:
            await asyncio.wait_for(fut, left)
        except asyncio.TimeoutError:
            raise TimeoutError("the run did not end in time") from None
        finally:
            self._waiters.discard(fut)
        return None

    def _drive(self, op):
        return _ops.adrive(op, self._perform)

    async def launch(self, run, argv, *, env=None, cwd=None, stdin=None, stdout=None, stderr=None,
                     grace=None, timeout=None, properties=None, keep=False):
        """As nerve.launch, awaited; PIPE ends are asyncio streams."""
        path, pid, grace_usec, ours = await self._drive(_ops.launch(
            self.book, run, argv, env, cwd, stdin, stdout, stderr, grace, timeout, properties, keep))
        streams = [await _stream(n, fd) for n, fd in enumerate(ours)]
        return Run(self, run, path, pid, grace_usec, *streams)

    async def attach(self, run):
        path, pid = await self._drive(_ops.attach(run))
        return Run(self, run, path, pid, 0, launched=False)

    async def status(self, run):
        return await self._drive(_ops.status(run))

    async def reap(self, run, grace=None):
        return await self._drive(_ops.reap(run, grace))

    async def cancel(self, run, signal, grace=None):
        return await self._drive(_ops.reap(run, grace, signal))

    async def freeze(self, run):
        await self._drive(_ops.simple(proto.freeze, run))

    async def thaw(self, run):
        await self._drive(_ops.simple(proto.thaw, run))

    async def forget(self, run):
        await self._drive(_ops.simple(proto.forget, run))


async def _stream(n, fd):
    if fd is None:
        return None
    loop = asyncio.get_running_loop()
    if n == 0:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                           os.fdopen(fd, "wb"))
        return asyncio.StreamWriter(transport, protocol, None, loop)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb"))
    return reader


class Run(RunHandle):
    """A run of an asyncio Client; its methods are awaited (see nerve.client.Run)."""

    async def wait(self, timeout=None):
        t = options.wait_seconds(timeout)
        deadline = None if t is None else time.monotonic() + t
        exit_, receipt = await self.client._drive(_ops.wait(self.client.book, self.run, deadline,
                                                                       self.launched))
        return self._ended(exit_, receipt)

    async def reap(self, grace=None):
        return self._ended(None, await self.client.reap(self.run, grace))

    async def cancel(self, signal, grace=None):
        return self._ended(None, await self.client.cancel(self.run, signal, grace))

    async def freeze(self):
        await self.client.freeze(self.run)

    async def thaw(self):
        await self.client.thaw(self.run)

    async def frozen(self):
        return await self.client._drive(_ops.frozen(self.run))

    async def status(self):
        return await self.client.status(self.run)


_clients = weakref.WeakKeyDictionary()


async def default_client():
    """The running loop's shared Client, opened on first use."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        mine = await Client.connect()
        client = _clients.setdefault(loop, mine)
        if client is not mine:   # another task of this loop connected meanwhile
            mine.close()
    return client


async def launch(run, argv, **kwargs):
    return await (await default_client()).launch(run, argv, **kwargs)


async def attach(run):
    return await (await default_client()).attach(run)


async def status(run):
    return await (await default_client()).status(run)


async def reap(run, grace=None):
    return await (await default_client()).reap(run, grace)


async def cancel(run, signal, grace=None):
    return await (await default_client()).cancel(run, signal, grace)


async def forget(run):
    await (await default_client()).forget(run)
