"""Cluster DDL from the same migration files: rendering both ways, parsing by the real ClickHouse
parser, and one shard's local schema executed on the embedded engine."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from planscope_collector.storage import TRACE_COLUMNS, Store, load_migrations, open_store
from planscope_collector.storage._migrations import (
    _ALTER_TABLE_RE,
    _DROP_TABLE_RE,
    LOCAL_SUFFIX,
    SHARDING_KEYS,
    distribute,
    render,
    sharding_key,
    split_statements,
)
from planscope_collector.storage._store import _BOOTSTRAP_SQL

from tests.storage._spans import new_trace_id, planscope_trace

SOURCES = {m.name: m.sql for m in load_migrations()} | {"bootstrap": _BOOTSTRAP_SQL}
DISTRIBUTED_RE = re.compile(
    r"^CREATE TABLE IF NOT EXISTS `(\w+)`\.(\w+) ON CLUSTER `prod` AS `\1`\.(\w+) "
    r"ENGINE = Distributed\(`prod`, `\1`, `(\w+)`, (.+)\)$"
)


def _cluster(source: str, database: str = "default") -> list[str]:
    return split_statements(render(source, "prod", ttl_days=9, database=database, distributed=True))


@functools.cache
def _distributed_tables() -> frozenset[str]:
    return frozenset(
        m.group(2)
        for source in SOURCES.values()
        for statement in _cluster(source)
        if (m := DISTRIBUTED_RE.match(statement))
    )


def _on_distributed(statement: str) -> bool:
    """A Distributed table, or a column change applied to one (its `_local` twin has its own),
    or the `_local` twin of a DROP TABLE (the statement before it drops the table itself)."""
    alter = _ALTER_TABLE_RE.match(statement)
    drop = _DROP_TABLE_RE.match(statement)
    return (
        bool(DISTRIBUTED_RE.match(statement))
        or bool(alter and alter.group(2) in _distributed_tables())
        or bool(drop and drop.group(2).endswith(LOCAL_SUFFIX))
    )


def _undistribute(statements: list[str]) -> list[str]:
    """Back to single-node DDL: drop the Distributed tables, `_local`, ON CLUSTER, Replicated."""
    out = []
    for statement in statements:
        if _on_distributed(statement):
            continue
        statement = re.sub(rf"(`\w+`\.\w+){LOCAL_SUFFIX}\b", r"\1", statement)
        statement = statement.replace(" ON CLUSTER `prod`", "")
        out.append(_ws(re.sub(r"\bReplicated(\w*MergeTree)", r"\1", statement)))
    return out


def _ws(statement: str) -> str:
    return re.sub(r"\s+", " ", statement)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_cluster_ddl_differs_from_single_node_only_where_it_must(name: str) -> None:
    source = SOURCES[name]
    single = split_statements(render(source, ttl_days=9))
    cluster = _cluster(source)
    # 1. nothing but engines, ON CLUSTER, `_local` and the added Distributed tables
    assert _undistribute(cluster) == [_ws(s) for s in single]
    # 2. every MergeTree table got exactly one Distributed table over its `_local` twin
    tables = [s for s in cluster if re.search(r"ENGINE = Replicated\w*MergeTree", s)]
    distributed = [DISTRIBUTED_RE.match(s) for s in cluster]
    pairs = [(m.group(2), m.group(3), m.group(4), m.group(5)) for m in distributed if m]
    assert len(pairs) == len(tables)
    for table, as_table, target, key in pairs:
        assert as_table == target == table + LOCAL_SUFFIX
        created = next(s for s in tables if f"`default`.{target} " in s)
        assert key == sharding_key(created.replace(target, table, 1))
        if table in SHARDING_KEYS:
            assert key == SHARDING_KEYS[table]
        elif re.search(r"^\s*TraceId\s", created, re.MULTILINE):
            assert key == "cityHash64(TraceId)", table
    # 3. every statement runs ON CLUSTER; every local table is replicated
    ddl = [s for s in cluster if s.startswith(("CREATE", "ALTER"))]
    assert ddl and all("ON CLUSTER `prod`" in s for s in ddl)
    # 4. materialized views (created or re-queried) read and write shard-local tables only
    views = [
        s
        for s in cluster
        if s.startswith("CREATE MATERIALIZED VIEW") or re.search(r"\bMODIFY QUERY\b", s)
    ]
    for view in views:
        body = view.split(" ON CLUSTER `prod`", 1)[1]
        refs = re.findall(r"`default`\.(\w+)", body)
        assert refs and all(r.endswith(LOCAL_SUFFIX) for r in refs), view[:120]


def test_every_trace_table_is_sharded_by_trace_id_and_leases_by_key() -> None:
    keys: dict[str, str] = {}
    for source in SOURCES.values():
        for statement in _cluster(source):
            match = DISTRIBUTED_RE.match(statement)
            if match:
                keys[match.group(2)] = match.group(5)
    for table in (
        "otel_traces",
        "otel_traces_trace_id_ts",
        "planscope_runs",
        "planscope_plans",
        "planscope_plan_steps",
        "planscope_step_attempts",
        "planscope_tool_calls",
        "planscope_llm_calls",
        "planscope_trace_index",
    ):
        assert keys[table] == "cityHash64(TraceId)", table
    assert keys["planscope_analysis_leases"] == "cityHash64(Project, LeaseKey)"
    assert keys["schema_migrations"] == "cityHash64(name)"


def test_distributed_rewrites_identifiers_only_never_literals() -> None:
    sql = (
        "CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.v {on_cluster} TO {db}.t AS "
        "SELECT 'FROM `default`.t' AS s, x FROM {db}.src -- {db}.comment\n;"
        "ALTER TABLE {db}.t {on_cluster} ADD COLUMN y UInt8;"
        "ALTER TABLE {db}.t {on_cluster} MODIFY TTL d + toIntervalDay({ttl_days});"
        "CREATE VIEW IF NOT EXISTS {db}.pv {on_cluster} AS SELECT * FROM {db}.t;"
    )
    out = _cluster(sql)
    assert out[0] == (
        "CREATE MATERIALIZED VIEW IF NOT EXISTS `default`.v ON CLUSTER `prod` TO "
        "`default`.t_local AS SELECT 'FROM `default`.t' AS s, x FROM `default`.src_local"
    )
    # a column change goes to the local and the Distributed table, other ALTERs to local only
    assert out[1:3] == [
        "ALTER TABLE `default`.t_local ON CLUSTER `prod` ADD COLUMN y UInt8",
        "ALTER TABLE `default`.t ON CLUSTER `prod` ADD COLUMN y UInt8",
    ]
    assert out[3].startswith("ALTER TABLE `default`.t_local ON CLUSTER `prod` MODIFY TTL")
    assert (
        out[4]
        == "CREATE VIEW IF NOT EXISTS `default`.pv ON CLUSTER `prod` AS SELECT * FROM `default`.t"
    )
    with pytest.raises(Exception, match="needs a cluster"):
        render("SELECT 1", distributed=True)
    assert distribute(["SELECT 1"], "prod") == ["SELECT 1"]


def test_every_cluster_statement_parses_in_clickhouse(store: Store) -> None:
    """The real ClickHouse parser (formatQuery) accepts every statement, Distributed included."""
    count = 0
    for source in SOURCES.values():
        for statement in _cluster(source, database="planscope"):
            formatted = store.query("SELECT formatQuery({q:String}) AS f", {"q": statement})
            assert formatted[0]["f"], statement[:80]
            count += 1
    assert count > 30


def test_one_shard_local_schema_runs_and_its_views_fill_local_tables(tmp_path: Path) -> None:
    """What one shard executes (minus Keeper and remote shards): the `_local` tables and views.

    Inserting into `otel_traces_local` (what a Distributed insert forwards to a shard) must fill
    every derived `_local` table through the views, with nothing written outside `_local`."""
    path = f"chdb://{tmp_path / 'shard'}"
    with open_store(path) as ddl, open_store(path, database="shard") as s:
        executed = 0
        for name in sorted(SOURCES, key=lambda n: (n != "bootstrap", n)):
            for statement in _cluster(SOURCES[name], database="shard"):
                # plain views query the Distributed tables, which one shard's test leaves out;
                # so do data migrations (rows rewritten through them), and this shard has no rows
                if (
                    _on_distributed(statement)
                    or statement.startswith(("CREATE VIEW", "INSERT INTO"))
                    or " DELETE WHERE " in statement
                ):
                    continue
                statement = statement.replace(" ON CLUSTER `prod`", "")
                statement = re.sub(r"\bReplicated(\w*MergeTree)", r"\1", statement)
                ddl.command(statement)
                executed += 1
        assert executed > 20
        trace_id = new_trace_id()
        s.insert_rows(
            f"otel_traces{LOCAL_SUFFIX}",
            planscope_trace(trace_id, project="p"),
            TRACE_COLUMNS,
            dedup_token="shard-seg-1",
        )
        tables = {
            r["name"]: int(r["total_rows"] or 0)
            for r in s.query(
                "SELECT name, total_rows FROM system.tables WHERE database = 'shard' "
                "AND engine LIKE '%MergeTree'"
            )
        }
        assert all(name.endswith(LOCAL_SUFFIX) for name in tables), tables
        for derived in (
            "otel_traces_trace_id_ts",
            "planscope_runs",
            "planscope_plans",
            "planscope_plan_steps",
            "planscope_step_attempts",
            "planscope_tool_calls",
            "planscope_llm_calls",
            "planscope_trace_index",
        ):
            assert tables[derived + LOCAL_SUFFIX] > 0, derived
