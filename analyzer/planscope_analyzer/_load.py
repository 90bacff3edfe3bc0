"""Load a batch of traces from the typed tables into :class:`TraceData` values."""

from __future__ import annotations

import hashlib
import re
import string
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from functools import lru_cache
from itertools import groupby, repeat
from typing import Any, NamedTuple, Protocol

from planscope import semconv as A
from planscope.api import is_trace_id
from planscope.fingerprints import status_fingerprint
from planscope_collector.observed import (
    NO_SPAN,
    HandedResult,
    ObservedStep,
    SpanNode,
    ToolEvent,
    agent_roots,
    answer,
    bind,
    conversation_tool_events,
    event_calls,
    function_results,
    logged_failures,
    reads_tool_events,
    recorded_work,
    user_request,
)

from . import _queries as Q
from ._bindings import encode, read_bindings
from ._columns import BatchColumns, flatten, stacked, trace_ids, traces_of
from ._model import (
    VALUE,
    Attempt,
    Plan,
    PlanStep,
    RawSpan,
    Run,
    SchedulerSpan,
    ToolCall,
    TraceData,
    parse_json_object,
)

PARTITION_SLACK_NS = 3600 * 10**9
"""Rows are read from 1 h before the batch's earliest trace start (spans of a trace may start
before its first indexed span by clock skew between services)."""


BY_TIME_MAX_TAIL_NS = 86400 * 10**9
"""A window batch is read by time only while none of its traces ends more than a day after
the batch's last start (a trace with a garbage end time would widen the range to the store)."""


class Queryable(Protocol):
    """What the analyzer needs from a store (``planscope_collector.storage.Store``): reads
    column by column (``query_arrow``), columnar inserts of a ``pyarrow.Table``
    (``insert_arrow``, the engine's writes)."""

    def query(self, sql: str, parameters: Any = None) -> list[dict[str, Any]]: ...

    def query_arrow(self, sql: str, parameters: Any = None) -> Any: ...

    def insert_arrow(self, table: str, data: Any) -> None: ...


MAX_PARAM_NS = 9_223_372_036_000_000_000
"""The last whole second DateTime64(9) holds (2262-04-11 23:47:16 UTC). A span may end at
2^63-1 ns; a query parameter derived from it (plus slack) would not fit, and the whole batch's
query would fail with DECIMAL_OVERFLOW, so parameters are clamped to this."""


def ns_to_datetime(ns: int) -> datetime:
    """Unix nanoseconds → naive UTC datetime (microsecond precision) for DateTime64 params,
    clamped to what DateTime64(9) holds.

    >>> ns_to_datetime(2**63 - 1 + 3600 * 10**9)
    datetime.datetime(2262, 4, 11, 23, 47, 16)
    """
    ns = min(max(ns, 0), MAX_PARAM_NS)
    return datetime.fromtimestamp(ns // 1000 / 1e6, tz=timezone.utc).replace(tzinfo=None)


def _check_ids(ids: Sequence[str]) -> list[str]:
    """Trace ids are hex (the OTLP convention); anything else cannot be stored, so skip it."""
    return sorted({i for i in ids if is_trace_id(i)})


def fetch_columns(store: Queryable, sql: str, params: Mapping[str, Any]) -> dict[str, list[Any]]:
    """A SELECT's result as one Python list per column (empty dict when no rows); read as
    Arrow, so no per-row dict is ever built."""
    return _lists(store.query_arrow(sql, params))


def _lists(table: Any) -> dict[str, list[Any]]:
    """An Arrow table as one Python list per column (empty dict when no rows)."""
    if table.num_rows == 0:
        return {}
    return {name: table.column(name).to_pylist() for name in table.column_names}


_fingerprint = lru_cache(maxsize=1 << 16)(status_fingerprint)
"""Error messages repeat a lot across traces (the same failure in many runs)."""


def load_traces(
    store: Queryable, project: str, trace_ids: Sequence[str], since_ns: int | None = None
) -> dict[str, TraceData]:
    """Read every typed row of ``trace_ids`` (one query per table) into ``TraceData``.

    ``since_ns`` (the earliest start of these traces, when known) lets the reads skip older
    partitions; without it the trace index is asked first. Reads of the typed tables stop at
    the batch's latest span end, so newer partitions are skipped as well.

    >>> # load_traces(store, "default", ["5b8e..."])["5b8e..."].attempts
    """
    traces = index_traces(store, project, trace_ids, since_ns)
    if traces:
        fill_traces(store, project, traces, since_ns)
    return traces


def index_traces(
    store: Queryable, project: str, trace_ids: Sequence[str], since_ns: int | None = None
) -> dict[str, TraceData]:
    """These traces as the trace index knows them (start, end, span count, root), without
    rows yet (:func:`fill_traces` reads them); ``since_ns`` as for :func:`load_traces`.

    >>> # index_traces(store, "default", ["5b8e..."])["5b8e..."].span_count
    """
    ids = _check_ids(trace_ids)
    if not ids:
        return {}
    since = ns_to_datetime(max(0, since_ns - PARTITION_SLACK_NS) if since_ns is not None else 0)
    index = fetch_columns(
        store,
        Q.LOAD_INDEX.format(filter=Q.TRACE_FILTER),
        {"project": project, "ids": ",".join(ids), "since": since},
    )
    return _skeletons(project, index)


def index_window(
    store: Queryable, project: str, since_ns: int, until_ns: int
) -> dict[str, TraceData]:
    """Every trace of ``project`` that started in ``[since_ns, until_ns)``, as it stands in the
    trace index (start, end, span count, root) and without rows yet (:func:`fill_traces`
    reads them): one query for a whole window.

    >>> # index_window(store, "default", 0, time.time_ns())["5b8e..."].span_count
    """
    c = fetch_columns(
        store,
        Q.WINDOW_INDEX,
        {"project": project, "since": ns_to_datetime(since_ns), "until": ns_to_datetime(until_ns)},
    )
    return _skeletons(project, c)


def _skeletons(project: str, index: Mapping[str, list[Any]]) -> dict[str, TraceData]:
    """One row-less ``TraceData`` per row of a trace index query (LOAD_INDEX's columns)."""
    return {
        trace_id: TraceData(
            project,
            trace_id,
            start_ns=int(start),
            end_ns=int(end),
            span_count=int(spans),
            has_root=bool(has_root),
        )
        for trace_id, start, end, spans, has_root in zip(
            index.get("trace_id", ()),
            index.get("start_ns", ()),
            index.get("end_ns", ()),
            index.get("spans", ()),
            index.get("has_root", ()),
            strict=True,
        )
    }


def fill_traces(
    store: Queryable,
    project: str,
    traces: dict[str, TraceData],
    since_ns: int | None = None,
    *,
    by_time: bool = False,
    only: Callable[[BatchColumns], set[str] | None] | None = None,
    settled_before_ns: int | None = None,
) -> BatchColumns:
    """Read the typed rows (and the raw spans they miss) of ``traces``, row-less values from
    the trace index, into them: one query per typed table and one over ``otel_traces`` for the
    whole batch, bounded by its earliest start (``since_ns``, else the traces' own) and its
    latest end.

    ``by_time``: the batch is every trace that started in its time range (a window pass's
    batch), so the typed tables are read by time alone (``TIME_FILTER``); rows of other traces
    that overlap the range are dropped here. Without it, or when a trace of the batch ends
    more than :data:`BY_TIME_MAX_TAIL_NS` after the batch's last start (the range would hold
    far more than the batch), they are read by trace id (a sparse batch: an incremental pass's
    traces may lie days apart).

    Returns the typed reads as Arrow tables, for the detectors' column-wise screens.
    ``only``: given those (every read done, no row a Python value yet), the traces whose rows
    are wanted (None: all). The others keep no rows: the engine's screens let them through to
    no rule. Traces the loader may reshape (no run, a failed run, inferred structure) are
    always filled.

    A trace with a stored binding that still holds (``_bindings.read_bindings``) takes it and
    none of the reads: it counts as reshaped (every rule runs on it, as on the trace it was
    bound from). ``settled_before_ns``: the traces this call reshaped that ended before it get
    their binding encoded into ``BatchColumns.bindings``, for the engine to store (None: none),
    unless a newer analyzer build stored one (its row is left to it).

    >>> # fill_traces(store, "default", index_window(store, "default", 0, time.time_ns()))
    """
    earliest = since_ns if since_ns is not None else min(t.start_ns for t in traces.values())
    latest_end = max(t.end_ns for t in traces.values())
    params: dict[str, Any] = {
        "project": project,
        "since": ns_to_datetime(max(0, earliest - PARTITION_SLACK_NS)),
        "until": ns_to_datetime(latest_end + PARTITION_SLACK_NS),
    }
    latest_start = max(t.start_ns for t in traces.values())
    by_time = by_time and latest_end <= latest_start + BY_TIME_MAX_TAIL_NS
    if not by_time:
        params["ids"] = ",".join(sorted(traces))
    typed_filter = Q.TIME_FILTER if by_time else Q.TYPED_FILTER

    batch = BatchColumns()
    binding_filter = Q.BINDING_TIME_FILTER if by_time else Q.BINDING_TRACE_FILTER
    bound, newer = read_bindings(
        store, Q.LOAD_BINDINGS.format(filter=binding_filter), params, traces
    )
    if bound:
        batch.reshaped |= bound
        traces = {i: t for i, t in traces.items() if i not in bound}
        if not traces:
            return batch

    def read(attr: str, sql: str, **extra: str) -> Any:
        table = store.query_arrow(sql.format(filter=typed_filter), {**params, **extra})
        if table.num_rows:
            setattr(batch, attr, table)
        return table

    runs = read("runs", Q.LOAD_RUNS)
    # Plan JSON and captured tool arguments only for traces whose run failed (plan propagation
    # reads them), and for traces without a typed run or with an inferred run of unknown
    # outcome (a grouping run is bound later, from the root's status; an inferred run may have
    # failed for good at a step).
    failed = _failed_runs(traces, batch)
    joined = ",".join(sorted(failed))
    plans = read("plans", Q.LOAD_PLANS, failed=joined)
    steps = read("plan_steps", Q.LOAD_PLAN_STEPS)
    llm = read("llm", Q.LOAD_LLM_BY_PARENT)
    attempts = read("attempts", Q.LOAD_STEP_ATTEMPTS)
    tools = read("tools", Q.LOAD_TOOL_CALLS, failed=joined)
    raw = _read_raw(store, params, traces, batch)
    keep = only(batch) if only is not None else None
    if keep is not None:
        keep |= failed | _inferred(batch)
    if keep is not None and not keep >= set(traces):
        traces = {i: t for i, t in traces.items() if i in keep}
        ids = _id_array(traces)
        runs, plans, steps, llm, attempts, tools = (
            _of(table, ids) for table in (runs, plans, steps, llm, attempts, tools)
        )
    runs, plans, attempts, tools = (
        _in_order(t, "start_ns") for t in (runs, plans, attempts, tools)
    )
    steps = _in_order(steps, "plan_version", "position")
    _attach(traces, "runs", Run, _lists(runs))
    _attach(traces, "plans", Plan, _lists(plans))
    _attach(traces, "plan_steps", PlanStep, _lists(steps))
    get = traces.get
    c = _lists(llm)
    for trace_id, parent, tokens, cost, calls, span_ids in zip(
        c.get("trace_id", ()),
        c.get("parent_span_id", ()),
        c.get("tokens", ()),
        c.get("cost_usd", ()),
        c.get("calls", ()),
        c.get("span_ids", ()),
        strict=True,
    ):
        if (t := get(trace_id)) is not None:
            t.llm_spans += int(calls)
            t.llm_by_parent[parent] = (int(tokens), float(cost))
            t.llm_parents.update(dict.fromkeys(span_ids, parent))
    c = _lists(attempts)
    if c:
        usage = [
            t.llm_by_parent.get(span_id, _NO_USAGE)
            if (t := get(trace_id)) is not None
            else _NO_USAGE
            for trace_id, span_id in zip(c["trace_id"], c["span_id"], strict=True)
        ]
        c["fingerprint"] = [
            fp if fp or status not in ("error", "skipped") else _fingerprint(error_type, message)
            for fp, status, error_type, message in zip(
                c["fingerprint"], c["status"], c["error_type"], c["status_message"], strict=True
            )
        ]
        c["tokens"] = [u[0] for u in usage]
        c["cost_usd"] = [u[1] for u in usage]
        c["message"] = c["status_message"]
        c["context_recorded"] = list(map(_recorded, c["context_keys"], c["context_tokens"]))
        _attach(traces, "attempts", Attempt, c)
    _attach(traces, "tools", ToolCall, _lists(tools))
    if raw is not None:
        _apply_raw(traces, raw, batch)
        _failed_titles(store, params["project"], traces)
    batch.reshaped.update(_tool_events(store, params["project"], list(traces.values())))
    for t in traces.values():
        if _agent_roots(t):
            batch.reshaped.add(t.trace_id)
    # a trace with no plan and executor runs may state its plan in a planner's answer
    # (observed.read_plans): what its calls were asked and what they and its runs answered;
    # also one with no structure but an inferred run at most, whose framework calls may be the
    # runs (observed.bind, invocations), also when the span model read a plan in an LLM call
    # of its (the calls of an app's traced functions: what they were given and gave back)
    planless = [
        t
        for t in traces.values()
        if (not t.plans or not (t.attempts or t.runs or any(not p.inferred for p in t.plans)))
        and (
            any(a.inferred for a in t.attempts)
            or (not t.attempts and t.raw is not None and all(r.inferred for r in t.runs))
        )
    ]
    asked = _requests(
        store,
        params["project"],
        [
            t
            for t in traces.values()
            if any(p.inferred for p in t.plans) and any(a.inferred for a in t.attempts)
        ]
        + planless,
    )
    answers = _answers(store, params["project"], planless)
    # an attempt whose step name is no step of its trace's plan may name its step in its span's
    # name (an agent role every step shares): the span names of those traces' inferred attempts
    unnamed = [
        t
        for t in traces.values()
        if t.plans
        and any(
            a.inferred and a.step_id not in {s.step_id for s in t.plan_steps} for a in t.attempts
        )
    ]
    names = _attempt_names(store, params["project"], unnamed)
    handed = _handed(store, params["project"], list(traces.values()))
    components: dict[str, list[str]] = {}
    for t in traces.values():
        prompts = asked.get(t.trace_id, {})
        if _bind_observed(
            t,
            prompts,
            answers.get(t.trace_id, {}),
            components,
            names.get(t.trace_id, {}),
            handed.get(t.trace_id, {}),
        ):
            batch.reshaped.add(t.trace_id)
        if prompts:  # a trace not read takes the prompts binding gave its read plans
            asked[t.trace_id] = prompts
    _component_calls(store, params["project"], traces, components)
    batch.reshaped.update(_load_prompts(store, params["project"], traces, asked))
    if settled_before_ns is not None:
        for trace_id in batch.reshaped - bound - newer:
            t = traces[trace_id]
            if t.end_ns < settled_before_ns and (text := encode(t)) is not None:
                batch.bindings[trace_id] = text
    return batch


Handed = dict[str, tuple[str, int, tuple[HandedResult, ...]]]
"""A trace's LLM calls handed a tool's error: span id -> parent, start, the results
(``observed.function_results``)."""


def _handed(store: Queryable, project: str, wanted: list[TraceData]) -> dict[str, Handed]:
    """The LLM calls of those of ``wanted`` (traces of another convention with a tool call that
    ended OK) handed a tool's result as an error (``LOAD_FUNCTION_RESULTS``), by trace."""
    wanted = [
        t
        for t in wanted
        if t.llm_parents
        and any(not c.failed for c in t.tools)
        and (any(a.inferred for a in t.attempts) or any(r.inferred for r in t.runs))
    ]
    if not wanted:
        return {}
    out: dict[str, Handed] = {}
    for trace_id, span_id, parent, start_ns, results in _of_traces(
        store,
        Q.LOAD_FUNCTION_RESULTS,
        project,
        wanted,
        ("trace_id", "span_id", "parent_span_id", "start_ns", "results"),
    ):
        if said := function_results(dict(results)):
            out.setdefault(trace_id, {})[span_id] = (parent, int(start_ns), said)
    return out


def _tool_events(store: Queryable, project: str, wanted: list[TraceData]) -> set[str]:
    """The tool calls of those of ``wanted`` (traces of another convention) that GenAI events
    alone may say (``observed.reads_tool_events``) as ``observed.event_calls`` reads them
    from their events (``LOAD_TOOL_EVENTS``): tool calls under the span that asked, each with
    a skeleton raw span (its name, status and error message). The traces changed."""
    # (a trace with a tool call never does: its nodes are not built)
    wanted = [
        t
        for t in wanted
        if not t.tools
        and reads_tool_events(
            [*_typed_nodes(t), *(SpanNode(s, p, A.KIND_LLM, "") for s, p in t.llm_parents.items())]
        )
    ]
    if not wanted:
        return set()
    events: dict[str, list[ToolEvent]] = {}
    for trace_id, span_id, time_ns, name, attributes in _of_traces(
        store,
        Q.LOAD_TOOL_EVENTS,
        project,
        wanted,
        ("trace_id", "span_id", "time_ns", "name", "attributes"),
    ):
        event = ToolEvent(span_id, int(time_ns), name, dict(attributes))
        events.setdefault(trace_id, []).append(event)
    # and those only their conversation says (a model call's answer, a later request's history)
    for trace_id, span_id, parent, start_ns, end_ns, messages in _of_traces(
        store,
        Q.LOAD_CONVERSATIONS,
        project,
        wanted,
        ("trace_id", "span_id", "parent_span_id", "start_ns", "end_ns", "messages"),
    ):
        said = conversation_tool_events(span_id, parent, int(start_ns), int(end_ns), dict(messages))
        events.setdefault(trace_id, []).extend(said)
    changed = set()
    for t in wanted:
        found = event_calls(events.get(t.trace_id, ()))
        for call in found:
            t.tools.append(
                _inferred_call(
                    call.span_id,
                    call.parent_span_id,
                    call.tool,
                    call.status_code,
                    call.start_ns,
                    call.end_ns,
                )._replace(
                    args_key=_args_key(call.arguments),
                    error_type=call.error_type,
                    arguments=call.arguments,
                    result=call.result,
                )
            )
            if t.raw is not None:
                t.raw.append(
                    RawSpan(
                        call.span_id,
                        call.parent_span_id,
                        call.name,
                        call.status_code,
                        call.message,
                        call.start_ns,
                        call.end_ns,
                    )
                )
        if found:
            changed.add(t.trace_id)
            t.tools.sort(key=lambda c: c.start_ns)
            t._memo.clear()
    return changed


def _run_nodes(t: TraceData) -> list[SpanNode]:
    """The runs of a loaded trace as span nodes (kind, parent, start, status, inferred)."""
    return [
        SpanNode(
            r.span_id,
            r.parent_span_id,
            A.KIND_RUN,
            r.agent,
            inferred=r.inferred,
            failed=r.status_code == "Error",
            start_ns=r.start_ns,
        )
        for r in t.runs
    ]


def _typed_nodes(t: TraceData) -> list[SpanNode]:
    """The runs, plans, step attempts and tool calls of a loaded trace as span nodes (their
    kind, parent, start, status and whether the span model inferred them), for the rules of
    ``planscope_collector.observed`` that read no more."""
    return [
        *_run_nodes(t),
        *(
            SpanNode(p.span_id, p.parent_span_id, A.KIND_PLAN, "", inferred=p.inferred)
            for p in t.plans
        ),
        *(
            SpanNode(a.span_id, a.parent_span_id, A.KIND_STEP, "", inferred=a.inferred)
            for a in t.attempts
        ),
        *(SpanNode(c.span_id, c.parent_span_id, A.KIND_TOOL, "", inferred=False) for c in t.tools),
    ]


def _agent_roots(t: TraceData) -> bool:
    """A trace of agent runs with no application span over them (``observed.agent_roots``):
    one run no span stands for (``observed.NO_SPAN``), the agent runs its step attempts, each
    named after its agent. True when the trace was changed."""
    if len(t.runs) < 2:  # agent_roots needs several runs: most traces end here, nothing built
        return False
    typed = t.typed_span_ids()
    untyped = [
        SpanNode(
            s.span_id,
            s.parent_span_id,
            A.KIND_OTHER,
            s.name,
            failed=s.status_code == "Error",
            start_ns=s.start_ns,
            message=s.message,
        )
        for s in t.raw or ()
        if s.span_id not in typed
    ]
    runs = {r.span_id: r for r in t.runs}
    agents = {r.span_id: r.agent for r in t.runs}
    found = agent_roots(_run_nodes(t) + untyped, agents)
    if found is None:
        return False
    roots = [runs[span_id] for span_id in found.attempts]
    t.runs = [
        Run(
            span_id=NO_SPAN,
            parent_span_id="",
            run_id=roots[0].run_id,
            variant="",
            outcome="failure" if found.failed else "unknown",
            outcome_reason=found.reason,
            budget={},
            start_ns=roots[0].start_ns,
            end_ns=max(r.end_ns for r in roots),
            status_code="Error" if found.failed else "Unset",
            inferred=True,
        )
    ]
    for r, agent in zip(roots, found.agents, strict=True):
        failed = r.status_code == "Error"
        message = r.outcome_reason if failed else ""
        tokens, cost = t.llm_by_parent.get(r.span_id, _NO_USAGE)
        t.attempts.append(
            _inferred_attempt(
                r.span_id, "", agent, 0, failed, message, r.start_ns, r.end_ns
            )._replace(tokens=tokens, cost_usd=cost)
        )
    t.attempts.sort(key=_started)
    t._memo.clear()
    return True


def _inferred_attempt(
    span_id: str,
    parent_span_id: str,
    step_id: str,
    attempt: int,
    failed: bool,
    message: str,
    start_ns: int,
    end_ns: int,
) -> Attempt:
    """A step attempt the loader inferred from a span no typed row stands for: its step, number,
    outcome, message and times are all that is known (no plan, context or executor)."""
    return Attempt(
        span_id=span_id,
        parent_span_id=parent_span_id,
        plan_id="",
        plan_version=0,
        step_id=step_id,
        attempt=attempt,
        status="error" if failed else "ok",
        error_type="",
        fingerprint=_fingerprint("", message) if failed else "",
        executor="",
        context_keys=(),
        context_tokens=0,
        self_assessment="",
        depth=0,
        input_hash="",
        start_ns=start_ns,
        end_ns=end_ns,
        message=message,
        inferred=True,
    )


def _inferred_call(
    span_id: str,
    parent_span_id: str,
    tool: str,
    status_code: str,
    start_ns: int,
    end_ns: int,
    error_type: str = "",
) -> ToolCall:
    """A tool call the loader inferred (a span or event no typed row stands for): its tool,
    status (and error type) and times; bound to a step later, like any tool call."""
    return ToolCall(
        span_id=span_id,
        parent_span_id=parent_span_id,
        step_id="",
        attempt=0,
        plan_id="",
        plan_version=0,
        tool=tool,
        resource="",
        effect="",
        args_key="",
        error_type=error_type,
        status_code=status_code,
        start_ns=start_ns,
        duration_ns=max(0, end_ns - start_ns),
    )


def _started(row: Run | Attempt | Plan) -> tuple[int, str]:
    return row.start_ns, row.span_id


class Said(NamedTuple):
    """What one span of a trace with no plan answered (``_answers``)."""

    kind: str
    parent_span_id: str
    start_ns: int
    duration_ns: int
    text: str
    step: str = ""
    """The step an app's attribute on an inferred agent run names (``observed.app_step``)."""
    io: tuple[str, str] = ("", "")
    """What an app's step span recorded as its work's arguments and result
    (``observed.step_io``)."""


def _bind_observed(
    t: TraceData,
    asked: dict[str, str],
    answers: dict[str, Said],
    calls: dict[str, list[str]],
    names: dict[str, str],
    handed: Handed,
) -> bool:
    """Apply the cross-span structure ``planscope_collector.observed`` derives (bound plan
    steps, statuses and numbers of inferred attempts, the step of each tool call, attempts named
    after a plan step, a grouping run and whether it failed for good, container plans dropped,
    step spans that only wrap attempts dropped, what was dropped kept as ``folded``)
    to one loaded trace (``asked``: what its LLM calls were asked, by span id; ``answers``: what
    its LLM calls and inferred agent runs answered and its tool calls were called with, read only
    for a trace with no plan), and the plans read from what a planner said
    (``observed.read_plans``) as its observed plans; the tool calls binding found among its
    unclassified spans become tool calls (their span ids go to ``calls``, by trace);
    ``names``: the span names of inferred attempts, when read (else the raw spans');
    ``handed``: its LLM calls handed a tool's error (:func:`_handed`; the calls binding fails
    for it fail). True when the trace's model may now differ from its typed rows."""
    inferred_plans = [p for p in t.plans if p.inferred]
    if inferred_plans and len(inferred_plans) < len(t.plans):  # declared plans win
        t.plans = [p for p in t.plans if not p.inferred]
        observed = {p.span_id for p in inferred_plans}
        t.plan_steps = [s for s in t.plan_steps if s.plan_span_id not in observed]
        inferred_plans = []
        changed = True
    else:
        changed = False
    foreign = any(a.inferred for a in t.attempts) or any(r.inferred for r in t.runs)
    if not inferred_plans and not foreign and t.runs:
        return changed  # planscope's own structure: nothing to derive
    raw = {s.span_id: s for s in t.raw or ()}
    nodes: dict[str, SpanNode] = {}
    for r in t.runs:
        nodes[r.span_id] = SpanNode(
            r.span_id,
            r.parent_span_id,
            "run",
            "",
            inferred=r.inferred,
            start_ns=r.start_ns,
            answer=answers[r.span_id].text if r.span_id in answers else "",
        )
    for p in t.plans:
        kind = "llm" if p.span_id in t.llm_parents else "plan"
        nodes[p.span_id] = SpanNode(
            p.span_id,
            p.parent_span_id,
            kind,
            "",
            start_ns=p.start_ns,
            request=asked.get(p.span_id, ""),
        )
    for a in t.attempts:
        nodes[a.span_id] = SpanNode(
            a.span_id,
            a.parent_span_id,
            "step",
            raw[a.span_id].name if a.span_id in raw else names.get(a.span_id, ""),
            step_name=a.step_id,
            inferred=a.inferred,
            failed=a.status == "error",
            start_ns=a.start_ns,
            message=raw[a.span_id].message if a.span_id in raw else "",
            duration_ns=max(0, a.end_ns - a.start_ns),
            answer=answers[a.span_id].text if a.inferred and a.span_id in answers else "",
            app_step=answers[a.span_id].step if a.inferred and a.span_id in answers else "",
        )
    for c in t.tools:
        nodes[c.span_id] = SpanNode(
            c.span_id,
            c.parent_span_id,
            "tool",
            "",
            tool=c.tool,
            failed=c.failed,
            start_ns=c.start_ns,
            duration_ns=c.duration_ns,
            message=raw[c.span_id].message if c.span_id in raw else "",
            # a call no span of its own says (_tool_events): what it was called with
            answer=(answers[c.span_id].text if c.span_id in answers else "") or c.arguments,
            io=answers[c.span_id].io if c.span_id in answers else ("", ""),
        )
    for s in raw.values():
        if s.span_id not in nodes:
            nodes[s.span_id] = SpanNode(
                s.span_id,
                s.parent_span_id,
                "llm" if s.span_id in t.llm_parents else "other",  # an attempt's own work
                s.name,
                failed=s.status_code == "Error",
                start_ns=s.start_ns,
                duration_ns=max(0, s.end_ns - s.start_ns),
                message=s.message,
                request=asked.get(s.span_id, ""),
                answer=answers[s.span_id].text if s.span_id in answers else "",
                io=answers[s.span_id].io if s.span_id in answers else ("", ""),
                app_step=answers[s.span_id].step if s.span_id in answers else "",
            )
    for span_id, said in answers.items():  # a call that answered, also when no raw span is
        if said.kind == "llm" and span_id not in nodes:
            nodes[span_id] = SpanNode(
                span_id,
                said.parent_span_id,
                "llm",
                "",
                start_ns=said.start_ns,
                duration_ns=said.duration_ns,
                request=asked.get(span_id, ""),
                answer=said.text,
            )
    if not raw:  # every span is typed: the LLM calls from their typed rows (what they were
        # asked names the step of an attempt that is not named after it)
        for span_id, parent in t.llm_parents.items():
            request = asked.get(span_id, "")
            nodes.setdefault(span_id, SpanNode(span_id, parent, "llm", "", request=request))
    for span_id, (parent, start_ns, results) in handed.items():
        node = nodes.get(span_id) or SpanNode(span_id, parent, "llm", "")
        nodes[span_id] = replace(node, start_ns=node.start_ns or start_ns, handed=results)
    observed = {p.span_id for p in inferred_plans}
    steps = [
        ObservedStep(ps.plan_span_id, ps.step_id, ps.tool, ps.position)
        for ps in t.plan_steps
        if ps.plan_span_id in observed
    ]
    b = bind(nodes.values(), steps)
    if b.run_span_id is not None and b.run_span_id in raw:
        grouping = raw[b.run_span_id]
        failed_run = grouping.status_code == "Error"
        t.runs.append(
            Run(
                span_id=grouping.span_id,
                parent_span_id="",
                run_id=t.trace_id,
                variant="",
                outcome="failure" if failed_run else "unknown",
                outcome_reason=grouping.message if failed_run else "",
                budget={},
                start_ns=grouping.start_ns,
                end_ns=grouping.end_ns,
                status_code=grouping.status_code,
                inferred=True,
            )
        )
    if b.failed_for_good is not None:
        # an SDK that never fails its trace: the run failed where a step gave up for good
        t.runs = [
            r._replace(outcome="failure", outcome_reason=r.outcome_reason or b.given_up_reason)
            if r.inferred and r.outcome == "unknown"
            else r
            for r in t.runs
        ]
    for read in b.read_plans:
        planner = nodes[read.span_id]
        # a plan no LLM span states (a traced function's): its prompt is what the attempt
        # that stated it asked (the objective of a failed run: _load_prompts)
        if read.span_id not in asked and (prompt := b.asked.get(planner.parent_span_id)):
            asked[read.span_id] = prompt
        t.plans.append(
            Plan(
                span_id=read.span_id,
                parent_span_id=planner.parent_span_id,
                plan_id="",
                version=0,
                scope="",
                replan_reason="",
                step_count=len(read.steps),
                json_valid=True,
                start_ns=planner.start_ns,
                inferred=True,
                json=read.json,
            )
        )
        t.plan_steps.extend(
            PlanStep(read.span_id, "", 0, p.position, p.step_id, "", "", p.tool, (), (), (), False)
            for p in read.steps
        )
    if b.lineage:  # a re-plan's rewritten sentence is its step as first written
        t.plan_steps = [
            s._replace(step_id=b.first_written(s.plan_span_id, s.step_id)) for s in t.plan_steps
        ]
    t.folded = b.containers | b.wrappers
    if b.containers:
        t.plans = [p for p in t.plans if p.span_id not in b.containers]
        t.plan_steps = [s for s in t.plan_steps if s.plan_span_id not in b.containers]
    attempts = []
    for a in t.attempts:
        if a.span_id in b.wrappers:  # only wraps other attempts: their work is its
            continue
        if a.span_id in b.attempts:
            failed = a.span_id in b.failed
            tool_said = b.said.get(a.span_id, "") if failed else ""
            # a framework's own error (a guardrail that tripped) says less than the tool
            # error the executor gave up on: the attempt's error carries both
            message = (
                a.message
                if not tool_said or tool_said in a.message
                else f"{a.message}: {tool_said}".lstrip(": ")
            )
            a = a._replace(
                step_id=b.step_of(a.span_id, a.step_id),
                attempt=b.attempts[a.span_id],
                status="error" if failed else a.status,
                message=message,
                # an attempt binding found failed (its span ended OK) has the error it gave up
                # on: its fingerprint is that error's, as a failed span's is its status's
                fingerprint=a.fingerprint
                or (_fingerprint(a.error_type, message) if failed else ""),
            )
        attempts.append(a)
    for span_id in sorted(b.promoted, key=lambda s: (raw[s].start_ns, s)):
        span = raw[span_id]
        failed = span_id in b.failed
        # a module that survived its tool's failure says nothing itself: its last failed call does
        message = (span.message or b.said.get(span_id, "")) if failed else span.message
        attempts.append(
            _inferred_attempt(
                span.span_id,
                span.parent_span_id,
                b.step_of(span_id, span.name),
                b.attempts[span_id],
                failed,
                message,
                span.start_ns,
                span.end_ns,
            )
        )
    t.attempts = sorted(attempts, key=lambda a: a.start_ns)
    # only the failed attempts' requests: no rule reads another's, and a stored binding holds
    # what the trace keeps (every request was a fifth of its text)
    t.asked = {
        a.span_id: b.asked[a.span_id] for a in t.attempts if a.failed and a.span_id in b.asked
    }
    by_span = {a.span_id: a for a in t.attempts}
    for span_id, tool in b.calls.items():  # arguments and result: _component_calls
        span = raw[span_id]
        # a call that returned an error envelope failed (observed._function_calls)
        kind, _ = b.returned.get(span_id, ("", ""))
        status = "Error" if span_id in b.returned else span.status_code
        t.tools.append(
            _inferred_call(
                span_id, span.parent_span_id, tool, status, span.start_ns, span.end_ns, kind
            )
        )
    if b.calls:
        t.tools.sort(key=lambda c: c.start_ns)
    # calls whose spans say what they were called with only in events (Strands Agents): their
    # arguments and result are read as a component call's
    evented = [c.span_id for c in t.tools if not c.arguments and c.span_id in answers]
    if b.calls or evented:
        calls[t.trace_id] = [*b.calls, *evented]
    t.tools = [
        c._replace(
            step_id=by_span[b.actions[c.span_id]].step_id,
            attempt=by_span[b.actions[c.span_id]].attempt,
        )
        if not c.step_id and b.actions.get(c.span_id) in by_span
        else c
        for c in t.tools
    ]
    # a failed call's error text is its span's (a typed row records none)
    t.tools = [
        c._replace(message=raw[c.span_id].message)
        if c.failed and not c.message and c.span_id in raw
        else c
        for c in t.tools
    ]
    if failing := b.typed_failures():  # a typed call handed to the model as an error
        t.tools = [
            c._replace(status_code="Error", message=c.message or failing[c.span_id])
            if c.span_id in failing
            else c
            for c in t.tools
        ]
    if b.call_io:  # what an agent reported of calls whose spans record neither (AutoGen)
        t.tools = [
            c._replace(arguments=io[0], args_key=_args_key(io[0]), result=io[1])
            if not c.arguments and (io := b.call_io.get(c.span_id))
            else c
            for c in t.tools
        ]
    _number_plans(t)
    t._memo.clear()
    return True


def _number_plans(t: TraceData) -> None:
    """Number a trace's plans read from its structure (every plan inferred, all with one id
    and no version: the span model and ``observed.read_plans`` give none, 0) by start from 1,
    as the SDK numbers a plan's versions and the API and dashboard show them (v1, v2, ...),
    and give each of the trace's attempts of that plan id the version of the last plan
    started before it (the plan it ran under; the first plan's before any started). Tool
    calls keep theirs: a plan read from an executor's own model call (a step it delegates,
    restated) is counted too, and a tool loop is one whatever such plans fall between its
    calls.

    >>> p = Plan("p1", "", "", 0, "", "", 1, True, 10, inferred=True)
    >>> a = _inferred_attempt("a", "", "s", 1, True, "", 40, 45)
    >>> t = TraceData("p", "t", plans=[p._replace(span_id="p2", start_ns=30), p], attempts=[a])
    >>> _number_plans(t)
    >>> [(p.span_id, p.version) for p in t.plans], t.attempts[0].plan_version
    ([('p1', 1), ('p2', 2)], 2)
    """
    plans = t.plans
    if not plans or not all(p.inferred for p in plans):
        return
    plan_id, version = plans[0].plan_id, 0
    if {(p.plan_id, p.version) for p in plans} != {(plan_id, version)}:
        return  # numbered already (a stored binding's, or the span model's)
    t.plans = [p._replace(version=i) for i, p in enumerate(sorted(plans, key=_started), 1)]
    numbered = {p.span_id: p.version for p in t.plans}
    t.plan_steps = sorted(
        (
            s._replace(plan_version=numbered.get(s.plan_span_id, s.plan_version))
            for s in t.plan_steps
        ),
        key=lambda s: (s.plan_version, s.position),
    )
    starts = [p.start_ns for p in t.plans]
    t.attempts = [
        a._replace(plan_version=max(1, bisect_right(starts, a.start_ns)))
        if (a.plan_id, a.plan_version) == (plan_id, version)
        else a
        for a in t.attempts
    ]


def _args_key(arguments: str) -> str:
    """The key of a call's arguments (equal arguments, equal keys)."""
    return hashlib.blake2b(arguments.encode(), digest_size=8).hexdigest() if arguments else ""


def _load_prompts(
    store: Queryable,
    project: str,
    traces: dict[str, TraceData],
    known: dict[str, dict[str, str]],
) -> set[str]:
    """A failed run that declares no objective (a grouping run under a foreign root, an agent
    span without an input) takes the objective its first plan states (the plan JSON's
    ``objective``, as planscope plans write it), else its planner's prompt: the user text of
    the LLM call that produced the first plan, else of the trace's first LLM call with an input.
    What the user asked for is then not a suspect (plan propagation subtracts the objective
    from what a failure names). A prompt is more than the objective (notes, earlier results,
    the failure that asked for a re-plan: what may carry the wrong value), so a stated
    objective wins, and what the prompt states twice differently for one thing is left out
    (:func:`_uncontested`). ``known``: the requests already read for binding (:func:`_requests`: a
    trace read has an entry, also when none of its calls was asked anything) or given by it;
    one ``otel_traces`` query for the other traces that need a prompt. Returns the ids of the
    traces whose runs may have taken an objective."""
    wanted: dict[str, TraceData] = {}
    stated_ids: set[str] = set()
    for t in traces.values():
        if not t.runs or any(r.objective for r in t.runs):
            continue
        if not any(r.outcome == "failure" for r in t.runs):
            continue
        stated = next((p.objective for p in _first(t.plans) if p.objective), "")
        if stated:
            _set_objective(t, stated)
            stated_ids.add(t.trace_id)
        else:
            wanted[t.trace_id] = t
    fetched = _requests(store, project, [t for t in wanted.values() if t.trace_id not in known])
    for trace_id, t in wanted.items():
        by_span = known.get(trace_id) or fetched.get(trace_id)
        if not by_span:
            continue
        planner = [p for p in _first(t.plans) if p.span_id in by_span]
        prompt = by_span[planner[0].span_id] if planner else next(iter(by_span.values()))
        _set_objective(t, _uncontested(prompt))
    return stated_ids | set(wanted)


_PAIRS = (
    # a quoted key (JSON, a Python literal) and a quoted, numeric or literal value
    re.compile(
        r"""(?P<q>["'])(?P<key>[^"'\\\n]+)(?P=q)\s*:\s*"""
        r"""(?P<value>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|True|False)"""
    ),
    # a line "key: value" / "- **Key** = value": a short key, the value to the end of the line
    # (not a JSON object or list: a record's line, "Booking: {...}", states the pairs in it)
    re.compile(
        r"^[ \t]*(?:[-*+]|\d+[.)])?[ \t]*[*_`]*(?P<key>[A-Za-z][\w-]*(?:[ \t][\w-]+){0,2})[*_`]*"
        r"[ \t]*[:=][ \t]*(?P<value>(?![{\[])\S.*?)[ \t]*$",
        re.MULTILINE,
    ),
    # an inline "key=value" of a list ("region=north; seats=4"): a word key, "=" with no space,
    # a value to the next separator (not a URL's query: "?a=1&b=2")
    re.compile(r"(?<![\w?&=/.-])(?P<key>[A-Za-z][\w-]*)=(?P<value>[^\s;,&=]+)(?=[;,\s]|$)"),
)


def _pair_key(name: str) -> str:
    """A pair's key (or an argument's name) compared case- and separator-blind.

    >>> _pair_key("Max RA"), _pair_key("max-ra")
    ('max_ra', 'max_ra')
    """
    return "_".join(_KEY_WORD.findall(name.lower()))


_KEY_WORD = re.compile(r"[a-z0-9]+")


def _uncontested(prompt: str) -> str:
    r"""A prompt without the values it states twice, differently, for one thing (the page's
    facts and a note that overrides one): which of them the user asked for the prompt does not
    say, so neither is the objective's. A pair is a quoted key (JSON, a Python literal) with its
    value, or a line ``key: value``; keys compare case- and separator-blind. A key stated by
    pairs with different values is contested, and so is a pair's value that the rest of the
    prompt does not state where it states another for the same thing: after the key's words
    ("store WS-1"), or a code of the same shape (``LV-40213`` and ``LV-04213``: letters and
    digits at the same places); both go.

    >>> _uncontested('Fix web-04. {"host": "web-04", "port": 80} {"host": "web-02"}')
    'Fix web-04. {, "port": 80} {}'
    >>> _uncontested("Fix web-04.\n- Host: web-04\nport: 80\nNotes: {'host': 'web-02'}")
    'Fix web-04.\n\nport: 80\nNotes: {}'
    >>> _uncontested('Pay from AC-1290 to depot D1.\nNotes: {"acct": "AC-1209", "depot": "D2"}')
    'Pay from  to depot .\nNotes: {, }'
    >>> _uncontested('Go.\nBooking: {"booking": "B-7", "route": "X-Y"}\nNotes: {"route": "Z-Y"}')
    'Go.\nBooking: {"booking": "B-7", }\nNotes: {}'
    >>> _uncontested("Book it.\nForm: seats=4; day=2027-03-01\nNote: day=2027-03-10")
    'Book it.\nForm: seats=4; \nNote: '
    """

    def key(m: re.Match[str]) -> str:
        return _pair_key(m.group("key"))

    values: dict[str, set[str]] = {}
    pairs: list[tuple[int, int]] = []
    # a pattern is run only on a prompt with its separator (a quoted key's ":", a line's ":" or
    # "=", an inline "="): removing text below adds none
    patterns = [
        p
        for p, marks in zip(_PAIRS, (":", ":=", "="), strict=True)
        if any(mark in prompt for mark in marks)
    ]
    for pattern in patterns:
        for m in pattern.finditer(prompt):
            values.setdefault(key(m), set()).add(m.group("value").strip("\"' ,"))
            pairs.append(m.span())
    contested = {k for k, v in values.items() if len(v) > 1}
    inside = _covered(pairs)
    prose = [t.span() for t in VALUE.finditer(prompt) if not inside(t.start())]
    stated = {prompt[a:b] for a, b in prose}
    shapes: list[str] = []  # of the prose's tokens, made for the first key with a code
    # an ASCII prompt's key words are found in its lower case first (a key's pattern is ASCII:
    # a window without its last word holds no match; other texts fold case in more ways)
    lowered = prompt.lower() if prompt.isascii() else None
    starts = [a for a, _ in prose]
    rivals: set[tuple[int, int]] = set()
    for k, vs in values.items():
        v = next(iter(vs))
        if k in contested or not VALUE.fullmatch(v) or v in stated:
            continue
        # a code has a letter and a digit (a count of the same shape is no code); a key of
        # fewer than three characters names nothing in prose
        shape = _shape(v)
        coded = "9" in shape and not {"A", "a"}.isdisjoint(shape)
        if coded and not shapes:
            shapes = [_shape(prompt[a:b]) for a, b in prose]
        words = k.replace("_", r"[\W_]+") if len(k) >= 3 else ""
        after_key = re.compile(rf"(?<![a-z0-9]){words}\W*$", re.IGNORECASE) if words else None
        other = {prose[i] for i, s in enumerate(shapes) if s == shape} if coded else set()
        if after_key is not None:
            other |= {
                (a, b)
                for a, b in _near(prose, starts, lowered, k.rsplit("_", 1)[-1])
                if after_key.search(prompt, max(0, a - 40), a)
            }
        if other:
            contested.add(k)
            rivals |= other
    for a, b in sorted(rivals, reverse=True):
        prompt = prompt[:a] + prompt[b:]
    for pattern in patterns if contested else ():
        prompt = pattern.sub(lambda m: "" if key(m) in contested else m.group(0), prompt)
    return prompt


def _near(
    prose: list[tuple[int, int]], starts: list[int], lowered: str | None, last: str
) -> Iterable[tuple[int, int]]:
    """The tokens of ``prose`` (``starts``: their start offsets, ascending) whose 40 characters
    before hold ``last`` (a key's last word) in ``lowered`` (the prompt in lower case): those a
    key's words may precede; all of them when ``lowered`` is None (a text that folds case in
    more ways). Found from the word's places, not by a look before each token.

    >>> prose = [(0, 3), (10, 13), (60, 62)]
    >>> list(_near(prose, [0, 10, 60], "abc port: 80" + " " * 45 + "90", "port"))
    [(10, 13)]
    """
    if lowered is None:
        return prose
    found: set[int] = set()
    at = lowered.find(last)
    while at != -1:
        # a token starting at a holds the word in lowered[a - 40 : a]: at + len(last) <= a
        # and a - 40 <= at (the slice starts at 0 for a < 40)
        low, high = at + len(last), at + 40
        found.update(range(bisect_left(starts, low), bisect_right(starts, high)))
        at = lowered.find(last, at + 1)
    return [prose[i] for i in sorted(found)]


def _covered(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """Whether an offset lies in one of ``spans`` (half-open), by bisection over their union.

    >>> inside = _covered([(5, 9), (2, 4), (7, 12)])
    >>> [i for i in range(14) if inside(i)]
    [2, 3, 5, 6, 7, 8, 9, 10, 11]
    """
    starts: list[int] = []
    ends: list[int] = []
    for a, b in sorted(s for s in spans if s[0] < s[1]):
        if ends and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)

    def inside(offset: int) -> bool:
        i = bisect_right(starts, offset) - 1
        return i >= 0 and offset < ends[i]

    return inside


_SHAPES = str.maketrans(
    string.digits + string.ascii_uppercase + string.ascii_lowercase,
    "9" * 10 + "A" * 26 + "a" * 26,
)


def _shape(value: str) -> str:
    """A value's shape: digits as ``9``, capitals as ``A``, small letters as ``a``.

    >>> _shape("LV-40213"), _shape("S-13"), _shape("Nº٣")
    ('AA-99999', 'A-99', 'Aº9')
    """
    if value.isascii():
        return value.translate(_SHAPES)
    return re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", value)))


def _first(plans: list[Plan]) -> list[Plan]:
    return sorted(plans, key=lambda p: p.start_ns)


def _set_objective(t: TraceData, objective: str) -> None:
    t.runs = [r if r.objective else r._replace(objective=objective) for r in t.runs]
    t._memo.clear()


_SLICE_ROWS = 4096
"""Rows of an ``otel_traces`` result made Python values at a time (:func:`_of_traces`): its
texts (prompts, answers) as Python strings and dicts weigh several times their Arrow form."""


def _of_traces(
    store: Queryable,
    sql: str,
    project: str,
    wanted: list[TraceData],
    columns: Sequence[str],
    *,
    by_start: bool = False,
    **extra: str,
) -> Iterator[tuple[Any, ...]]:
    """An ``otel_traces`` query (``{project}``, ``{since}``, ``{until}``, ``{ids}``, and the
    ``extra`` parameters) over the spans of some traces: its rows, as tuples of ``columns``,
    made Python values :data:`_SLICE_ROWS` at a time; ``by_start``: by trace, then start
    (``start_ns``), ordered here, not by the query (sorting its result there held several
    times its size)."""
    import pyarrow.compute as pc

    table = store.query_arrow(
        sql,
        {
            "project": project,
            "since": ns_to_datetime(max(0, min(t.start_ns for t in wanted) - PARTITION_SLACK_NS)),
            "until": ns_to_datetime(max(t.end_ns for t in wanted) + PARTITION_SLACK_NS),
            "ids": ",".join(sorted(t.trace_id for t in wanted)),
        }
        | extra,
    )
    order = (
        pc.sort_indices(table, [("trace_id", "ascending"), ("start_ns", "ascending")])
        if by_start
        else None
    )
    for start in range(0, table.num_rows, _SLICE_ROWS):
        part = (
            table.slice(start, _SLICE_ROWS)
            if order is None
            else table.take(order.slice(start, _SLICE_ROWS))
        )
        yield from zip(*(part.column(c).to_pylist() for c in columns), strict=True)


def _requests(store: Queryable, project: str, wanted: list[TraceData]) -> dict[str, dict[str, str]]:
    """What the LLM calls of some traces were asked (``observed.user_request``), by trace and
    span id, in start order (every trace of ``wanted`` has an entry, empty when none of its
    calls carries a request); one ``otel_traces`` query, none for no traces."""
    if not wanted:
        return {}
    prompts: dict[str, dict[str, str]] = {t.trace_id: {} for t in wanted}
    for trace_id, span_id, messages in _of_traces(
        store, Q.LOAD_PROMPTS, project, wanted, ("trace_id", "span_id", "messages"), by_start=True
    ):
        if text := user_request(dict(messages)):
            prompts[trace_id][span_id] = text  # rows come by start: first wins
    return prompts


def _component_calls(
    store: Queryable, project: str, traces: dict[str, TraceData], calls: dict[str, list[str]]
) -> None:
    """Give the tool calls binding found among unclassified spans (``calls``: their span ids,
    by trace; ``observed.Binding.calls``) the arguments, their key and the result their spans
    recorded; one ``otel_traces`` query, none when there are none."""
    if not calls:
        return
    wanted = [traces[i] for i in calls]
    spans = ",".join(s for ids in calls.values() for s in ids)
    values = {
        span_id: (arguments, key, result)
        for span_id, arguments, key, result in _of_traces(
            store,
            Q.LOAD_COMPONENT_CALLS,
            project,
            wanted,
            ("span_id", "arguments", "args_key", "result"),
            spans=spans,
        )
    }
    for t in wanted:
        t.tools = [
            c._replace(arguments=v[0], args_key=v[1], result=v[2])
            if (v := values.get(c.span_id))
            else c
            for c in t.tools
        ]
        t._memo.clear()


def _attempt_names(
    store: Queryable, project: str, wanted: list[TraceData]
) -> dict[str, dict[str, str]]:
    """The span names of the inferred step attempts of some traces, by trace and span id; one
    ``otel_traces`` query, none for no traces."""
    if not wanted:
        return {}
    out: dict[str, dict[str, str]] = {}
    for trace_id, span_id, name in _of_traces(
        store, Q.LOAD_ATTEMPT_NAMES, project, wanted, ("trace_id", "span_id", "name")
    ):
        out.setdefault(trace_id, {})[span_id] = name
    return out


def _answers(store: Queryable, project: str, wanted: list[TraceData]) -> dict[str, dict[str, Said]]:
    """What the LLM calls and inferred agent runs of some traces answered and what their tool
    calls were called with (``observed.answer``), by trace and span id, with each span's kind,
    parent and start; one ``otel_traces`` query, none for no traces."""
    if not wanted:
        return {}
    out: dict[str, dict[str, Said]] = {}
    for trace_id, span_id, parent, start, duration, kind, inferred, attributes in _of_traces(
        store,
        Q.LOAD_ANSWERS,
        project,
        wanted,
        (
            "trace_id",
            "span_id",
            "parent_span_id",
            "start_ns",
            "duration_ns",
            "kind",
            "inferred",
            "answers",
        ),
    ):
        attrs = dict(attributes)
        text = answer(attrs, kind, bool(inferred))
        step, io = recorded_work(attrs, kind)
        if text or step or any(io):
            out.setdefault(trace_id, {})[span_id] = Said(
                kind, parent, int(start), int(duration), text, step, io
            )
    return out


_budget = lru_cache(maxsize=1 << 10)(parse_json_object)
"""Runs of one agent share a few budget texts; the parsed mapping is shared too (``Run`` is
immutable and its budget only read)."""

_CONVERT: dict[str, Callable[[Any], Any]] = {
    "budget": _budget,
    "json_valid": bool,
    "irreversible": bool,
    "inferred": bool,
    "depends_on": tuple,
    "requires": tuple,
    "produces": tuple,
    "context_keys": tuple,
}
"""Fields whose column value is not already the field's type (Arrow gives ints, floats, strings
and lists as such; an Array column is never NULL)."""


def _attach(traces: dict[str, TraceData], attr: str, row: Any, c: Mapping[str, list[Any]]) -> None:
    """Append one ``row`` (a NamedTuple class) per result row to ``traces[trace_id].<attr>``.

    Columns are matched to the fields by name (each SELECT aliases its columns as the fields
    are named, plus ``trace_id``), never by position; a field the SELECT lacks takes its
    default (and one without a default is an error). Rows are built in one C-level pass
    (``tuple.__new__`` over the zipped columns: no Python frame per row) and handed to each
    trace as a slice of its run of consecutive rows (the loader orders the tables by trace id,
    so a trace is one run; a trace spread over several runs still gets all its rows, in
    order).
    """
    if not c:
        return
    ids = c["trace_id"]
    n = len(ids)
    fields = [
        (map(_CONVERT[f], c[f]) if f in _CONVERT else c[f])
        if f in c
        else repeat(row._field_defaults[f], n)
        for f in row._fields
    ]
    rows = list(map(tuple.__new__, repeat(row, n), zip(*fields, strict=True)))
    get = traces.get
    start = 0
    for trace_id, same in groupby(ids):
        end = start + len(tuple(same))
        if (t := get(trace_id)) is not None:
            getattr(t, attr).extend(rows[start:end])
        start = end


def _recorded(keys: Any, tokens: Any) -> bool:
    """Context keys or a token count on the row: the attempt recorded its context."""
    return bool(keys) or bool(tokens)


_NO_USAGE = (0, 0.0)


def _failed_runs(traces: Mapping[str, TraceData], batch: BatchColumns) -> set[str]:
    """Traces of the batch without a typed run, or with a run that failed or an inferred run of
    unknown outcome (from ``batch.runs``)."""
    import pyarrow.compute as pc

    runs = batch.runs
    if runs is None:
        return set(traces)
    outcome = runs.column("outcome")
    failed = pc.or_(
        pc.equal(outcome, "failure"),
        pc.and_(pc.not_equal(runs.column("inferred"), 0), pc.equal(outcome, "unknown")),
    )
    return (set(traces) - traces_of(runs) | trace_ids(runs, failed)) & set(traces)


def _inferred(batch: BatchColumns) -> set[str]:
    """Traces with a plan or an attempt the span model inferred (the loader may bind them)."""
    import pyarrow.compute as pc

    out: set[str] = set()
    for table in (batch.plans, batch.attempts):
        if table is not None:
            out |= trace_ids(table, pc.not_equal(table.column("inferred"), 0))
    return out


def _id_array(ids: Iterable[str]) -> Any:
    import pyarrow as pa

    return pa.array(sorted(ids), pa.string())


def _of(table: Any, ids: Any) -> Any:
    """The rows of ``table`` whose trace is one of ``ids`` (an Arrow array)."""
    import pyarrow.compute as pc

    return table.filter(pc.is_in(table.column("trace_id"), value_set=ids))


def _in_order(table: Any, *keys: str) -> Any:
    """``table``'s rows by ``trace_id``, then ``keys`` (a stable sort: the order in which the
    rules read a trace's rows)."""
    if table.num_rows < 2:
        return table
    return table.sort_by([("trace_id", "ascending"), *((k, "ascending") for k in keys)])


def _per_trace(table: Any, summed: str = "") -> Counter[str]:
    """Rows of ``table`` (None: none) per trace, or the sum of its column ``summed``."""
    import pyarrow.compute as pc

    out: Counter[str] = Counter()
    if table is None or table.num_rows == 0:
        return out
    if summed:
        sums = table.group_by("trace_id", use_threads=False).aggregate([(summed, "sum")])
        ids, values = sums.column("trace_id"), sums.column(f"{summed}_sum")
    else:
        counts = pc.value_counts(table.column("trace_id"))
        ids, values = counts.field("values"), counts.field("counts")
    out.update(dict(zip(ids.to_pylist(), values.to_pylist(), strict=True)))
    return out


def _typed_counts(batch: BatchColumns) -> Counter[str]:
    """How many spans of each trace the typed tables account for, before binding: runs, plans
    (an observed plan's span that is also a run, a step or an LLM call counted once), attempts,
    tool calls, LLM calls and scheduler spans."""
    import pyarrow.compute as pc

    counts = _per_trace(batch.runs) + _per_trace(batch.attempts) + _per_trace(batch.tools)
    counts += _per_trace(batch.llm, "calls") + _per_trace(batch.scheduling)
    plans = batch.plans
    if plans is not None:
        counts += _per_trace(plans)
        inferred = plans.filter(pc.not_equal(plans.column("inferred"), 0))
        if inferred.num_rows:
            llm = None if batch.llm is None else flatten(batch.llm, (), "span_ids", "span_id")
            one = {"span_id": "span_id"}
            also = stacked([(batch.runs, one), (batch.attempts, one), (llm, {})])
            if also.num_columns > 1:  # else no run, attempt or LLM call: none counted twice
                counts -= _per_trace(
                    inferred.select(["trace_id", "span_id"]).join(
                        also, ["trace_id", "span_id"], join_type="left semi", use_threads=False
                    )
                )
    return counts


class _Raw(NamedTuple):
    """What ``LOAD_RAW`` read for a batch (see :func:`_read_raw`)."""

    table: Any
    ambiguous: set[str]


def _read_raw(
    store: Queryable, params: Mapping[str, Any], traces: dict[str, TraceData], batch: BatchColumns
) -> _Raw | None:
    """What the typed tables miss, from one ``otel_traces`` query (``LOAD_RAW``), decided from
    the batch's typed reads:

    * attempts that recorded an explicitly empty context, in traces whose plan steps require
      keys and that have attempts without any recorded key (the only ones where it matters);
    * for traces with spans outside the typed tables (a central scheduler's, third-party
      spans): their scheduler spans, then, for those still not fully covered, every span's
      skeleton.

    Sets ``batch.context_marked``, ``batch.scheduling``, ``batch.skeletons`` and ``batch.raw``
    (what the screens read); :func:`_apply_raw` puts the rows into the traces.
    """
    import pyarrow.compute as pc

    steps, attempts = batch.plan_steps, batch.attempts
    ambiguous: set[str] = set()
    if steps is not None and attempts is not None:
        unrecorded = pc.and_(
            pc.equal(pc.list_value_length(attempts.column("context_keys")), 0),
            pc.equal(attempts.column("context_tokens"), 0),
        )
        requires = pc.greater(pc.list_value_length(steps.column("requires")), 0)
        ambiguous = trace_ids(steps, requires) & trace_ids(attempts, unrecorded) & set(traces)
    typed = _typed_counts(batch)
    partial = {i for i, t in traces.items() if typed[i] < t.span_count}
    if not ambiguous and not partial:
        return None
    wanted = [traces[i] for i in ambiguous | partial]
    table = store.query_arrow(
        Q.LOAD_RAW,
        {
            "project": params["project"],
            "since": ns_to_datetime(max(0, min(t.start_ns for t in wanted) - PARTITION_SLACK_NS)),
            "until": ns_to_datetime(max(t.end_ns for t in wanted) + PARTITION_SLACK_NS),
            "partial": ",".join(sorted(partial)),
            "ambiguous": ",".join(sorted(ambiguous)),
        },
    )
    if table.num_rows == 0:
        return None
    table = _returned_messages(store, params, table)
    batch.context_marked.update(trace_ids(table, _flag(table, "empty_context", ambiguous)))
    if partial:
        scheduler = table.filter(_flag(table, "scheduler", partial))
        if scheduler.num_rows:
            batch.scheduling = scheduler
            typed += _per_trace(scheduler)
        batch.skeletons.update(i for i in partial if typed[i] < traces[i].span_count)
        if batch.skeletons:
            batch.raw = table.filter(_in(table, batch.skeletons))
    return _Raw(table, ambiguous)


def _returned_messages(store: Queryable, params: Mapping[str, Any], table: Any) -> Any:
    """``table`` (a ``LOAD_RAW`` result) with the whole message of its spans that returned an
    error envelope (``LOAD_RETURNED_MESSAGES``, read for their traces only)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    returned = pc.not_equal(table.column("returned").combine_chunks(), 0)
    if not pc.any(returned).as_py():
        return table
    rows = table.filter(returned)
    said = store.query_arrow(
        Q.LOAD_RETURNED_MESSAGES,
        {
            "project": params["project"],
            "since": ns_to_datetime(
                max(0, pc.min(rows.column("start_ns")).as_py() - PARTITION_SLACK_NS)
            ),
            "until": ns_to_datetime(pc.max(rows.column("end_ns")).as_py() + PARTITION_SLACK_NS),
            "ids": ",".join(sorted(trace_ids(rows, None))),
        },
    )
    whole = dict(zip(_span_keys(said), said.column("message").to_pylist(), strict=True))
    messages = rows.column("message").to_pylist()
    keys = _span_keys(rows)
    replaced = [whole.get(key, message) for key, message in zip(keys, messages, strict=True)]
    at = table.schema.get_field_index("message")
    column = table.column(at).combine_chunks()
    return table.set_column(
        at,
        table.schema.field(at),
        pc.replace_with_mask(column, returned, pa.array(replaced, column.type)),
    )


def _span_keys(table: Any) -> list[tuple[str, str]]:
    """``(trace_id, span_id)`` of each row of ``table``."""
    return list(
        zip(table.column("trace_id").to_pylist(), table.column("span_id").to_pylist(), strict=True)
    )


def _apply_raw(traces: dict[str, TraceData], raw: _Raw, batch: BatchColumns) -> None:
    """The rows :func:`_read_raw` read, into those of ``traces`` they belong to."""
    table, mine = raw.table, set(traces)
    # Rows are picked in Arrow (masks over the whole result), so only the rows and columns each
    # use needs become Python values (a scheduler attribute column is '' on every other span).
    empty = _take(table, _flag(table, "empty_context", raw.ambiguous & mine), ("span_id",))
    marked: dict[str, set[str]] = {}
    for trace_id, span_id in zip(empty.get("trace_id", ()), empty.get("span_id", ()), strict=True):
        marked.setdefault(trace_id, set()).add(span_id)
    for trace_id, spans in marked.items():
        t = traces[trace_id]
        t.attempts = [
            a._replace(context_recorded=True) if a.span_id in spans else a for a in t.attempts
        ]
    if (spans := batch.scheduling) is not None:
        _attach(
            traces,
            "scheduling",
            SchedulerSpan,
            _take(spans, _in(spans, mine), SchedulerSpan._fields),
        )
    still = batch.skeletons & mine
    for trace_id in still:
        traces[trace_id].raw = []
    if still:
        _attach(traces, "raw", RawSpan, _take(batch.raw, _in(batch.raw, still), RawSpan._fields))
        for trace_id in still:
            traces[trace_id].raw = _without_logs(traces[trace_id].raw or [])


def _failed_titles(store: Queryable, project: str, traces: dict[str, TraceData]) -> None:
    """The failed skeleton spans named by a template (Logfire's) get what their name says
    filled in (``RawSpan.title``: a check's name says what it checked); one ``otel_traces``
    query (``LOAD_FAILED_TITLES``) over the traces with a failed skeleton span whose name has a
    template field (``{``: a template without one fills in to its own name), none without."""
    wanted = [
        t
        for t in traces.values()
        if any(s.status_code == A.SPAN_STATUS_ERROR and "{" in s.name for s in t.raw or ())
    ]
    if not wanted:
        return
    titles: dict[str, dict[str, str]] = {}
    for trace_id, span_id, title in _of_traces(
        store, Q.LOAD_FAILED_TITLES, project, wanted, ("trace_id", "span_id", "title")
    ):
        titles.setdefault(trace_id, {})[span_id] = title
    for trace_id, said in titles.items():
        t = traces[trace_id]
        t.raw = [s._replace(title=said[s.span_id]) if s.span_id in said else s for s in t.raw or ()]


def _without_logs(raw: list[RawSpan]) -> list[RawSpan]:
    """A trace's spans but its logs (Logfire's log spans: events of their parent, not work),
    the span an error-level log was logged in failed with its text (``observed.logged_failures``).
    """
    if not any(s.log_level for s in raw):
        return raw
    logged = logged_failures((s.parent_span_id, s.log_level, s.message) for s in raw)
    return [
        s._replace(status_code="Error", message=s.message or logged[s.span_id])
        if s.span_id in logged
        else s
        for s in raw
        if not s.log_level
    ]


def _in(table: Any, trace_ids: set[str]) -> Any:
    """A mask (Arrow) of ``table``'s rows whose ``trace_id`` is one of ``trace_ids``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.is_in(table.column("trace_id"), value_set=pa.array(sorted(trace_ids), pa.string()))


def _flag(table: Any, column: str, trace_ids: set[str]) -> Any:
    """A mask (Arrow) of ``table``'s rows whose 0/1 ``column`` is 1 and whose ``trace_id`` is
    one of ``trace_ids``."""
    import pyarrow.compute as pc

    return pc.and_(pc.not_equal(table.column(column), 0), _in(table, trace_ids))


def _take(table: Any, rows: Any, fields: Sequence[str]) -> dict[str, list[Any]]:
    """The ``rows`` (an Arrow mask; None: all) of a ``LOAD_RAW`` result as Python lists, by
    trace, start and span id: the ``trace_id`` column and ``fields`` (empty: no rows)."""
    picked = table if rows is None else table.filter(rows)
    if picked.num_rows == 0:
        return {}
    picked = _in_order(picked, "start_ns", "span_id")
    have = set(picked.column_names)  # a field the read lacks takes its default (_attach)
    return {f: picked.column(f).to_pylist() for f in ("trace_id", *fields) if f in have}
