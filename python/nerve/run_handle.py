# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a run handle holds in both forms (nerve.client.Run, nerve.aio.Run)."""


class RunHandle:
    def __init__(self, client, run, path, pid, grace_usec, stdin=None, stdout=None, stderr=None,
                 launched=True):
        self.client = client
        self.launched = launched   # by this client (else attached): its RunExited comes to it
        self.run = run
        self.path = path
        self.pid = pid
        self.grace_usec = grace_usec
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.exit_code = None      # from RunExited: the exit code, -1 when a signal killed it
        self.exit_signal = None    # the signal that killed it, 0 when it exited
        self.exit_cause = None     # why the run ends, as RunExited said ("" when read from ExitStatus)
        self.receipt = None        # the last receipt returned for this run

    @property
    def returncode(self):
        """As subprocess: the exit code, or -SIGNAL; None until the end was seen."""
        if self.exit_code is None:
            return None
        return -self.exit_signal if self.exit_signal else self.exit_code

    def _ended(self, exit_, receipt):
        if exit_ is None:
            exit_ = self.client.book.get(self.run)[2]   # a RunExited that came meanwhile
        if exit_ is not None:
            self.exit_code, self.exit_signal, self.exit_cause = exit_.exit_code, exit_.signal, exit_.cause
        self.receipt = receipt
        return receipt

    def __repr__(self):
        return f"<nerve run {self.run!r} pid {self.pid}>"
