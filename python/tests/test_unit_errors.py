# SPDX-License-Identifier: LGPL-2.1-or-later
"""One exception class per bus error name of lib/base/errors.h, and the run object paths."""
import os
import re
import unittest

import nerve
from nerve import _protocol, errors
from nerve.receipt import Receipt

HERE = os.path.dirname(os.path.abspath(__file__))
ERRORS_H = os.path.join(HERE, "..", "..", "lib", "base", "errors.h")


class ErrorClasses(unittest.TestCase):
    def test_every_name_of_errors_h_has_its_class(self):
        with open(ERRORS_H) as f:
            names = re.findall(r'"org\.nerve\.Lifecycle1\.Error\.(\w+)"', f.read())
        self.assertTrue(names, f"no error names found in {ERRORS_H}")
        self.assertEqual(list(errors.ERROR_NAMES), names)
        for short in names:
            cls = getattr(nerve, short)
            e = errors.error_for(errors.PREFIX + short, "it quotes 'x'")
            self.assertIs(type(e), cls)
            self.assertIsInstance(e, nerve.NerveError)
            self.assertEqual(e.name, "org.nerve.Lifecycle1.Error." + short)
            self.assertEqual(e.message, "it quotes 'x'")

    def test_other_names_are_bus_errors(self):
        e = errors.error_for("org.freedesktop.DBus.Error.ServiceUnknown", "no nerved")
        self.assertIs(type(e), nerve.BusError)
        self.assertEqual(e.name, "org.freedesktop.DBus.Error.ServiceUnknown")


class Paths(unittest.TestCase):
    def test_the_examples_of_the_api_doc(self):
        for run, path in (("build.42", "build_2e42"), ("build-42", "build_2d42"),
                          ("ci:job_7", "ci_3ajob_5f7"), ("42", "_342"), ("7b.x:y-z", "_37b_2ex_3ay_2dz")):
            self.assertEqual(_protocol.run_path(run), "/org/nerve/Lifecycle1/run/" + path)
            self.assertEqual(_protocol.run_from_path(_protocol.run_path(run)), run)
        for odd in ("", "é", "a/b"):   # ids nerved refuses still make valid paths
            self.assertRegex(_protocol.run_path(odd), r"^/org/nerve/Lifecycle1/run/[A-Za-z0-9_]+$")
            self.assertEqual(_protocol.run_from_path(_protocol.run_path(odd)), odd)


class Receipts(unittest.TestCase):
    def test_a_receipt_with_usage_and_one_without(self):
        text = ('{"version":1,"run":"r","attempt":2,"unit":"nerve-r-0123456789abcdef.scope",'
                '"invocation_id":"ab","outcome":"complete","error":"","killed":true,'
                '"duration_usec":1500000,"reaped_at":"2024-01-01T00:00:00.000Z","cause":"reaped",'
                '"usage":{"cpu_usage_usec":5,"memory_peak_bytes":null,"oom_kills":0},"usage_final":true}')
        r = Receipt.from_json(text)
        self.assertEqual((r.run, r.attempt, r.outcome, r.killed, r.cause), ("r", 2, "complete", True, "reaped"))
        self.assertEqual(r.duration, 1.5)
        self.assertEqual(r.usage.cpu_usage_usec, 5)
        self.assertIsNone(r.usage.memory_peak_bytes)
        self.assertEqual(r.usage.oom_kills, 0)
        self.assertTrue(r.final and r.ok)
        old = Receipt.from_json(text.replace('"cause":"reaped"', '"cause":null')
                                    .replace('"outcome":"complete"', '"outcome":"pending_retry"'))
        self.assertIsNone(old.cause)
        self.assertFalse(old.final)
