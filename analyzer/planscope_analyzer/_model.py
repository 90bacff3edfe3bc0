"""Values the analyzer works with: the typed rows of one trace, and the findings it reports.

A :class:`TraceData` is everything the detectors may look at for one trace, loaded by SQL from
the derived tables (``planscope_runs``, ``planscope_plans``, ``planscope_plan_steps``,
``planscope_step_attempts``, ``planscope_tool_calls``, ``planscope_llm_calls``,
``planscope_trace_index``). Detectors are pure functions of it, so they are testable without a
store and re-analysis is deterministic.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from planscope import safejson

SEVERITIES = ("low", "medium", "high", "critical")
"""Severity values, from least to most urgent."""

PLANNER = "planner"
"""The component blamed when the plan itself is at fault."""
INSTRUMENTATION = "instrumentation"
"""The component blamed by data-quality findings (the trace, not the agent, is wrong)."""
VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:/+-]*[A-Za-z0-9]|[A-Za-z0-9]")
"""A value token of a text (an identifier, a code, a number, a date part, a word): what plan
propagation traces, and what the loader compares when it tells a prompt's contested facts."""


@dataclass(frozen=True)
class Finding:
    """One detected failure mode in one trace.

    Attributes:
        kind: the failure mode (``runaway_loop``, ``context_starved``, ...).
        severity: one of :data:`SEVERITIES`.
        project, trace_id, run_id: where it happened.
        component: who is responsible: ``planner``, an executor name or a tool name.
        step_id: the plan step it points at ('' when none).
        evidence: span ids that prove it (open them in the trace view).
        explanation: one sentence a person can check against the trace.
        wasted_tokens, wasted_cost_usd, wasted_ns: resources burned by the failure, when known.
        detail: machine-readable specifics (JSON-serialisable).
        detector_version: ``kind@version`` of the rule that produced it.

    >>> f = Finding("runaway_loop", "high", "p", "t" * 32, "r", "http_get", "fetch", ("a",), "x")
    >>> len(f.key)
    16
    """

    kind: str
    severity: str
    project: str
    trace_id: str
    run_id: str
    component: str
    step_id: str
    evidence: tuple[str, ...]
    explanation: str
    wasted_tokens: int = 0
    wasted_cost_usd: float = 0.0
    wasted_ns: int = 0
    detail: Mapping[str, Any] = field(default_factory=dict)
    detector_version: str = ""
    identity: str = ""
    """Extra text that distinguishes two findings of one kind at one step (e.g. the other
    writer); part of :attr:`key`."""

    @property
    def key(self) -> str:
        """Stable identity within a trace: re-analysis replaces the row with the same key."""
        text = "\x1f".join((self.kind, self.step_id, self.component, self.identity))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the shape of the HTTP API)."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "project": self.project,
            "trace_id": self.trace_id,
            "run_id": self.run_id,
            "component": self.component,
            "step_id": self.step_id,
            "evidence_span_ids": list(self.evidence),
            "explanation": self.explanation,
            "wasted_tokens": self.wasted_tokens,
            "wasted_cost_usd": self.wasted_cost_usd,
            "wasted_ms": round(self.wasted_ns / 1e6, 3),
            "detail": dict(self.detail),
            "detector_version": self.detector_version,
            "key": self.key,
        }


# --- typed rows of one trace ----------------------------------------------------------------
# Immutable named tuples: a full pass builds one per span (a million and more), and a tuple is
# built from a row of column values several times faster than a frozen dataclass.
class Run(NamedTuple):
    span_id: str
    parent_span_id: str
    run_id: str
    variant: str
    outcome: str
    outcome_reason: str
    budget: Mapping[str, Any]
    start_ns: int
    end_ns: int
    status_code: str
    objective: str = ""
    inferred: bool = False
    """Read off another convention by the span model, not declared by planscope's SDK."""
    agent: str = ""
    """The agent the run's span says ran (the span model's agent name)."""


class Plan(NamedTuple):
    span_id: str
    parent_span_id: str
    plan_id: str
    version: int
    scope: str
    replan_reason: str
    step_count: int
    json_valid: bool
    start_ns: int
    inferred: bool = False
    """Observed by the span model (a planner's output), not planscope plan JSON."""
    json: str = ""
    """The plan's JSON, loaded only for runs that failed (plan propagation reads its values)."""
    objective: str = ""
    """The objective the plan JSON states (``objective``), loaded only for runs that failed."""


class PlanStep(NamedTuple):
    plan_span_id: str
    plan_id: str
    plan_version: int
    position: int
    step_id: str
    description: str
    executor: str
    tool: str
    depends_on: tuple[str, ...]
    requires: tuple[str, ...]
    produces: tuple[str, ...]
    irreversible: bool


class Attempt(NamedTuple):
    span_id: str
    parent_span_id: str
    plan_id: str
    plan_version: int
    step_id: str
    attempt: int
    status: str
    error_type: str
    fingerprint: str
    """``planscope.step.error_fingerprint``, else derived from error.type + status message."""
    executor: str
    context_keys: tuple[str, ...]
    context_tokens: int
    self_assessment: str
    depth: int
    input_hash: str
    start_ns: int
    end_ns: int
    tokens: int = 0
    """LLM tokens spent inside this attempt (children LLM spans)."""
    cost_usd: float = 0.0
    message: str = ""
    """The span's status message (the error text of a failed attempt)."""
    context_recorded: bool = False
    """The attempt recorded the context it was given (``planscope.step.context.keys`` present,
    possibly ``[]``): an empty ``context_keys`` then means "given nothing", not "unknown"."""
    inferred: bool = False
    """An executor-level span of another convention (a sub-agent, a LangGraph node, a task)."""

    @property
    def failed(self) -> bool:
        return self.status == "error"

    @property
    def succeeded(self) -> bool:
        return self.status == "ok" and self.self_assessment != "failure"


class ToolCall(NamedTuple):
    span_id: str
    parent_span_id: str
    step_id: str
    attempt: int
    plan_id: str
    plan_version: int
    tool: str
    resource: str
    effect: str
    args_key: str
    """``planscope.tool.args_hash``, else a hash of ``gen_ai.tool.call.arguments``, else ''."""
    error_type: str
    status_code: str
    start_ns: int
    duration_ns: int
    arguments: str = ""
    """``gen_ai.tool.call.arguments`` as captured (JSON text, '' when not captured)."""
    result: str = ""
    """What the tool returned as captured (``gen_ai.tool.call.result``, OpenInference's
    ``output.value``...), loaded for runs that failed and for the tool calls binding found
    among unclassified spans (``_load._component_calls``); '' otherwise."""
    message: str = ""
    """A failed call's error text as its span says it (status description, else its exception
    event's message, else a returned error envelope's: ``SPAN_STATUS_MESSAGE_SQL``), loaded
    for calls of traces whose raw spans are read (another convention's); '' otherwise."""

    @property
    def failed(self) -> bool:
        return self.status_code == "Error" or bool(self.error_type)

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


class RawSpan(NamedTuple):
    """A span's skeleton, loaded only for traces the typed tables do not fully cover."""

    span_id: str
    parent_span_id: str
    name: str
    status_code: str
    message: str = ""
    start_ns: int = 0
    end_ns: int = 0
    log_level: int = 0
    """A Logfire log's level (0: not a log; the loader folds logs into their parents)."""
    title: str = ""
    """What the span's name says with its arguments filled in, read for a failed span whose
    name is a template (Logfire's ``logfire.msg``: ``watch loan {loan}`` is ``watch loan
    LN-88``); '' when its name says it."""


class SchedulerSpan(NamedTuple):
    """A central scheduler's queue wait or context switch (``scheduler.*`` spans)."""

    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    duration_ns: int
    scheduler_id: str
    policy: str
    requester: str
    request_id: str
    switch_op: str
    context_hash: str
    context_tokens: int
    saved_hash: str
    saved_tokens: int
    overtaken: int | None  # the scheduler's own count (``planscope.scheduler.overtaken``)


@dataclass
class TraceData:
    """Everything about one trace that the detectors read."""

    project: str
    trace_id: str
    start_ns: int = 0
    end_ns: int = 0
    span_count: int = 0
    has_root: bool = False
    runs: list[Run] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)
    plan_steps: list[PlanStep] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    tools: list[ToolCall] = field(default_factory=list)
    llm_spans: int = 0
    llm_by_parent: dict[str, tuple[int, float]] = field(default_factory=dict)
    """Tokens and cost of the LLM calls directly under each span id."""
    llm_parents: dict[str, str] = field(default_factory=dict)
    """LLM call span id → the span id it is directly under."""
    raw: list[RawSpan] | None = None
    scheduling: list[SchedulerSpan] = field(default_factory=list)
    """Queue waits and context switches of a central scheduler, if the agent has one."""
    asked: dict[str, str] = field(default_factory=dict)
    """Failed inferred step attempt span id → what its LLM calls were asked (read only for
    traces whose plans and attempts the span model observed; plan propagation reads a failed
    check's)."""
    folded: frozenset[str] = frozenset()
    """Span ids of typed rows the loader folded into others (step spans that only wrap
    attempts, plans that contain plans): in the trace, no longer in its model."""
    _memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Derived views, computed once per trace after loading."""

    # -- helpers shared by detectors -----------------------------------------------------------
    @property
    def run(self) -> Run | None:
        return self.runs[0] if self.runs else None

    @property
    def run_id(self) -> str:
        return self.runs[0].run_id if self.runs else ""

    def budget_limit(self, name: str) -> int | None:
        """A limit of the run's retry budget (``max_attempts_per_step``...), None if unknown."""
        if not self.runs:
            return None
        value = self.runs[0].budget.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def typed_span_ids(self) -> frozenset[str]:
        """The span ids of the trace's typed rows: runs, plans, step attempts, tool and LLM
        calls (with no raw spans loaded, the whole trace)."""
        ids: frozenset[str] | None = self._memo.get("typed_span_ids")
        if ids is None:
            ids = self._memo["typed_span_ids"] = frozenset(
                {r.span_id for r in self.runs}
                | {p.span_id for p in self.plans}
                | {a.span_id for a in self.attempts}
                | {t.span_id for t in self.tools}
                | self.llm_parents.keys()
            )
        return ids

    def steps_of(self, plan_id: str, version: int) -> list[PlanStep]:
        index = self._memo.get("steps_of")
        if index is None:
            index = {}
            for s in self.plan_steps:
                index.setdefault((s.plan_id, s.plan_version), []).append(s)
            self._memo["steps_of"] = index
        return list(index.get((plan_id, version), ()))

    def plan_versions(self) -> list[tuple[str, int]]:
        """(plan id, version) pairs that have plan steps, in version order."""
        if "versions" not in self._memo:
            self._memo["versions"] = sorted(
                {(s.plan_id, s.plan_version) for s in self.plan_steps}, key=lambda x: x[1]
            )
        return list(self._memo["versions"])

    def latest_steps(self) -> dict[str, PlanStep]:
        """Each step id's definition in the newest plan version that contains it."""
        if "latest" not in self._memo:
            out: dict[str, PlanStep] = {}
            for s in sorted(self.plan_steps, key=lambda s: (s.plan_version, s.position)):
                out[s.step_id] = s
            self._memo["latest"] = out
        return dict(self._memo["latest"])

    def decomposition(self) -> dict[str, list[str]]:
        """Decomposed step id → the step ids its decomposition added.

        A plan version whose ``scope`` names a step and that adds steps to the previous version
        of the same plan id is a decomposition (ADaPT) or a scoped replan of that step.
        """
        if "decomposition" in self._memo:
            return dict(self._memo["decomposition"])
        scopes = {(p.plan_id, p.version): p.scope for p in self.plans}
        by_plan: dict[str, dict[int, set[str]]] = {}
        for s in self.plan_steps:
            by_plan.setdefault(s.plan_id, {}).setdefault(s.plan_version, set()).add(s.step_id)
        out: dict[str, list[str]] = {}
        for plan_id, versions in by_plan.items():
            previous: set[str] = set()
            for version in sorted(versions):
                scope = scopes.get((plan_id, version), "")
                added = versions[version] - previous
                if scope and previous and added:
                    out.setdefault(scope, []).extend(sorted(added - {scope}))
                previous = versions[version]
        self._memo["decomposition"] = out
        return dict(out)

    def tools_of(self, attempt: Attempt) -> list[ToolCall]:
        """Tool calls made inside an attempt (by parent span, else by stamped step/attempt)."""
        index = self._memo.get("tools_of")
        if index is None:
            by_parent: dict[str, list[ToolCall]] = {}
            by_step: dict[tuple[str, int], list[ToolCall]] = {}
            for t in self.tools:
                by_parent.setdefault(t.parent_span_id, []).append(t)
                if t.step_id:
                    by_step.setdefault((t.step_id, t.attempt), []).append(t)
            index = self._memo["tools_of"] = (by_parent, by_step)
        found = index[0].get(attempt.span_id)
        if found:
            return list(found)
        return list(index[1].get((attempt.step_id, attempt.attempt), ()))


def ancestors(
    steps: Sequence[PlanStep], step_id: str, children: Mapping[str, Sequence[str]] | None = None
) -> set[str]:
    """Transitive ``depends_on`` of a step within one plan version (cycles are tolerated).

    With ``children`` (decomposed step → its sub-steps, see :meth:`TraceData.decomposition`) a
    decomposition counts as structure: a sub-step inherits the dependencies of the step it was
    split from, and depending on a decomposed step means depending on all its sub-steps.
    (:class:`Ancestry` answers this for many steps of one version without re-indexing it.)

    >>> s = lambda i, d: PlanStep("", "p", 1, 0, i, "", "", "", tuple(d), (), (), False)
    >>> sorted(ancestors([s("a", []), s("b", ["a"]), s("c", ["b"])], "c"))
    ['a', 'b']
    >>> steps = [s("a", []), s("b", ["a"]), s("b1", [])]
    >>> sorted(ancestors(steps, "b1", {"b": ["b1"], "a": ["a1"]}))
    ['a', 'a1']
    """
    return Ancestry(steps, children).of(step_id)


class Ancestry:
    """:func:`ancestors` of the steps of one plan version, indexed once."""

    def __init__(
        self, steps: Sequence[PlanStep], children: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self.deps = {s.step_id: s.depends_on for s in steps}
        self.kids = children or {}
        self.parent = {c: p for p, cs in self.kids.items() for c in cs if c != p}

    def _direct(self, node: str) -> list[str]:
        deps, parent = self.deps, self.parent
        out = list(deps.get(node, ()))
        guard: set[str] = set()
        p = parent.get(node)
        while p is not None and p not in guard:
            guard.add(p)
            out.extend(deps.get(p, ()))
            p = parent.get(p)
        return out

    def of(self, step_id: str) -> set[str]:
        """The transitive ``depends_on`` of ``step_id`` (see :func:`ancestors`)."""
        kids = self.kids
        seen: set[str] = set()
        stack = [step_id]
        while stack:
            for dep in self._direct(stack.pop()):
                todo = [dep]
                while todo:
                    d = todo.pop()
                    if d in seen or d == step_id:
                        continue
                    seen.add(d)
                    stack.append(d)
                    todo.extend(kids.get(d, ()))
        return seen


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text``, ``{}`` for anything else, nesting bounded (never raises).

    >>> parse_json_object('{"max_attempts_per_step": 3}'), parse_json_object("[" * 100_000)
    ({'max_attempts_per_step': 3}, {})
    """
    return safejson.load_object(text)


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Order-preserving de-duplication, dropping empty strings."""
    return tuple(dict.fromkeys(i for i in items if i))
