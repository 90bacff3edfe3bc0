"""Analysis leases in ClickHouse: one collector replica analyses a unit of work at a time.

Several collector replicas share one ClickHouse. Ingest needs no coordination (each replica has
its own spool; duplicates are dropped by dedup tokens and request digests), but analysis should
run once per trace. A :class:`Leases` object, one per replica (``holder``), claims named units of
work (``key``: a time bucket of traces, or one leader key per project) in the table
``planscope_analysis_leases`` (migration ``0009_analysis_leases.sql``).

How a claim is decided (the full race analysis is in docs/deploy.md, "Analysis runs once"):

1. Read the key's current lease (``FINAL``): the highest ``Generation``; within it the earliest
   ``ClaimedAt``, then the smallest ``Holder`` (the tie-break). Done -> nothing to do. Live and
   someone else's -> not acquired. Otherwise claim generation ``G + 1``.
2. Insert the claim with ``insert_deduplication_token = lease:<digest(project, key)>:<G+1>``.
   ClickHouse stores only the first insert of a token (atomically: under the table's parts lock
   on one node, through a Keeper block id on a replicated table), so at most one claim of
   ``G + 1`` exists while the token is in the dedup window.
3. Read back. The claimant holds the lease only if the current lease is now its own ``G + 1``.
   Every contender reads the same rows and reaches the same verdict.

Times are the server's (``DEFAULT now64``), so replicas' clocks never enter a comparison. The
holder also keeps a local deadline, ``monotonic() before the insert + ttl - margin``: it must stop
(or renew) by then, which is earlier than the server's ``ExpiresAt`` by at least ``margin``; a
renewal is only attempted before the deadline, and a lease whose deadline passed is lost.

>>> from planscope_collector.storage import open_store  # doctest: +SKIP
>>> leases = Leases(open_store("chdb:///tmp/ps"), holder="collector-0")  # doctest: +SKIP
>>> lease = leases.acquire("default", "bucket:2026-11-30T12:00")  # doctest: +SKIP
>>> if lease:  # doctest: +SKIP
...     analyse(...); leases.complete(lease)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import socket
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from .storage import Store

log = logging.getLogger("planscope.collector.lease")

LEASES_TABLE: Final = "planscope_analysis_leases"
#: Columns of a claim insert; ClaimedAt, UpdatedAt and ExpiresAt come from the server's clock.
CLAIM_COLUMNS: Final = ("Project", "LeaseKey", "Generation", "Holder", "Revision", "TtlMs", "Done")
#: Columns of a renewal, release or completion: ClaimedAt is carried over from the claim.
UPDATE_COLUMNS: Final = (*CLAIM_COLUMNS, "ClaimedAt")

_CURRENT_SQL = f"""
SELECT Generation, Holder, Revision, TtlMs, Done, ClaimedAt, ExpiresAt,
       ExpiresAt > now64(6) AS Live
FROM {LEASES_TABLE} FINAL
WHERE Project = {{project:String}} AND LeaseKey = {{key:String}}
ORDER BY Generation DESC, ClaimedAt ASC, Holder ASC
LIMIT 1
"""


def default_holder() -> str:
    """A holder id unique per process incarnation: ``<hostname>:<pid>:<random>``.

    In Kubernetes the hostname is the pod name (``collector-0``), so logs and the lease table
    name the replica; the random part keeps a restarted process from inheriting a lease that its
    previous incarnation held (it must wait for expiry like everyone else).
    """
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


@dataclass(frozen=True)
class LeaseState:
    """The current lease of a key, as every reader sees it."""

    generation: int
    holder: str
    revision: int
    done: bool
    live: bool
    claimed_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class Lease:
    """A lease this process holds. ``deadline`` is on ``time.monotonic()``'s clock."""

    project: str
    key: str
    generation: int
    holder: str
    revision: int
    ttl_ms: int
    claimed_at: datetime
    deadline: float

    @property
    def valid(self) -> bool:
        """True until the local deadline: work must stop (or the lease be renewed) by then."""
        return time.monotonic() < self.deadline

    @property
    def fencing_token(self) -> int:
        """The generation: strictly increasing per key; findings may record it."""
        return self.generation


class Leases:
    """Claim, renew, release and complete leases as ``holder`` in ``store``.

    ``ttl``: how long a claim or renewal lasts on the server (seconds). ``margin``: how much
    earlier the holder considers it lost (covers clock-rate drift, cross-node clock skew and the
    insert's own latency); renew every ``ttl / 3`` or so.
    """

    def __init__(
        self, store: Store, holder: str | None = None, *, ttl: float = 60.0, margin: float = 5.0
    ) -> None:
        if ttl <= 0 or margin < 0 or margin >= ttl:
            raise ValueError("need ttl > 0 and 0 <= margin < ttl")
        self.store = store
        self.holder = holder or default_holder()
        self.ttl = ttl
        self.margin = margin

    # -- reading ----------------------------------------------------------------------------------

    def current(self, project: str, key: str) -> LeaseState | None:
        """The key's current lease (any holder), or None if it was never claimed."""
        rows = self.store.query(_CURRENT_SQL, {"project": project, "key": key})
        if not rows:
            return None
        row = rows[0]
        return LeaseState(
            generation=int(row["Generation"]),
            holder=str(row["Holder"]),
            revision=int(row["Revision"]),
            done=bool(row["Done"]),
            live=bool(row["Live"]),
            claimed_at=row["ClaimedAt"],
            expires_at=row["ExpiresAt"],
        )

    # -- claiming ---------------------------------------------------------------------------------

    def acquire(self, project: str, key: str) -> Lease | None:
        """Claim the key for this holder; None if someone else holds it or it is done.

        Re-acquiring a live lease this holder already holds renews it.
        """
        state = self.current(project, key)
        if state is not None:
            if state.done:
                return None
            if state.live:
                if state.holder != self.holder:
                    return None
                return self._write(
                    project, key, state.generation, state.revision + 1, state.claimed_at
                )
        generation = state.generation + 1 if state is not None else 1
        return self._write(project, key, generation, 0, None)

    def renew(self, lease: Lease) -> Lease | None:
        """Extend ``lease`` by ``ttl``; None if it is lost (deadline passed, or superseded).

        A lease whose local deadline has passed is never renewed: by then another replica may
        have seen it expire on the server and claimed the next generation. Acquire it again.
        """
        if not lease.valid:
            return None
        renewed = self._write(
            lease.project, lease.key, lease.generation, lease.revision + 1, lease.claimed_at
        )
        if renewed is None or time.monotonic() >= lease.deadline:
            # The renewal became visible too late to be sure nobody saw the old lease expire.
            return None
        return renewed

    def release(self, lease: Lease) -> None:
        """Give the key up now (unfinished work): the next ``acquire`` claims a new generation."""
        self._insert(lease, lease.revision + 1, ttl_ms=0, done=False)

    def complete(self, lease: Lease) -> None:
        """Mark the key's work done: nobody acquires it again (until the row's TTL)."""
        self._insert(lease, lease.revision + 1, ttl_ms=lease.ttl_ms, done=True)

    # -- internals --------------------------------------------------------------------------------

    def _write(
        self,
        project: str,
        key: str,
        generation: int,
        revision: int,
        claimed_at: datetime | None,
    ) -> Lease | None:
        ttl_ms = int(self.ttl * 1000)
        started = time.monotonic()
        if claimed_at is None:  # a claim: ClaimedAt from the server clock; one per generation
            row: list[Any] = [project, key, generation, self.holder, revision, ttl_ms, 0]
            self.store.insert_rows(
                LEASES_TABLE, [row], CLAIM_COLUMNS, dedup_token=_token(project, key, generation)
            )
        else:  # a renewal under our own (generation, holder): idempotent per revision
            row = [project, key, generation, self.holder, revision, ttl_ms, 0, claimed_at]
            token = f"{_token(project, key, generation)}:{self.holder}:{revision}"
            self.store.insert_rows(LEASES_TABLE, [row], UPDATE_COLUMNS, dedup_token=token)
        state = self.current(project, key)
        won = (
            state is not None
            and state.generation == generation
            and state.holder == self.holder
            and state.revision >= revision
            and state.live
            and not state.done
        )
        if not won or state is None:
            log.debug(
                "lease %s/%s generation %d not acquired by %s",
                project,
                key,
                generation,
                self.holder,
            )
            return None
        return Lease(
            project=project,
            key=key,
            generation=generation,
            holder=self.holder,
            revision=state.revision,
            ttl_ms=ttl_ms,
            claimed_at=state.claimed_at,
            deadline=started + self.ttl - self.margin,
        )

    def _insert(self, lease: Lease, revision: int, *, ttl_ms: int, done: bool) -> None:
        row = [
            lease.project,
            lease.key,
            lease.generation,
            self.holder,
            revision,
            ttl_ms,
            int(done),
            lease.claimed_at,
        ]
        token = f"{_token(lease.project, lease.key, lease.generation)}:{self.holder}:{revision}"
        self.store.insert_rows(LEASES_TABLE, [row], UPDATE_COLUMNS, dedup_token=token)


def _token(project: str, key: str, generation: int) -> str:
    """The claim's dedup token: one per (project, key, generation), whoever claims."""
    digest = hashlib.sha256(json.dumps([project, key]).encode()).hexdigest()[:32]
    return f"lease:{digest}:{generation}"


__all__ = ["LEASES_TABLE", "Lease", "LeaseState", "Leases", "default_holder"]
