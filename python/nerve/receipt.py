# SPDX-License-Identifier: LGPL-2.1-or-later
"""What nerve tells about a run: its receipt (receipt.json), the usage in it, and its status (GetRun).

The fields are those of docs/dbus-api.md ("receipt.json and outcomes", "GetRun"), with the same
names; times that nerved gives in microseconds are kept as such (``duration_usec``) and also given in
seconds where a caller computes with them (``Receipt.duration``).
"""
import json
from dataclasses import dataclass, field, fields
from typing import List, Optional

# Outcomes after which nothing more happens to the run (docs/dbus-api.md, Outcomes).
FINAL_OUTCOMES = ("complete", "no_scope", "refused")
# States of a run whose reap has begun: from then on it is final (docs/dbus-api.md, State).
FINAL_STATES = ("reaping", "reaped")


@dataclass(frozen=True)
class Usage:
    """What a run used, read from its cgroup before it went. None: this host's kernel does not offer
    the figure (its controller is not enabled in the run's cgroup), never 0."""
    cpu_usage_usec: Optional[int] = None
    cpu_user_usec: Optional[int] = None
    cpu_system_usec: Optional[int] = None
    memory_peak_bytes: Optional[int] = None
    tasks_peak: Optional[int] = None
    io_read_bytes: Optional[int] = None
    io_write_bytes: Optional[int] = None
    oom_kills: Optional[int] = None

    @classmethod
    def from_json(cls, obj):
        if obj is None:
            return None
        return cls(**{f.name: obj.get(f.name) for f in fields(cls)})


@dataclass(frozen=True)
class Receipt:
    """The receipt of a reap, as nerved wrote it (receipt.json)."""
    run: str
    attempt: int
    unit: str
    invocation_id: str
    outcome: str          # complete, no_scope, refused or pending_retry
    error: str            # "" for complete; otherwise the reason
    killed: bool          # processes were left after the grace and were SIGKILLed
    duration_usec: int
    reaped_at: str        # RFC 3339, UTC
    cause: Optional[str]  # exited, cancelled, timeout, oom, owner_gone, relaunched, reconciled, reaped
    usage: Optional[Usage]
    usage_final: bool     # usage was read after the cgroup had emptied (exact)
    version: int = 1

    @property
    def final(self):
        """True unless the outcome is pending_retry (nerved then retries by itself)."""
        return self.outcome in FINAL_OUTCOMES

    @property
    def ok(self):
        """True for complete and no_scope: nothing of the run is left."""
        return self.outcome in ("complete", "no_scope")

    @property
    def duration(self):
        """How long the reap took, in seconds."""
        return self.duration_usec / 1e6

    @classmethod
    def from_json(cls, obj):
        if isinstance(obj, (str, bytes)):
            obj = json.loads(obj)
        if obj is None:
            return None
        return cls(
            run=obj["run"], attempt=obj["attempt"], unit=obj["unit"],
            invocation_id=obj.get("invocation_id", ""), outcome=obj["outcome"],
            error=obj.get("error", ""), killed=obj.get("killed", False),
            duration_usec=obj.get("duration_usec", 0), reaped_at=obj.get("reaped_at", ""),
            cause=obj.get("cause"), usage=Usage.from_json(obj.get("usage")),
            usage_final=obj.get("usage_final", False), version=obj.get("version", 1))


@dataclass(frozen=True)
class Live:
    """The run's unit and cgroup now (GetRun's "live")."""
    known: bool
    active_state: str
    ours: bool
    populated: bool
    pids: List[int]
    source: str
    unknown: bool = False
    error: str = ""

    @classmethod
    def from_json(cls, obj):
        return cls(known=obj.get("known", False), active_state=obj.get("active_state", ""),
                   ours=obj.get("ours", False), populated=obj.get("populated", False),
                   pids=list(obj.get("pids", [])), source=obj.get("source", "none"),
                   unknown=obj.get("unknown", False), error=obj.get("error", ""))


@dataclass(frozen=True)
class Status:
    """A run's record, its receipt (None before its first reap) and its live state (GetRun)."""
    run: str
    state: str            # launching, running, failed, reaping, reaped
    attempt: int
    unit: str
    invocation_id: str
    cgroup: str
    leader_pid: int
    keep: bool
    parent: str
    created_at: str
    receipt: Optional[Receipt]
    live: Live
    record: dict = field(repr=False)   # the whole record (lifecycle.json), for fields not above

    @property
    def running(self):
        """The record says running and the unit is live and ours (as `nervectl status` exits 0)."""
        return self.state == "running" and self.live.known and self.live.ours and \
            self.live.active_state in ("active", "reloading")

    @classmethod
    def from_json(cls, text):
        obj = json.loads(text)
        rec = obj["record"]
        return cls(run=rec["run"], state=rec["state"], attempt=rec["attempt"], unit=rec["unit"],
                   invocation_id=rec.get("invocation_id", ""), cgroup=rec.get("cgroup", ""),
                   leader_pid=rec.get("leader_pid", 0), keep=rec.get("keep", False),
                   parent=rec.get("parent", ""), created_at=rec.get("created_at", ""),
                   receipt=Receipt.from_json(obj.get("receipt")),
                   live=Live.from_json(obj.get("live", {})), record=rec)
