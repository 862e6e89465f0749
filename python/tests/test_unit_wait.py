# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run.wait's logic (nerve._ops.wait) against scripted answers, no bus: it ends on RunExited, on a
final State, or on what the run object says once nerved changed hands, and then asks for the final
receipt with a Reap bounded by the run's grace."""
import json
import unittest

from jeepney import DBusAddress, HeaderFields, new_signal

from nerve import _ops, _protocol as proto

RECEIPT = json.dumps({"version": 1, "run": "r", "attempt": 1, "unit": "nerve-r-0000000000000000.scope",
                      "invocation_id": "", "outcome": "no_scope", "error": "", "killed": False,
                      "duration_usec": 1, "reaped_at": "", "cause": "exited", "usage": None,
                      "usage_final": False})


def signal_msg(path, iface, member, sig, body):
    return new_signal(DBusAddress(path, interface=iface), member, sig, body)


def run_exited(run, code, sig, cause):
    return signal_msg(proto.MANAGER_PATH, proto.MANAGER, "RunExited", "siis", (run, code, sig, cause))


def state_changed(run, state):
    return signal_msg(proto.run_path(run), proto.PROPERTIES, "PropertiesChanged", "sa{sv}as",
                      (proto.RUN_IFACE, {"State": ("s", state)}, []))


class Script:
    """PERFORM for _ops.drive: answers each request from a list of (member, answer); a Wait request
    takes the next signal message and gives it to the book."""

    def __init__(self, book, steps):
        self.book, self.steps, self.asked = book, list(steps), []

    def __call__(self, request):
        expected, answer = self.steps.pop(0)
        if isinstance(request, _ops.Wait):
            self.asked.append(("Wait", None))
            assert expected == "Wait", f"waited, but {expected} was next"
            self.book.on_message(answer)
            return None
        member = request.msg.header.fields[HeaderFields.member]
        self.asked.append((member, request.timeout))
        assert member == expected, f"called {member}, but {expected} was next"
        return answer


class WaitLogic(unittest.TestCase):
    def drive(self, steps, prefill=()):
        book = proto.RunBook()
        for msg in prefill:
            book.on_message(msg)
        script = Script(book, steps)
        exit_, receipt = _ops.drive(_ops.wait(book, "r", None), script)
        self.assertEqual(script.steps, [], "not every scripted answer was asked for")
        return exit_, receipt, script.asked

    def test_a_run_exited_already_in_the_book_goes_straight_to_the_reap(self):
        exit_, receipt, asked = self.drive(
            [("Get", (("t", 2_000_000),)), ("Reap", ("no_scope", RECEIPT))],
            prefill=[run_exited("r", 3, 0, "exited"), run_exited("other", 1, 0, "exited")])
        self.assertEqual((exit_.exit_code, exit_.signal, exit_.cause), (3, 0, "exited"))
        self.assertEqual(receipt.outcome, "no_scope")
        self.assertEqual(asked[-1], ("Reap", 2.0 + _ops.REAP_MARGIN), "the run's grace plus a minute")

    def test_it_looks_at_the_run_object_then_waits_for_the_signal(self):
        props = ({"State": ("s", "running"), "ExitStatus": ("i", -1)},)
        exit_, _receipt, asked = self.drive([
            ("GetAll", props),
            ("Wait", state_changed("other", "reaped")),   # another run's news: wait on
            ("Wait", run_exited("r", -1, 9, "cancelled")),
            ("Get", (("t", 0),)), ("Reap", ("complete", RECEIPT))])
        self.assertEqual((exit_.exit_code, exit_.signal), (-1, 9))
        self.assertEqual([a[0] for a in asked], ["GetAll", "Wait", "Wait", "Get", "Reap"])
        self.assertEqual(asked[-1][1], _ops.MAX_GRACE_USEC / 1e6 + _ops.REAP_MARGIN,
                         "no grace known: the longest nerved allows")

    def test_a_final_state_ends_the_wait_and_the_exit_status_gives_the_exit(self):
        props = ({"State": ("s", "reaping"), "ExitStatus": ("i", -1)},)
        exit_, _receipt, asked = self.drive([
            ("GetAll", props), ("Get", (("t", 1_000_000),)), ("Reap", ("complete", RECEIPT)),
            ("Get", (("i", 128 + 15),))])
        self.assertEqual((exit_.exit_code, exit_.signal), (-1, 15))


if __name__ == "__main__":
    unittest.main()
