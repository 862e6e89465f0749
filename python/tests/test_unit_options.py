# SPDX-License-Identifier: LGPL-2.1-or-later
"""The caller's values are checked once, before anything is sent: no bus needed."""
import math
import signal
import unittest

from nerve import options


class Durations(unittest.TestCase):
    def test_grace_in_seconds_becomes_microseconds(self):
        self.assertEqual(options.grace_usec(5), 5_000_000)
        self.assertEqual(options.grace_usec(0.25), 250_000)
        self.assertEqual(options.grace_usec(3600), 3_600_000_000)
        self.assertEqual(options.grace_usec(None), 0)

    def test_a_grace_nerved_would_refuse_or_read_as_the_default_is_refused_quoting_it(self):
        for bad in (0, -1, 3600.5, 1e-9):
            with self.assertRaises(ValueError) as e:
                options.grace_usec(bad)
            self.assertIn(repr(bad), str(e.exception))
        for bad in (math.nan, math.inf):
            with self.assertRaises(ValueError):
                options.grace_usec(bad)
        for bad in (True, "5", None.__class__):
            with self.assertRaises(TypeError):
                options.grace_usec(bad)

    def test_timeouts(self):
        self.assertEqual(options.timeout_usec(1.5), 1_500_000)
        self.assertIsNone(options.timeout_usec(None))
        for bad in (0, -3, 2 ** 63, math.inf):
            with self.assertRaises(ValueError) as e:
                options.timeout_usec(bad)
            self.assertIn(repr(bad), str(e.exception))

    def test_signals(self):
        self.assertEqual(options.signal_number(signal.SIGINT), 2)
        for bad in (0, 65, -1):
            with self.assertRaises(ValueError):
                options.signal_number(bad)
        with self.assertRaises(TypeError):
            options.signal_number("INT")


class Launch(unittest.TestCase):
    def test_options_have_the_bus_types(self):
        opts = options.launch_options(grace=2, timeout=60, properties_={"MemoryMax": 1 << 30,
                                                                        "CPUQuota": "50%",
                                                                        "RuntimeMaxSec": 90},
                                      keep=True)
        self.assertEqual(opts["grace_usec"], ("t", 2_000_000))
        self.assertEqual(opts["timeout_usec"], ("t", 60_000_000))
        self.assertEqual(opts["keep"], ("b", True))
        self.assertEqual(opts["reap_on_exit"], ("b", True))
        self.assertEqual(opts["properties"], ("a(ss)", [("MemoryMax", str(1 << 30)),
                                                        ("CPUQuota", "50%"),
                                                        ("RuntimeMaxSec", "90000000us")]))
        self.assertNotIn("grace_usec", options.launch_options())

    def test_bad_values_are_refused(self):
        with self.assertRaises(ValueError):
            options.properties({"MemoryMax": -1})
        with self.assertRaises(ValueError):
            options.properties({"RuntimeMaxSec": 0})
        with self.assertRaises(TypeError):
            options.argv("make -j8")
        with self.assertRaises(ValueError):
            options.argv([])
        with self.assertRaises(ValueError):
            options.environment({"A=B": "c"})
        with self.assertRaises(TypeError):
            options.launch_options(keep=1)
