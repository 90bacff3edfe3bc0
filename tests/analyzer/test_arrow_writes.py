"""The engine's writes as Arrow tables (``Store.insert_arrow``) store exactly what the same rows
stored through ``Store.insert_rows`` do: findings (and tombstones), progress and bindings, every
column read back, on the real chDB store."""

from __future__ import annotations

from typing import Any

from planscope_analyzer import _queries as Q
from planscope_analyzer._bindings import BINDING_NAMES, BINDING_TYPES
from planscope_analyzer._engine import _arrow, _tombstone_values, _values
from planscope_analyzer._model import Finding
from planscope_collector.storage import Store

NOW_US = 1_796_000_000_123_456
START_NS = 1_795_999_000_123_456_789


def _finding(project: str, trace_id: str, **over: Any) -> Finding:
    fields: dict[str, Any] = {
        "kind": "runaway_loop",
        "severity": "high",
        "project": project,
        "trace_id": trace_id,
        "run_id": "r1",
        "component": "FleetPlugin-fleet_card_charge",
        "step_id": "charge_card",
        "evidence": ("5ffac9901e4c7c15", "a5e0a58adc38045e"),
        "explanation": "Step 'charge_card' failed 7 attempts — «über» 🚲 in a row.",
        "detail": {"attempts": 7, "tool": "charge", "ratio": 0.1, "nested": {"a": [1, None]}},
        "detector_version": "runaway_loop@11",
        "identity": "charge_card",
        "wasted_tokens": 12345,
        "wasted_cost_usd": 0.1 + 0.2,
        "wasted_ns": 2**63 + 5,
    }
    fields.update(over)
    return Finding(**fields)


def _rows(project: str) -> dict[str, list[tuple[Any, ...]]]:
    trace = "a" * 32
    findings = [
        _values(_finding(project, trace), START_NS, NOW_US),
        _values(
            _finding(project, "b" * 32, evidence=(), detail={}, wasted_cost_usd=0, identity="x"),
            START_NS + 1,
            NOW_US,
        ),
        _tombstone_values(
            project, {"trace_id": trace, "kind": "plan_propagation", "key": "k", "ts": START_NS}, 7
        ),
    ]
    progress = [
        (project, trace, START_NS, 45, 2, "2", NOW_US),
        (project, "b" * 32, 1, 0, 0, "2", 0),
    ]
    bindings = [(project, trace, START_NS, START_NS + 10**9, 45, 46, '[[],"é",{"k":1}]', NOW_US)]
    return {"findings": findings, "analysis_progress": progress, "bindings": bindings}


_TABLES = {
    "findings": (Q.FINDING_NAMES, Q.FINDING_TYPES),
    "analysis_progress": (Q.PROGRESS_NAMES, Q.PROGRESS_TYPES),
    "planscope_trace_bindings": (BINDING_NAMES, BINDING_TYPES),
}


def _read(store: Store, table: str, project: str) -> list[dict[str, Any]]:
    names, types = _TABLES[table]
    columns = ", ".join(
        f"toUnixTimestamp64Nano({n}) AS {n}" if kind.startswith("timestamp") else n
        for n, kind in zip(names, types, strict=True)
    )
    return store.query(
        f"SELECT {columns} FROM {table} WHERE Project = {{p:String}} ORDER BY {', '.join(names)}",
        {"p": project},
    )


def test_arrow_writes_store_what_row_writes_store(store: Store) -> None:
    for project, arrow in (("rows", False), ("arrow", True)):
        rows = _rows(project)
        for table, part in (
            ("findings", "findings"),
            ("analysis_progress", "analysis_progress"),
            ("planscope_trace_bindings", "bindings"),
        ):
            names, types = _TABLES[table]
            if arrow:
                store.insert_arrow(table, _arrow(names, types, rows[part]))
            else:
                store.insert_rows(table, rows[part], names)
    for table in _TABLES:
        by_rows, by_arrow = _read(store, table, "rows"), _read(store, table, "arrow")
        assert by_rows, table
        assert [{**r, "Project": ""} for r in by_arrow] == [{**r, "Project": ""} for r in by_rows]


def test_an_empty_arrow_write_inserts_nothing(store: Store) -> None:
    store.insert_arrow("findings", _arrow(Q.FINDING_NAMES, Q.FINDING_TYPES, []))
    assert store.query("SELECT count() AS n FROM findings")[0]["n"] == 0
