"""Persistence of rules (``alert_rules``, every version kept) and events (``alert_events``).

Both tables are written with columnar inserts and read with bound parameters. A rule edit or
delete is a new version row; an event's delivery progress is a newer row with the same key
(read with FINAL). See migration 0006_alerts.sql.

>>> StoredRule.__dataclass_fields__.keys() >= {"project", "rule", "version"}
True
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from planscope_collector.storage import Store

from ._rules import parse_rule

__all__ = ["AlertEvent", "ChannelDelivery", "EventLog", "RuleRepository", "StoredRule"]

RULE_COLUMNS = (
    "Project", "RuleId", "Version", "Kind", "Name", "Spec", "Source", "Deleted", "UpdatedAt",
)  # fmt: skip
EVENT_COLUMNS = (
    "Project", "RuleId", "RuleVersion", "EventId", "State", "At", "Value", "Threshold",
    "Summary", "Evidence", "Link", "DeliveryState", "Attempts", "LastError", "NextAttemptAt",
    "Deliveries", "UpdatedAt",
)  # fmt: skip

FIRING = "firing"
RESOLVED = "resolved"
PENDING = "pending"
DELIVERED = "delivered"
SUPPRESSED = "suppressed"
FAILED = "failed"


def _ms(ts: float) -> int:
    return int(ts * 1000)


def _ts(value: Any) -> float:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.timestamp()
    return float(value or 0)


@dataclass(frozen=True)
class StoredRule:
    """One version of a rule as stored.

    Attributes:
        project: the project the rule watches.
        rule: the validated rule model.
        version: 1 for the first, +1 for every edit or delete.
        source: who wrote this version: ``api``, ``cli`` or ``file``.
        deleted: this version is a delete (tombstone).
        updated_at: unix seconds.
    """

    project: str
    rule: Any
    version: int
    source: str
    deleted: bool = False
    updated_at: float = 0.0


@dataclass(frozen=True)
class ChannelDelivery:
    """Delivery of one event to one channel (``webhook:https://host/path``, ``log``...)."""

    channel: str
    state: str = PENDING
    attempts: int = 0
    last_error: str = ""
    delivered_at: float = 0.0


@dataclass(frozen=True)
class AlertEvent:
    """A state change of a rule (firing or resolved) with its evidence and delivery state.

    >>> e = AlertEvent("p", "r", 1, "e1", "firing", 0.0, 3.0, 1.0, "3 steps exceeded", {}, "")
    >>> e.delivery_state
    'pending'
    """

    project: str
    rule_id: str
    rule_version: int
    event_id: str
    state: str
    at: float
    value: float
    threshold: float
    summary: str
    evidence: dict[str, Any]
    link: str
    delivery_state: str = PENDING
    attempts: int = 0
    last_error: str = ""
    next_attempt_at: float = 0.0
    deliveries: tuple[ChannelDelivery, ...] = field(default=())
    updated_at: float = 0.0

    def to_row(self) -> list[Any]:
        return [
            self.project, self.rule_id, self.rule_version, self.event_id, self.state,
            _ms(self.at), self.value, self.threshold, self.summary,
            json.dumps(self.evidence, sort_keys=True, default=str), self.link,
            self.delivery_state, self.attempts, self.last_error[:2000],
            _ms(self.next_attempt_at),
            json.dumps([d.__dict__ for d in self.deliveries]), _ms(self.updated_at or time.time()),
        ]  # fmt: skip

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> AlertEvent:
        deliveries = tuple(ChannelDelivery(**d) for d in json.loads(row["Deliveries"] or "[]"))
        return cls(
            project=row["Project"],
            rule_id=row["RuleId"],
            rule_version=int(row["RuleVersion"]),
            event_id=row["EventId"],
            state=row["State"],
            at=_ts(row["At"]),
            value=float(row["Value"]),
            threshold=float(row["Threshold"]),
            summary=row["Summary"],
            evidence=json.loads(row["Evidence"] or "{}"),
            link=row["Link"],
            delivery_state=row["DeliveryState"],
            attempts=int(row["Attempts"]),
            last_error=row["LastError"],
            next_attempt_at=_ts(row["NextAttemptAt"]),
            deliveries=deliveries,
            updated_at=_ts(row["UpdatedAt"]),
        )

    def to_json(self) -> dict[str, Any]:
        """The event as the API shows it."""
        return {
            "event_id": self.event_id,
            "project": self.project,
            "rule_id": self.rule_id,
            "rule_version": self.rule_version,
            "state": self.state,
            "at": self.at,
            "value": self.value,
            "threshold": self.threshold,
            "summary": self.summary,
            "evidence": self.evidence,
            "link": self.link,
            "delivery": {
                "state": self.delivery_state,
                "attempts": self.attempts,
                "last_error": self.last_error,
                "next_attempt_at": self.next_attempt_at or None,
                "channels": [d.__dict__ for d in self.deliveries],
            },
        }


StoreGetter = Callable[[], Store]


class RuleRepository:
    """Rules in ``alert_rules``: current versions, history, and versioned writes.

    >>> repo = RuleRepository(lambda: store)  # doctest: +SKIP
    >>> repo.put("default", rule, source="api").version  # doctest: +SKIP
    1
    """

    def __init__(self, store: StoreGetter) -> None:
        self._store = store
        self._lock = threading.RLock()

    def all_latest(self, project: str | None = None) -> list[StoredRule]:
        """The newest version of every rule (deleted ones included, flagged)."""
        rows = self._store().query(
            "SELECT Project, RuleId, max(Version) AS V, argMax(Spec, Version) AS S, "
            "argMax(Source, Version) AS Src, argMax(Deleted, Version) AS D, "
            "argMax(UpdatedAt, Version) AS U FROM alert_rules "
            "WHERE ({project:String} = '' OR Project = {project:String}) "
            "GROUP BY Project, RuleId ORDER BY Project, RuleId",
            {"project": project or ""},
        )
        return [self._stored(r["Project"], r["S"], r["V"], r["Src"], r["D"], r["U"]) for r in rows]

    def current(self, project: str | None = None) -> list[StoredRule]:
        """The newest version of every rule that is not deleted."""
        return [r for r in self.all_latest(project) if not r.deleted]

    def get(self, project: str, rule_id: str) -> StoredRule | None:
        """The current (not deleted) version of one rule."""
        history = self.history(project, rule_id)
        return history[-1] if history and not history[-1].deleted else None

    def history(self, project: str, rule_id: str) -> list[StoredRule]:
        """Every version of one rule, oldest first."""
        rows = self._store().query(
            "SELECT Version, argMax(Spec, UpdatedAt) AS S, argMax(Source, UpdatedAt) AS Src, "
            "argMax(Deleted, UpdatedAt) AS D, max(UpdatedAt) AS U FROM alert_rules "
            "WHERE Project = {project:String} AND RuleId = {rule_id:String} "
            "GROUP BY Version ORDER BY Version",
            {"project": project, "rule_id": rule_id},
        )
        return [self._stored(project, r["S"], r["Version"], r["Src"], r["D"], r["U"]) for r in rows]

    @staticmethod
    def _stored(project: str, spec: str, version: Any, src: str, d: Any, u: Any) -> StoredRule:
        return StoredRule(project, parse_rule(json.loads(spec)), int(version), src, bool(d), _ts(u))

    def put(self, project: str, rule: Any, *, source: str, deleted: bool = False) -> StoredRule:
        """Write a new version of ``rule`` (which has an id); returns it."""
        with self._lock:
            rows = self._store().query(
                "SELECT max(Version) AS V FROM alert_rules "
                "WHERE Project = {project:String} AND RuleId = {rule_id:String}",
                {"project": project, "rule_id": rule.id},
            )
            version = int(rows[0]["V"] or 0) + 1 if rows else 1
            self.write_many([(project, rule, version, deleted)], source=source)
            return StoredRule(project, rule, version, source, deleted, time.time())

    def write_many(self, items: Sequence[tuple[str, Any, int, bool]], *, source: str) -> None:
        """Insert several versions in ONE insert (all or nothing): (project, rule, version, del)."""
        now = _ms(time.time())
        rows = [
            [project, rule.id, version, rule.kind, rule.name, rule.model_dump_json(), source,
             int(deleted), now]
            for project, rule, version, deleted in items
        ]  # fmt: skip
        if rows:
            self._store().insert_rows("alert_rules", rows, RULE_COLUMNS)

    @property
    def lock(self) -> threading.RLock:
        return self._lock


class EventLog:
    """Events in ``alert_events``: append, update delivery, read history and pending ones."""

    def __init__(self, store: StoreGetter) -> None:
        self._store = store

    def write(self, events: Sequence[AlertEvent]) -> None:
        """Insert (or update: same key, newer ``updated_at``) events in one insert."""
        if events:
            rows = [e.to_row() for e in events]
            self._store().insert_rows("alert_events", rows, EVENT_COLUMNS)

    def pending(self) -> list[AlertEvent]:
        """Events not yet delivered to every channel, oldest first (all projects)."""
        rows = self._store().query(
            "SELECT * FROM alert_events FINAL WHERE DeliveryState = {state:String} ORDER BY At",
            {"state": PENDING},
        )
        return [AlertEvent.from_row(r) for r in rows]

    def latest_states(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Per (project, rule): the last event's state, id and time, the last notified firing."""
        rows = self._store().query(
            "SELECT Project, RuleId, argMax(State, At) AS S, argMax(EventId, At) AS E, "
            "max(At) AS T, maxIf(At, State = {firing:String} AND DeliveryState != "
            "{suppressed:String}) AS N, argMax(DeliveryState, At) AS DS, "
            "argMax(Value, At) AS V FROM alert_events FINAL GROUP BY Project, RuleId",
            {"firing": FIRING, "suppressed": SUPPRESSED},
        )
        return {
            (r["Project"], r["RuleId"]): {
                "state": r["S"],
                "event_id": r["E"],
                "at": _ts(r["T"]),
                "notified_at": _ts(r["N"]),
                "delivery_state": r["DS"],
                "value": float(r["V"]),
            }
            for r in rows
        }

    def history(
        self,
        project: str,
        *,
        rule_id: str | None = None,
        state: str | None = None,
        since: float = 0.0,
        limit: int = 100,
    ) -> list[AlertEvent]:
        """Events of a project, newest first."""
        rows = self._store().query(
            "SELECT * FROM alert_events FINAL WHERE Project = {project:String} "
            "AND ({rule_id:String} = '' OR RuleId = {rule_id:String}) "
            "AND ({state:String} = '' OR State = {state:String}) "
            "AND At >= fromUnixTimestamp64Milli({since:Int64}) "
            "ORDER BY At DESC, EventId LIMIT {limit:UInt32}",
            {
                "project": project,
                "rule_id": rule_id or "",
                "state": state or "",
                "since": _ms(since),
                "limit": limit,
            },
        )
        return [AlertEvent.from_row(r) for r in rows]
