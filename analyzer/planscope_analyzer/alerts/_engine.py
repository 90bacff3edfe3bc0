"""The evaluation loop: rules -> evaluations -> state changes -> events -> the delivery thread.

Each rule (per project) is ``resolved`` (also before it ever fired) or ``firing``. Only a change
writes an event, so a storm that keeps a rule firing sends one message, and its end one
``resolved``. A rule that fires again within ``cooldown`` of its last *notified* firing records a
``suppressed`` event (history, no message), and so does the matching ``resolved``.

Passes run every ``interval`` seconds (so windows that pass resolve rules) and right after new
data is stored (``on_flush`` marks the project dirty), at most every ``min_gap`` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from planscope_collector.storage import Store, StoreError

from ._delivery import AlertMessage, Dispatcher, LogNotifier, Notifier, RetryPolicy, notifier_for
from ._errors import RuleValidationError
from ._evaluate import Evaluation, evaluate_rule
from ._repo import (
    FIRING,
    PENDING,
    RESOLVED,
    SUPPRESSED,
    AlertEvent,
    EventLog,
    RuleRepository,
    StoredRule,
)
from ._rules import load_rules_file
from ._settings import AlertSettings

__all__ = ["AlertEngine", "RuleState"]

log = logging.getLogger("planscope.alerts")

Key = tuple[str, str]


@dataclass(frozen=True)
class RuleState:
    """The alert state of one rule in one project.

    Attributes:
        state: ``firing`` or ``resolved``.
        since: unix seconds of the last change (0: never fired).
        event_id: the event of the last change.
        notified_at: when the last firing was notified (cooldown reference).
        suppressed: the current firing was not notified (cooldown).
        value, threshold, summary: the last evaluation.
        evaluated_at: unix seconds of the last evaluation; error: its failure, if any.
    """

    state: str = RESOLVED
    since: float = 0.0
    event_id: str | None = None
    notified_at: float = 0.0
    suppressed: bool = False
    value: float = 0.0
    threshold: float = 0.0
    summary: str = ""
    evaluated_at: float = 0.0
    error: str = ""


class AlertEngine:
    """Evaluates every enabled rule continuously and hands new events to the delivery thread.

    >>> engine = AlertEngine(lambda: store, AlertSettings())  # doctest: +SKIP
    >>> engine.start(); engine.mark_dirty({"default"}); engine.stop()  # doctest: +SKIP
    """

    def __init__(self, store: Callable[[], Store], settings: AlertSettings) -> None:
        self.settings = settings
        self._store = store
        self.rules = RuleRepository(store)
        self.events = EventLog(store)
        self.dispatcher = Dispatcher(
            self.events,
            self._resolve,
            RetryPolicy(settings.retry_base, settings.retry_max, settings.give_up_after),
        )
        self._active: dict[Key, StoredRule] = {}
        self._specs: dict[Key, Any] = {}
        self._states: dict[Key, RuleState] = {}
        self._dirty: set[str] = set()
        self._reload = True
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="planscope-alerts", daemon=True)
        self.file_status: dict[str, Any] = {"path": None, "loaded": False, "error": None}
        self.stats: dict[str, Any] = {"passes": 0, "last_pass_seconds": 0.0, "last_error": None}

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)
        if self._ready.is_set():
            self.dispatcher.stop()

    def wait_ready(self, timeout: float = 30.0) -> bool:
        """Block until rules and states are loaded (tests, benchmarks)."""
        return self._ready.wait(timeout)

    def mark_dirty(self, projects: Iterable[str]) -> None:
        """New data for these projects: evaluate their rules soon. Returns at once."""
        with self._lock:
            self._dirty.update(projects)
        self._wake.set()

    def rules_changed(self) -> None:
        """Rules were written: reload them before the next pass."""
        self._reload = True
        self._wake.set()

    # -- the loop ----------------------------------------------------------------------------

    def _run(self) -> None:
        next_full = 0.0
        last_pass = 0.0
        while not self._stop.is_set():
            if not self._ready.is_set():
                try:
                    self._bootstrap()
                except Exception as exc:  # store not reachable yet
                    self.stats["last_error"] = f"starting: {exc}"
                    log.debug("alerts waiting for the store: %s", exc)
                    self._stop.wait(0.5)
                    continue
            try:
                if self._reload:
                    self._reload = False
                    self._load_rules()
                with self._lock:
                    dirty, self._dirty = self._dirty, set()
                now = time.monotonic()
                if now >= next_full:
                    self.evaluate()
                    next_full = now + self.settings.interval
                elif dirty:
                    self.evaluate(projects=dirty)
                last_pass = time.monotonic()
            except StoreError as exc:
                self.stats["last_error"] = str(exc)
                log.warning("alert evaluation pass failed: %s", exc)
                self._reload = True
            except Exception as exc:  # never let the thread die
                self.stats["last_error"] = f"{type(exc).__name__}: {exc}"
                log.exception("alert evaluation pass failed")
            self._wake.wait(max(0.0, next_full - time.monotonic()))
            self._wake.clear()
            gap = self.settings.min_gap - (time.monotonic() - last_pass)
            if gap > 0:
                self._stop.wait(gap)

    def _bootstrap(self) -> None:
        self._store()  # raises until the store is reachable
        if self.settings.rules_file is not None:
            self.load_file(self.settings.rules_file)
        self._load_rules()
        for key, last in self.events.latest_states().items():
            self._states[key] = RuleState(
                state=last["state"],
                since=last["at"],
                event_id=last["event_id"],
                notified_at=last["notified_at"],
                suppressed=last["delivery_state"] == SUPPRESSED,
                value=last["value"],
            )
        self.dispatcher.start()
        self._ready.set()

    def _load_rules(self) -> None:
        latest = self.rules.all_latest()
        self._specs = {(r.project, r.rule.id): r.rule for r in latest}
        self._active = {
            (r.project, r.rule.id): r for r in latest if not r.deleted and r.rule.enabled
        }

    # -- the rules file ----------------------------------------------------------------------

    def load_file(self, path: Any) -> dict[str, Any]:
        """Sync the store with a rules file; an invalid file changes nothing (error recorded).

        New or changed rules get a new version (source ``file``); rules a previous load of the
        file created and the file no longer declares are deleted. One insert: all or nothing.
        """
        self.file_status = {"path": str(path), "loaded": False, "error": None}
        try:
            parsed = load_rules_file(path)
        except RuleValidationError as exc:
            self.file_status["error"] = str(exc)
            log.error("alert rules file not loaded, stored rules unchanged: %s", exc)
            return self.file_status
        with self.rules.lock:
            latest = {(r.project, r.rule.id): r for r in self.rules.all_latest()}
            writes: list[tuple[str, Any, int, bool]] = []
            declared = set()
            for project, rules in parsed.rules.items():
                for rule in rules:
                    key = (project, rule.id)
                    declared.add(key)
                    current = latest.get(key)
                    if current is not None and not current.deleted and current.rule == rule:
                        continue
                    writes.append((project, rule, (current.version + 1) if current else 1, False))
            for key, current in latest.items():
                if current.source == "file" and not current.deleted and key not in declared:
                    writes.append((key[0], current.rule, current.version + 1, True))
            self.rules.write_many(writes, source="file")
        self.file_status.update(loaded=True, rules=parsed.count, written=len(writes))
        log.info("alert rules file %s: %d rules, %d versions written", path, parsed.count,
                 len(writes))  # fmt: skip
        self.rules_changed()
        return self.file_status

    # -- evaluation --------------------------------------------------------------------------

    def dry_run(self, project: str, rule: Any, now: float | None = None) -> dict[str, Any]:
        """What ``rule`` would say now, without events or deliveries."""
        store = self._store()
        evaluation = evaluate_rule(rule, project, store.query, now=now, bindings=store.bindings)
        evidence = self._with_links(project, evaluation)
        return {
            "would_fire": evaluation.firing,
            "value": evaluation.value,
            "threshold": evaluation.threshold,
            "summary": evaluation.summary,
            "evidence": evidence,
        }

    def evaluate(
        self, projects: set[str] | None = None, now: float | None = None
    ) -> list[AlertEvent]:
        """One pass over the active rules (of ``projects``); returns the events it wrote."""
        started = time.monotonic()
        now = time.time() if now is None else now
        store = self._store()
        changes: list[tuple[Key, RuleState, AlertEvent | None]] = []
        for key, stored in list(self._active.items()):
            if projects is not None and key[0] not in projects:
                continue
            state = self._states.get(key, RuleState())
            try:
                evaluation = evaluate_rule(
                    stored.rule, key[0], store.query, now=now, bindings=store.bindings
                )
            except StoreError as exc:
                if "UNKNOWN_TABLE" in str(exc) or "Unknown table" in str(exc):
                    failed = replace(state, error=str(exc)[:500], evaluated_at=now)
                    changes.append((key, failed, None))
                    continue
                raise
            changes.append(self._transition(key, stored, state, evaluation, now))
        if projects is None:  # rules deleted or disabled while firing resolve
            for key, state in list(self._states.items()):
                if state.state == FIRING and key not in self._active:
                    gone = Evaluation(False, 0.0, state.threshold, "rule deleted or disabled")
                    spec = self._specs.get(key)
                    version = 0
                    changes.append(self._transition(key, spec, state, gone, now, version))
        events = [e for _, _, e in changes if e is not None]
        self.events.write(events)  # persisted before any state changes or delivery
        for key, state, _ in changes:
            self._states[key] = state
        self.dispatcher.submit([e for e in events if e.delivery_state == PENDING])
        self.stats["passes"] += 1
        self.stats["last_pass_seconds"] = round(time.monotonic() - started, 4)
        return events

    def _transition(
        self,
        key: Key,
        stored: Any,
        state: RuleState,
        ev: Evaluation,
        now: float,
        version: int | None = None,
    ) -> tuple[Key, RuleState, AlertEvent | None]:
        rule = stored.rule if isinstance(stored, StoredRule) else stored
        rule_version = stored.version if isinstance(stored, StoredRule) else (version or 0)
        state = replace(
            state, value=ev.value, threshold=ev.threshold, summary=ev.summary,
            evaluated_at=now, error="",
        )  # fmt: skip
        if ev.firing == (state.state == FIRING):
            return key, state, None
        evidence = self._with_links(key[0], ev)
        if ev.firing:
            cooldown = rule.cooldown_seconds if rule is not None else 0.0
            suppressed = state.notified_at > 0 and now - state.notified_at < cooldown
            new_state = FIRING
        else:
            suppressed = state.suppressed
            new_state = RESOLVED
        links = evidence.get("trace_links") or []
        event = AlertEvent(
            project=key[0],
            rule_id=key[1],
            rule_version=rule_version,
            event_id=uuid.uuid4().hex,
            state=new_state,
            at=now,
            value=ev.value,
            threshold=ev.threshold,
            summary=ev.summary,
            evidence=evidence,
            link=links[0] if links else self.settings.dashboard_url + "/",
            delivery_state=SUPPRESSED if suppressed else PENDING,
            updated_at=now,
        )
        state = replace(
            state,
            state=new_state,
            since=now,
            event_id=event.event_id,
            suppressed=suppressed,
            notified_at=now if (ev.firing and not suppressed) else state.notified_at,
        )
        return key, state, event

    def _with_links(self, project: str, ev: Evaluation) -> dict[str, Any]:
        evidence = dict(ev.evidence)
        evidence["trace_ids"] = list(ev.trace_ids[:20])
        evidence["trace_links"] = [self.settings.trace_link(t, project) for t in ev.trace_ids[:10]]
        for sample in evidence.get("samples", []):
            if "trace_id" in sample:
                sample["link"] = self.settings.trace_link(
                    sample["trace_id"], project, sample.get("step_id")
                )
        return evidence

    # -- delivery ----------------------------------------------------------------------------

    def _resolve(self, event: AlertEvent) -> tuple[AlertMessage, Sequence[Notifier]]:
        rule = self._specs.get((event.project, event.rule_id))
        if rule is None:
            message = AlertMessage(event, event.rule_id, "unknown")
            return message, [LogNotifier()]
        allow = self.settings.allow_targets
        notifiers = [notifier_for(c, allow) for c in rule.notify] or [LogNotifier()]
        return AlertMessage(event, rule.title, rule.kind), notifiers

    # -- reads for the API -------------------------------------------------------------------

    def state_of(self, project: str, rule_id: str) -> RuleState:
        return self._states.get((project, rule_id), RuleState())

    def states(self, project: str) -> list[dict[str, Any]]:
        """Firing/resolved per current rule of ``project`` (after the first load)."""
        out = []
        for (p, rule_id), rule in sorted(self._specs.items()):
            if p != project:
                continue
            stored = self._active.get((p, rule_id))
            if stored is None and (p, rule_id) not in self._states:
                continue
            st = self._states.get((p, rule_id), RuleState())
            out.append(
                {
                    "rule_id": rule_id,
                    "name": rule.title,
                    "kind": rule.kind,
                    "active": stored is not None,
                    "state": st.state,
                    "since": st.since or None,
                    "event_id": st.event_id,
                    "suppressed": st.suppressed,
                    "value": st.value,
                    "threshold": st.threshold,
                    "summary": st.summary,
                    "evaluated_at": st.evaluated_at or None,
                    "error": st.error or None,
                }
            )
        return out
