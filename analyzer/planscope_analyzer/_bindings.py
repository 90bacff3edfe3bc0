"""Stored bindings: the model the loader gave a settled trace it reshaped, kept in
``planscope_trace_bindings`` (migration 0035) so that later passes read it instead of binding
the trace again.

A trace of another convention has its runs, attempts, tool calls and plans inferred at read
time (its raw spans, what its LLM calls were asked and answered, ``observed.bind``): most of a
full pass's CPU on framework traces (docs/benchmarks.md, "Stored bindings"). The loader
(:func:`planscope_analyzer._load.fill_traces`) encodes each trace it reshaped once the trace has
settled; the engine writes them with the findings (:func:`binding_rows`, the one write path);
the next pass's loader reads the rows of its batch (:func:`read_bindings`) and keeps a row only
when the trace index still gives the trace the span count and end it had when bound (a new span
binds it again) and it was written by this :data:`BINDING_VERSION`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any, get_type_hints

import msgspec

from ._model import TraceData

log = logging.getLogger("planscope.analyzer")

BINDING_VERSION = 50
"""Bumped whenever what a binding holds or how the loader derives it changes
(``planscope_collector.observed``'s mapping, the loader's reshaping): a stored binding of
another version is not read, and the trace is bound afresh; stored again only when no row of a
newer version exists (two builds sharing a store during a rolling upgrade must not replace each
other's rows on every pass)."""

BINDING_NAMES = (
    "Project", "TraceId", "TraceStart", "TraceEnd", "SpanCount", "BindingVersion", "Binding",
    "BoundAt",
)  # fmt: skip
"""Columns of ``planscope_trace_bindings`` rows as the engine writes them."""
BINDING_TYPES = (
    "string", "string", "timestamp[ns]", "timestamp[ns]", "uint64", "uint32", "large_string",
    "timestamp[us]",
)  # fmt: skip
"""The Arrow type of each of :data:`BINDING_NAMES` (a batch's bindings: tens of MB of text)."""

_FIELDS = (
    "runs", "plans", "plan_steps", "attempts", "tools", "scheduling", "raw", "llm_spans",
    "llm_by_parent", "llm_parents", "asked", "folded",
)  # fmt: skip
"""The :class:`TraceData` fields a binding holds, in the order of its JSON array."""

# Decoded straight into the model's types (its named tuples, lists, dicts, frozenset) in C, in
# one pass: ~2x faster than json.loads and building the rows from its lists (docs/benchmarks.md,
# "Typed binding decode"). A text whose values have not the model's types is not a binding
# (msgspec.ValidationError).
_HINTS = get_type_hints(TraceData)
_DECODER = msgspec.json.Decoder(tuple.__class_getitem__(tuple(_HINTS[f] for f in _FIELDS)))


def encode(t: TraceData) -> str | None:
    """What the detectors read of a loaded trace (its rows, LLM usage, skeletons, requests,
    folded spans; not the index's start, end and span count), as JSON text; None when a value
    cannot be written as JSON (the trace is then bound again on every pass).

    >>> t = TraceData("p", "a" * 32, llm_parents={"b": "c"}, folded=frozenset({"d"}))
    >>> u = TraceData("p", "a" * 32)
    >>> decode(u, encode(t)); u == t
    True
    """
    try:
        # no NaN or infinity (not JSON: the decoder would refuse the text on every pass)
        return json.dumps(
            [*(getattr(t, f) for f in _FIELDS[:-1]), sorted(t.folded)],
            separators=(",", ":"),
            check_circular=False,
            allow_nan=False,
        )
    except (TypeError, ValueError) as exc:
        log.warning("trace %s/%s: binding not stored (%s)", t.project, t.trace_id, exc)
        return None


def decode(t: TraceData, text: str) -> None:
    """Put a binding :func:`encode` wrote into the row-less ``t`` (from the trace index); raises
    ``msgspec.DecodeError`` (``msgspec.ValidationError`` when a value has not the model's type)
    and leaves ``t`` as it was when ``text`` is not one."""
    for attr, value in zip(_FIELDS, _DECODER.decode(text), strict=True):
        setattr(t, attr, value)
    t._memo.clear()


def read_bindings(
    store: Any, sql: str, params: Mapping[str, Any], traces: Mapping[str, TraceData]
) -> tuple[set[str], set[str]]:
    """The stored bindings of ``traces`` (row-less, from the trace index) that still hold, put
    into them: ``sql`` (``LOAD_BINDINGS`` with the batch's filter) read with ``params``; a row
    holds when it has this :data:`BINDING_VERSION` and the trace index gives its trace the span
    count and end it had when bound (of several, the newest); one that cannot be decoded is
    skipped (the trace is bound afresh, and stored again). Returns the ids of the traces filled
    and of those that have a row of a newer version: a newer build shares the store (a rolling
    upgrade, or a rollback), and this build binds them in memory without replacing its rows."""
    table = store.query_arrow(sql, {**params, "version": BINDING_VERSION})
    if table.num_rows == 0:
        return set(), set()
    newest: dict[str, tuple[int, int]] = {}  # trace id -> (bound at, row) of its newest match
    newer: set[str] = set()
    get = traces.get
    names = ("trace_id", "spans", "end_ns", "bound_at", "newer")
    columns = (table.column(c).to_pylist() for c in names)
    for row, (trace_id, spans, end_ns, bound_at, by_newer) in enumerate(zip(*columns, strict=True)):
        if by_newer:
            newer.add(trace_id)
            continue
        t = get(trace_id)
        if t is None or t.span_count != spans or t.end_ns != end_ns:
            continue
        if trace_id not in newest or newest[trace_id][0] < bound_at:
            newest[trace_id] = (bound_at, row)
    texts = table.column("binding").to_pylist()
    bound = set()
    for trace_id, (_, row) in newest.items():
        try:
            decode(traces[trace_id], texts[row])
        except msgspec.DecodeError as exc:  # bound afresh
            log.warning("trace %s: stored binding unreadable (%s)", trace_id, exc)
            continue
        bound.add(trace_id)
    return bound, newer


def binding_rows(
    project: str, traces: Mapping[str, TraceData], bindings: Mapping[str, str], now_us: int
) -> Iterable[tuple[Any, ...]]:
    """``planscope_trace_bindings`` rows (:data:`BINDING_NAMES` order) of ``bindings`` (trace
    id → what :func:`encode` wrote) for the traces of ``traces`` they belong to."""
    for trace_id, text in bindings.items():
        t = traces[trace_id]
        yield (
            project,
            trace_id,
            t.start_ns,
            t.end_ns,
            t.span_count,
            BINDING_VERSION,
            text,
            now_us,
        )
