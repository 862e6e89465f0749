# SPDX-License-Identifier: LGPL-2.1-or-later
"""A D-Bus connection for asyncio that passes file descriptors (jeepney's own asyncio connection does
not, and Launch sends three): jeepney's messages and parser over a non-blocking Unix socket, read
when the loop says it is readable (add_reader), written with sendmsg (SCM_RIGHTS), the rest of a
partial write when it is writable. Replies go to the futures of their calls, signals to the
handlers of the local rules that match them. Everything runs on the loop's thread.
"""
import array
import asyncio
import socket
from collections import deque
from itertools import count

from jeepney import HeaderFields, Parser
from jeepney.bus import get_bus
from jeepney.fds import FileDescriptor, fds_buf_size
from jeepney.io.blocking import prep_socket

from . import _protocol as proto


class AsyncConnection:
    def __init__(self, loop, sock):
        self._loop, self._sock = loop, sock
        sock.setblocking(False)
        self._parser = Parser()
        self._serials = count(1)
        self._replies = {}
        self._handlers = []
        self._out = deque()          # (bytes, fds) not yet sent
        self._closed = None          # the exception every later call gets, once the bus is gone
        self.unique_name = None
        loop.add_reader(sock.fileno(), self._readable)

    @classmethod
    async def open(cls, bus="SESSION", auth_timeout=proto.CONNECT_TIMEOUT):
        loop = asyncio.get_running_loop()
        addr = get_bus(bus)
        # The authentication is a few lines on a local socket: done off the loop all the same.
        sock = await loop.run_in_executor(None, prep_socket, addr, True, auth_timeout)
        conn = cls(loop, sock)
        (conn.unique_name,) = await conn.call(proto.hello(), 10)
        return conn

    def add_handler(self, rule, handler):
        self._handlers.append((rule, handler))

    async def call(self, msg, timeout):
        """Send MSG; its reply's body (an error reply raised as its exception)."""
        if self._closed is not None:
            raise self._closed
        serial = next(self._serials)
        fut = self._loop.create_future()
        self._replies[serial] = fut
        try:
            fds = array.array("i")
            data = msg.serialise(serial=serial, fds=fds)
            self._send(data, fds)
            reply = await asyncio.wait_for(fut, timeout)
        finally:
            self._replies.pop(serial, None)
        return proto.unwrap(reply)

    def _send(self, data, fds):
        self._out.append((data, fds))
        if len(self._out) == 1:
            self._writable()

    def _writable(self):
        while self._out:
            data, fds = self._out[0]
            anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)] if fds else []
            try:
                sent = self._sock.sendmsg([data], anc)
            except BlockingIOError:
                self._loop.add_writer(self._sock.fileno(), self._writable)
                return
            except OSError as e:
                self._fail(e)
                return
            if sent < len(data):
                self._out[0] = (data[sent:], None)   # the fds went with the first byte
            else:
                self._out.popleft()
        self._loop.remove_writer(self._sock.fileno())

    def _readable(self):
        while True:
            try:
                data, anc, _flags, _ = self._sock.recvmsg(self._parser.bytes_desired(), fds_buf_size())
            except BlockingIOError:
                return
            except OSError as e:
                self._fail(e)
                return
            if not data:
                self._fail(ConnectionResetError("the bus closed the connection"))
                return
            self._parser.add_data(data, FileDescriptor.from_ancdata(anc))
            while (msg := self._parser.get_next_message()) is not None:
                self._dispatch(msg)

    def _dispatch(self, msg):
        fut = self._replies.get(msg.header.fields.get(HeaderFields.reply_serial, -1))
        if fut is not None:
            if not fut.done():
                fut.set_result(msg)
            return
        for rule, handler in self._handlers:
            if rule.matches(msg):
                handler(msg)

    def _fail(self, exc):
        if self._closed is None:
            self._closed = exc
        for fut in self._replies.values():
            if not fut.done():
                fut.set_exception(exc)
        self.close()

    def close(self):
        if self._sock.fileno() >= 0:
            self._loop.remove_reader(self._sock.fileno())
            self._loop.remove_writer(self._sock.fileno())
            self._sock.close()
        if self._closed is None:
            self._closed = ConnectionError("the connection is closed")
