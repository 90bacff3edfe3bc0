"""Migration files, the splitter, the renderer and migrate() on the real chDB engine."""

from __future__ import annotations

import json
import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import planscope.semconv as A
import pytest
from planscope_collector.storage import (
    SPAN_STATUS_MESSAGE_SQL,
    TABLES,
    MigrationError,
    Store,
    load_migrations,
    open_store,
    render,
    split_statements,
)
from planscope_collector.storage._store import _BOOTSTRAP_SQL

from ._spans import BASE_NS, kept_rows, make_span, new_trace_id, planscope_trace, spans_ipc

MIGRATIONS_DIR = Path(str(resources.files("planscope_collector") / "migrations"))
EXPECTED = [
    "0001_otel_traces",
    "0002_planscope_views",
    "0003_ingest_batches",
    "0004_findings",
    "0006_alerts",
    "0009_analysis_leases",
    "0010_exporter_compat",
    "0011_span_model",
    "0012_span_model_columns",
    "0013_observed_llm_plans",
    "0014_observed_plan_shapes",
    "0015_span_merge_width",
    "0016_plan_views_one_pass",
    "0020_plan_approvals",
    "0021_plan_stream",
    "0022_analyzer_raw_columns",
    "0023_span_model_frameworks",
    "0024_observed_plan_parts",
    "0025_span_merge_vertical",
    "0026_span_compact_parts",
    "0027_span_merge_parts",
    "0028_observed_plan_final_result",
    "0029_typed_columns_unread",
    "0030_observed_plan_markdown",
    "0031_plan_candidates",
    "0032_scheduler_columns",
    "0033_exception_status",
    "0034_langfuse_observations",
    "0035_trace_bindings",
    "0036_plan_stream_langfuse_mlflow",
    "0037_logfire_logs",
    "0038_mlflow_tracing",
    "0039_griptape_tags",
    "0040_finite_llm_usage",
    "0041_returned_errors",
    "0042_plan_step_key",
    "0043_returned_errors_langfuse_mlflow",
    "0044_plan_step_sentence",
    "0045_plan_stream_openllmetry_outputs",
    "0046_tool_results_langchain",
    "0047_logfire_openai_agents",
    "0048_google_adk",
    "0049_openllmetry_llamaindex",
    "0050_langsmith_otel",
    "0051_langsmith_tool_message_status",
    "0052_haystack_tracer",
    "0053_adk_tool_status",
    "0055_agno_function_result",
    "0056_llamaindex_otel",
    "0057_vercel_ai_sdk",
    "0058_mlflow_null_type",
]


def test_packaged_migrations_are_numbered_in_order() -> None:
    names = [m.name for m in load_migrations()]
    assert names == EXPECTED
    assert all(len(m.checksum) == 64 for m in load_migrations())


def test_splitter_respects_quotes_and_comments() -> None:
    sql = """
    -- a comment; with a semicolon
    SELECT 'a;b', "c;d", `e;f`, 'it''s; fine', 'back\\'; slash' /* ; */ FROM t;
    ;
    SELECT 2 -- trailing; comment
    """
    assert split_statements(sql) == [
        "SELECT 'a;b', \"c;d\", `e;f`, 'it''s; fine', 'back\\'; slash'   FROM t",
        "SELECT 2",
    ]


def test_splitter_rejects_unterminated_quote() -> None:
    with pytest.raises(MigrationError, match="unterminated"):
        split_statements("SELECT 'oops; SELECT 2")


def test_render_substitutes_only_known_placeholders_outside_literals() -> None:
    sql = "CREATE TABLE {db}.t {on_cluster} (x String DEFAULT '{db}') ENGINE = {engine:MergeTree}"
    assert render(sql, database="p") == (
        "CREATE TABLE `p`.t  (x String DEFAULT '{db}') ENGINE = MergeTree"
    )
    assert render("TTL d + toIntervalDay({ttl_days})", ttl_days=7) == "TTL d + toIntervalDay(7)"
    with pytest.raises(MigrationError, match="unknown template placeholder"):
        render("SELECT {value:String}")
    with pytest.raises(MigrationError, match="not a plain identifier"):
        render("SELECT 1 FROM {db}.t", database="x; DROP TABLE y")
    with pytest.raises(MigrationError, match="not a plain identifier"):
        render("{on_cluster}", "c`x")
    with pytest.raises(MigrationError, match="ttl_days"):
        render("{ttl_days}", ttl_days=0)
    with pytest.raises(MigrationError, match="ttl_days"):
        render("{ttl_days}", ttl_days="30")  # type: ignore[arg-type]
    with pytest.raises(MigrationError, match="unsupported engine"):
        render("ENGINE = {engine:Log}")


def _normalise_cluster(sql: str) -> str:
    sql = sql.replace("ON CLUSTER `prod`", "")
    return re.sub(r"\bReplicated(\w*MergeTree)", r"\1", sql)


@pytest.mark.parametrize("name", [*EXPECTED, "bootstrap"])
def test_cluster_rendering_differs_only_in_engine_and_on_cluster(name: str) -> None:
    source = (
        _BOOTSTRAP_SQL
        if name == "bootstrap"
        else next(m.sql for m in load_migrations() if m.name == name)
    )
    single = render(source, ttl_days=9)
    cluster = render(source, "prod", ttl_days=9)
    assert single != cluster
    assert _normalise_cluster(cluster) == single
    # every CREATE and ALTER gets ON CLUSTER, every engine becomes Replicated
    ddl = [s for s in split_statements(cluster) if s.startswith(("CREATE", "ALTER"))]
    assert ddl and all("ON CLUSTER `prod`" in s for s in ddl)
    engines = re.findall(r"ENGINE = (\w+)", cluster)
    assert all(e.startswith("Replicated") or e == "Null" for e in engines)
    assert engines or not any(s.startswith("CREATE TABLE") for s in ddl)


def test_every_mergetree_table_deduplicates_inserts() -> None:
    for migration in load_migrations():
        for statement in split_statements(render(migration.sql)):
            if "ENGINE =" in statement and "ENGINE = Null" not in statement:
                assert "non_replicated_deduplication_window" in statement, statement[:80]


def test_attribute_names_in_sql_exist_in_attributes_module() -> None:
    known = {v for v in vars(A).values() if isinstance(v, str)}
    used: set[str] = set()
    for path in MIGRATIONS_DIR.glob("*.sql"):
        used |= set(
            re.findall(r"'((?:planscope|gen_ai|error|service)\.[A-Za-z0-9_.]+)'", path.read_text())
        )
    assert used, "the regex found no attribute names: it is broken"
    assert A.PLAN_JSON in used and A.GEN_AI_USAGE_INPUT_TOKENS in used
    assert used <= known, f"names not in planscope.semconv: {sorted(used - known)}"


def test_span_kind_values_in_sql_exist_in_attributes_module() -> None:
    text = "\n".join(p.read_text() for p in MIGRATIONS_DIR.glob("*.sql"))
    kinds = set(re.findall(r"\['planscope\.span\.kind'\] = '(\w*)'", text))
    assert kinds - {""} == set(A.SPAN_KINDS)
    ops = set(re.findall(r"\['gen_ai\.operation\.name'\] = '(\w+)'", text))
    known_ops = {getattr(A, name) for name in dir(A) if name.startswith("OP_")}
    assert ops and ops <= known_ops, f"operations not in planscope.semconv: {ops - known_ops}"
    assert A.OP_PLAN in ops and A.OP_EXECUTE_TOOL in ops


def test_migrate_is_idempotent_and_creates_every_table(store: Store) -> None:
    assert store.migrate() == []
    assert set(store.applied_migrations()) == set(EXPECTED)
    rows = store.query(
        "SELECT name, engine_full FROM system.tables WHERE database = {db:String}",
        {"db": store.database},
    )
    tables = {r["name"]: r["engine_full"] for r in rows}
    for table in (*TABLES, "schema_migrations"):
        assert table in tables
        assert "non_replicated_deduplication_window = 10000" in tables[table], table
    assert sum(1 for name in tables if name.endswith("_mv")) == 11
    assert tables["planscope_plan_stream"].strip("`") == "Null"  # 0021: a pipe, keeps nothing
    assert tables["planscope_plan_candidates"].strip("`") == "Null"  # 0031: the same
    assert "planscope_span_model" not in tables  # 0011's Null stream, replaced by 0012


def test_first_migrate_returns_applied_names_and_ttl(tmp_path: Path) -> None:
    with open_store(f"chdb://{tmp_path}/db") as s:
        assert s.migrate(ttl_days=3) == EXPECTED
        ddl = s.query("SHOW CREATE TABLE otel_traces")[0]
        assert "toIntervalDay(3)" in next(iter(ddl.values()))


def test_checksum_drift_is_refused_and_new_files_apply(tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    for path in MIGRATIONS_DIR.glob("*.sql"):
        shutil.copy(path, directory / path.name)
    with open_store(f"chdb://{tmp_path}/db") as s:
        assert s.migrate(directory=directory) == EXPECTED
        (directory / "9999_extra.sql").write_text(
            "CREATE TABLE IF NOT EXISTS {db}.extra {on_cluster} (x UInt8)\n"
            "ENGINE = {engine:MergeTree} ORDER BY x\n"
            "SETTINGS non_replicated_deduplication_window = 10000;\n"
        )
        assert s.migrate(directory=directory) == ["9999_extra"]
        edited = directory / "0002_planscope_views.sql"
        edited.write_text(edited.read_text() + "\n-- an innocent-looking edit\n")
        with pytest.raises(MigrationError, match="0002_planscope_views was applied with checksum"):
            s.migrate(directory=directory)
        assert s.migrate() == []  # the packaged, unchanged files are still fine


def test_failing_statement_raises_migration_error_with_the_statement(tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_bad.sql").write_text("CREATE TABLE {db}.t (x Nonsense) ENGINE = Memory;")
    with (
        open_store(f"chdb://{tmp_path}/db") as s,
        pytest.raises(MigrationError, match=r"(?s)0001_bad.*Nonsense"),
    ):
        s.migrate(directory=directory)


def test_badly_named_migration_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "1_x.sql").write_text("SELECT 1")
    with pytest.raises(MigrationError, match="NNNN_lower_snake"):
        load_migrations(tmp_path)


def _migrations_before(tmp_path: Path, first_new: str) -> Path:
    """A directory with the packaged migrations numbered below ``first_new`` (an older store's)."""
    old = tmp_path / f"migrations-before-{first_new}"
    old.mkdir()
    for path in MIGRATIONS_DIR.glob("*.sql"):
        if path.name < first_new:
            shutil.copy(path, old / path.name)
    return old


def test_module_doctests() -> None:
    import doctest

    import planscope_collector.storage._migrations as module

    assert doctest.testmod(module).failed == 0


def test_a_store_migrated_at_0011_upgrades_and_keeps_filling_every_table(tmp_path: Path) -> None:
    """0012 replaces 0011's views on a store that has spans: old rows keep their typed rows,
    new rows get the same ones, and the old rows read the new columns from their expressions."""
    old = _migrations_before(tmp_path, "0012")
    before, after = new_trace_id(), new_trace_id()
    typed = ("planscope_runs", "planscope_plans", "planscope_plan_steps",
             "planscope_step_attempts", "planscope_tool_calls", "planscope_llm_calls")  # fmt: skip
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(planscope_trace(before)))
        assert s.migrate() == [m for m in EXPECTED if m >= "0012"]
        s.insert_spans(spans_ipc(planscope_trace(after)))
        for table in typed:
            ids = "PlanSpanId" if table == "planscope_plan_steps" else "SpanId, ParentSpanId"
            rows = [
                s.query(
                    f"SELECT * EXCEPT (TraceId, {ids}) FROM {table} WHERE TraceId = {{t:String}} "
                    "ORDER BY ALL",
                    {"t": trace_id},
                )
                for trace_id in (before, after)
            ]
            assert rows[0] and rows[0] == rows[1], table
        kinds = s.query(
            "SELECT TraceId = {b:String} AS new, groupArraySorted(10)(SpanModelKind) AS k "
            "FROM otel_traces GROUP BY new ORDER BY new",
            {"b": after},
        )
        assert kinds[0]["k"] == kinds[1]["k"] == ["llm", "plan", "run", "step", "step", "tool"]


def test_a_store_of_the_previous_version_gets_the_wider_merges_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    """0015 and 0025 (merge settings), 0016 and 0021 (the plan views) on a store an earlier
    version migrated (0020 already applied): the upgrade runs, the stored rows stay as they were
    (through a merge column by column), and the next spans fill every typed table as the earlier
    ones did."""
    old = tmp_path / "migrations-previous"
    old.mkdir()
    for path in MIGRATIONS_DIR.glob("*.sql"):
        if path.name < "0021" and not path.name.startswith(("0015", "0016")):
            shutil.copy(path, old / path.name)
    trace_id = new_trace_id()
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(planscope_trace(trace_id)))
        query = "SELECT * FROM {t:Identifier} ORDER BY ALL"
        before = {t: s.query(query, {"t": t}) for t in TABLES if t != "planscope_ingest_batches"}
        newer = [m for m in EXPECTED if m >= "0021"]  # later migrations apply after them
        assert s.migrate() == ["0015_span_merge_width", "0016_plan_views_one_pass", *newer]
        (ddl,) = s.query(
            "SELECT create_table_query AS q FROM system.tables "
            "WHERE database = currentDatabase() AND name = 'otel_traces'"
        )
        assert "merge_selector_base = 20" in ddl["q"]
        assert "vertical_merge_algorithm_min_rows_to_activate = 1" in ddl["q"]
        assert "max_parts_to_merge_at_once = 8" in ddl["q"]
        s.command("OPTIMIZE TABLE otel_traces FINAL")
        for table, rows in before.items():
            assert kept_rows(rows, s.query(query, {"t": table})), table
        later = new_trace_id()
        s.insert_spans(spans_ipc(planscope_trace(later)))
        for table in before:
            if table.startswith("planscope_") and table != "planscope_trace_index":
                ids = "PlanSpanId" if table == "planscope_plan_steps" else "SpanId, ParentSpanId"
                rows = [
                    s.query(
                        f"SELECT * EXCEPT (TraceId, {ids}) FROM {table} "
                        "WHERE TraceId = {t:String} ORDER BY ALL",
                        {"t": t},
                    )
                    for t in (trace_id, later)
                ]
                assert rows[0] and rows[0] == rows[1], table


def test_after_0026_a_segment_sized_insert_writes_a_compact_part_and_rows_stay(
    tmp_path: Path,
) -> None:
    """0026 on a store of the previous version: stored rows unchanged, and an insert of more than
    the default 10 MiB uncompressed (a Wide part before) writes one Compact part."""
    old = tmp_path / "migrations-previous"
    old.mkdir()
    for path in MIGRATIONS_DIR.glob("*.sql"):
        if path.name < "0026":
            shutil.copy(path, old / path.name)
    parts = (
        "SELECT part_type AS t FROM system.parts WHERE database = currentDatabase() "
        "AND table = 'otel_traces' AND active ORDER BY name"
    )
    big = {"payload": "x" * 12_000_000}  # over min_bytes_for_wide_part's default (10 MiB)
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc([make_span(trace_id=new_trace_id(), attrs=big)]))
        assert [r["t"] for r in s.query(parts)] == ["Wide"]
        query = "SELECT * FROM {t:Identifier} ORDER BY ALL"
        before = {t: s.query(query, {"t": t}) for t in TABLES if t != "planscope_ingest_batches"}
        # up to 0026 only: 0029 drops typed columns, which would change SELECT * below
        upto = tmp_path / "migrations-0026"
        shutil.copytree(old, upto)
        shutil.copy(MIGRATIONS_DIR / "0026_span_compact_parts.sql", upto)
        assert s.migrate(directory=upto) == ["0026_span_compact_parts"]
        assert {t: s.query(query, {"t": t}) for t in before} == before
        s.insert_spans(spans_ipc([make_span(trace_id=new_trace_id(), attrs=big)]))
        assert [r["t"] for r in s.query(parts)] == ["Wide", "Compact"]
        s.command("OPTIMIZE TABLE otel_traces FINAL")
        assert s.query("SELECT count() AS n FROM otel_traces")[0]["n"] == 2


def _raw_column_spans(trace_id: str) -> list[list[object]]:
    """A scheduler queue wait, a context switch, steps given ``[]`` / ``["a"]`` / no context, and
    a plain span whose attributes look like a scheduler's (its name is not)."""
    step = {A.SPAN_KIND: A.KIND_STEP, A.STEP_ID: "s1"}
    return [
        make_span(
            trace_id=trace_id,
            name=A.SPAN_SCHEDULER_QUEUE,
            attrs={A.SCHEDULER_ID: "k1", A.SCHEDULER_REQUESTER: "s1", A.STEP_ID: "s1"},
        ),
        make_span(
            trace_id=trace_id,
            name=A.SPAN_SCHEDULER_CONTEXT_SWITCH,
            attrs={A.SCHEDULER_SWITCH_OP: "save", A.SCHEDULER_CONTEXT_TOKENS: 12},
        ),
        make_span(trace_id=trace_id, name="s1 empty", attrs={**step, A.STEP_CONTEXT_KEYS: []}),
        make_span(trace_id=trace_id, name="s1 keys", attrs={**step, A.STEP_CONTEXT_KEYS: ["a"]}),
        make_span(trace_id=trace_id, name="s1 none", attrs=step),
        make_span(
            trace_id=trace_id, name="other", attrs={A.SCHEDULER_ID: "k1", A.STEP_CONTEXT_KEYS: []}
        ),
    ]


def test_0022_raw_columns_hold_the_attributes_the_analyzer_reads_on_old_and_new_rows(
    tmp_path: Path,
) -> None:
    """0022 on a store with spans: rows stored before it read the columns from their expressions,
    rows stored after carry them, a merge keeps them; the values are the scheduler spans'
    ``planscope.scheduler.*`` attributes (nothing else, no other span) and "a step recorded the
    empty context"."""
    old = _migrations_before(tmp_path, "0022")
    before, after = new_trace_id(), new_trace_id()
    query = (
        "SELECT SpanName AS name, SpanModelContextEmpty AS empty, "
        "CAST(SchedulerAttributes, 'Map(String, String)') AS scheduler "
        "FROM otel_traces WHERE TraceId = {t:String} ORDER BY name"
    )
    expected = [
        {"name": "other", "empty": 0, "scheduler": {}},
        {"name": "s1 empty", "empty": 1, "scheduler": {}},
        {"name": "s1 keys", "empty": 0, "scheduler": {}},
        {"name": "s1 none", "empty": 0, "scheduler": {}},
        {"name": A.SPAN_SCHEDULER_CONTEXT_SWITCH, "empty": 0,
         "scheduler": {A.SCHEDULER_SWITCH_OP: "save", A.SCHEDULER_CONTEXT_TOKENS: "12"}},
        {"name": A.SPAN_SCHEDULER_QUEUE, "empty": 0,
         "scheduler": {A.SCHEDULER_ID: "k1", A.SCHEDULER_REQUESTER: "s1"}},
    ]  # fmt: skip
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(_raw_column_spans(before)))
        assert s.migrate() == [m for m in EXPECTED if m >= "0022"]
        s.insert_spans(spans_ipc(_raw_column_spans(after)))
        for trace_id in (before, after):
            assert s.query(query, {"t": trace_id}) == expected
        s.command("OPTIMIZE TABLE otel_traces FINAL")
        for trace_id in (before, after):
            assert s.query(query, {"t": trace_id}) == expected
        (star,) = s.query(
            "SELECT * FROM otel_traces WHERE TraceId = {t:String} LIMIT 1", {"t": after}
        )
        assert "SchedulerAttributes" not in star and "SpanModelContextEmpty" not in star


def _scheduler_spans(trace_id: str) -> list[list[object]]:
    """A queue wait with every attribute, one without an overtake count, a context switch with
    a non-numeric token count, a restore, and a plain span whose attributes look like a
    scheduler's (its name is not)."""
    queue = {A.SCHEDULER_ID: "k1", A.SCHEDULER_POLICY: "fifo", A.SCHEDULER_REQUESTER: "s1"}
    return [
        make_span(
            trace_id=trace_id,
            name=A.SPAN_SCHEDULER_QUEUE,
            attrs={**queue, A.SCHEDULER_REQUEST_ID: "r1", A.SCHEDULER_OVERTAKEN: 3},
        ),
        make_span(
            trace_id=trace_id,
            name=A.SPAN_SCHEDULER_QUEUE,
            attrs={**queue, A.SCHEDULER_REQUEST_ID: "r2"},
        ),
        make_span(
            trace_id=trace_id,
            name=A.SPAN_SCHEDULER_CONTEXT_SWITCH,
            attrs={
                A.SCHEDULER_SWITCH_OP: A.SWITCH_SAVE,
                A.SCHEDULER_REQUEST_ID: "r1",
                A.SCHEDULER_CONTEXT_HASH: "h1",
                A.SCHEDULER_CONTEXT_TOKENS: "many",
            },
        ),
        make_span(
            trace_id=trace_id,
            name=A.SPAN_SCHEDULER_CONTEXT_SWITCH,
            attrs={
                A.SCHEDULER_SWITCH_OP: A.SWITCH_RESTORE,
                A.SCHEDULER_REQUEST_ID: "r1",
                A.SCHEDULER_CONTEXT_HASH: "h2",
                A.SCHEDULER_CONTEXT_TOKENS: 7,
                A.SCHEDULER_SAVED_HASH: "h1",
                A.SCHEDULER_SAVED_TOKENS: 9,
            },
        ),
        make_span(trace_id=trace_id, name="other", attrs={**queue, A.SCHEDULER_OVERTAKEN: 5}),
    ]


def test_0032_scheduler_columns_hold_the_scheduler_attributes_on_old_and_new_rows(
    tmp_path: Path,
) -> None:
    """0032 on a store with spans: rows stored before it read the ten columns from their
    expressions, rows stored after carry them, a merge keeps them; each is its scheduler
    span's attribute ('' / 0 / NULL when unset, 0 for a count that is no number), and nothing
    on any other span."""
    old = _migrations_before(tmp_path, "0032")
    before, after = new_trace_id(), new_trace_id()
    query = (
        "SELECT SpanName AS name, SchedulerRequestId AS request, SchedulerId AS id, "
        "SchedulerPolicy AS policy, SchedulerRequester AS requester, SchedulerSwitchOp AS op, "
        "SchedulerContextHash AS hash, SchedulerContextTokens AS tokens, "
        "SchedulerSavedHash AS saved_hash, SchedulerSavedTokens AS saved_tokens, "
        "SchedulerOvertaken AS overtaken "
        "FROM otel_traces WHERE TraceId = {t:String} ORDER BY name, request, op"
    )
    none = {"id": "", "policy": "", "requester": "", "op": "", "hash": "", "tokens": 0}
    none |= {"saved_hash": "", "saved_tokens": 0, "overtaken": None}
    queued = {"id": "k1", "policy": "fifo", "requester": "s1"}
    expected = [
        {"name": "other", "request": ""} | none,
        {"name": A.SPAN_SCHEDULER_CONTEXT_SWITCH, "request": "r1"}
        | none
        | {"op": "restore", "hash": "h2", "tokens": 7, "saved_hash": "h1", "saved_tokens": 9},
        {"name": A.SPAN_SCHEDULER_CONTEXT_SWITCH, "request": "r1"}
        | none
        | {"op": "save", "hash": "h1"},
        {"name": A.SPAN_SCHEDULER_QUEUE, "request": "r1"} | none | queued | {"overtaken": 3},
        {"name": A.SPAN_SCHEDULER_QUEUE, "request": "r2"} | none | queued,
    ]
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(_scheduler_spans(before)))
        assert s.migrate() == [m for m in EXPECTED if m >= "0032"]
        s.insert_spans(spans_ipc(_scheduler_spans(after)))
        for trace_id in (before, after):
            assert s.query(query, {"t": trace_id}) == expected
        s.command("OPTIMIZE TABLE otel_traces FINAL")
        for trace_id in (before, after):
            assert s.query(query, {"t": trace_id}) == expected
        (star,) = s.query(
            "SELECT * FROM otel_traces WHERE TraceId = {t:String} LIMIT 1", {"t": after}
        )
        assert not [c for c in star if c.startswith("Scheduler")]


def _raising_spans(trace_id: str) -> list[list[Any]]:
    """A GenAI agent run whose run, step, tool and LLM spans only record an exception, a tool
    that records one but says OK, and an SDK tool (planscope's kind) that records one."""
    raised = [(BASE_NS, "exception", {"exception.type": "TimeoutError", "exception.message": "m"})]
    run = make_span(
        trace_id=trace_id,
        name="run",
        attrs={"gen_ai.operation.name": "invoke_agent"},
        events=raised,
    )

    def child(name: str, operation: str, **kw: Any) -> list[Any]:
        attrs = {"gen_ai.operation.name": operation} if operation else {A.SPAN_KIND: A.KIND_TOOL}
        return make_span(trace_id=trace_id, name=name, parent=run[2], attrs=attrs, **kw)

    return [
        run,
        child("step", "invoke_agent", events=raised),
        child("tool", "execute_tool", events=raised),
        child("llm", "chat", events=raised),
        child("ok", "execute_tool", events=raised, status="Ok"),
        child("sdk", "", events=raised),
    ]


def test_0033_exception_only_spans_failed_on_old_and_new_rows(tmp_path: Path) -> None:
    """0033 on a store with spans: a span of another convention that only records an
    exception says Error with the exception's type and message, in otel_traces and in every
    typed row, whether it was stored before the migration (its typed rows written again, the
    old copies deleted) or after; an explicit OK and planscope's own spans keep their status."""
    old = _migrations_before(tmp_path, "0033")
    before, after = new_trace_id(), new_trace_id()
    tables = {
        "runs": "Outcome AS outcome, StatusMessage AS message, ErrorType AS type",
        "step_attempts": "Status AS outcome, StatusMessage AS message, ErrorType AS type",
        "tool_calls": "'' AS outcome, '' AS message, ErrorType AS type",
        "llm_calls": "'' AS outcome, '' AS message, '' AS type",
    }
    query = " UNION ALL ".join(
        f"SELECT '{t}' AS t, SpanId AS span, StatusCode AS status, {columns} "
        f"FROM planscope_{t} WHERE TraceId = {{t:String}}"
        for t, columns in tables.items()
    )
    raw = (
        "SELECT SpanName AS name, SpanModelStatusCode AS status, SpanModelExceptionMessage AS m "
        "FROM otel_traces WHERE TraceId = {t:String} ORDER BY name"
    )
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(_raising_spans(before)))
        assert s.migrate() == [m for m in EXPECTED if m >= "0033"]
        s.insert_spans(spans_ipc(_raising_spans(after)))
        for trace_id in (before, after):
            names = {
                r["span"]: r["name"]
                for r in s.query(
                    "SELECT SpanId AS span, SpanName AS name FROM otel_traces "
                    "WHERE TraceId = {t:String}",
                    {"t": trace_id},
                )
            }
            rows = sorted(
                (r["t"], names[r["span"]], r["status"], r["outcome"], r["message"], r["type"])
                for r in s.query(query, {"t": trace_id})
            )
            assert rows == [
                ("llm_calls", "llm", "Error", "", "", ""),
                ("runs", "run", "Error", "failure", "m", "TimeoutError"),
                ("step_attempts", "step", "Error", "error", "m", "TimeoutError"),
                ("tool_calls", "ok", "Ok", "", "", ""),
                ("tool_calls", "sdk", "Unset", "", "", ""),
                ("tool_calls", "tool", "Error", "", "", "TimeoutError"),
            ], trace_id
            assert s.query(raw, {"t": trace_id}) == [
                {"name": "llm", "status": "Error", "m": "m"},
                {"name": "ok", "status": "Ok", "m": ""},
                {"name": "run", "status": "Error", "m": "m"},
                {"name": "sdk", "status": "Unset", "m": ""},
                {"name": "step", "status": "Error", "m": "m"},
                {"name": "tool", "status": "Error", "m": "m"},
            ]


def _returning_spans(trace_id: str) -> list[list[Any]]:
    """A GenAI agent run whose tool calls of three conventions return MCP's ``isError`` result
    with status UNSET or OK, one that only mentions an error, one whose status is ERROR, and an
    SDK tool span (planscope's kind) returning the same envelope."""
    envelope = json.dumps({"isError": True, "content": [{"type": "text", "text": "down"}]})
    run = make_span(trace_id=trace_id, name="run", attrs={"gen_ai.operation.name": "invoke_agent"})

    def tool(name: str, attrs: dict[str, str], **kw: Any) -> list[Any]:
        return make_span(trace_id=trace_id, name=name, parent=run[2], attrs=attrs, **kw)

    genai = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": envelope}
    return [
        run,
        tool("genai", genai),
        tool("oi", {"openinference.span.kind": "TOOL", "output.value": envelope}, status="Ok"),
        tool("tl", {"traceloop.span.kind": "tool", "traceloop.entity.output": envelope}),
        tool("mention", {**genai, "gen_ai.tool.call.result": '{"errors": [], "error": null}'}),
        tool("raised", genai, status="Error", status_message="own"),
        tool("sdk", {A.SPAN_KIND: A.KIND_TOOL, "gen_ai.tool.call.result": envelope}),
    ]


def test_0041_tool_calls_that_returned_an_error_failed_on_old_and_new_rows(
    tmp_path: Path,
) -> None:
    """0041 on a store with spans: a tool call of OpenInference, GenAI or OpenLLMetry whose
    result is an error envelope says Error with the envelope's message in otel_traces and in its
    tool call row, whether stored before the migration (its row written again, the old copy
    deleted) or after; a mention, an explicit ERROR and planscope's own span keep theirs."""
    old = _migrations_before(tmp_path, "0041")
    before, after = new_trace_id(), new_trace_id()
    calls = (
        "SELECT o.SpanName AS name, c.StatusCode AS status FROM planscope_tool_calls AS c "
        "INNER JOIN otel_traces AS o USING (TraceId, SpanId) WHERE TraceId = {t:String} "
        "ORDER BY name"
    )
    raw = (
        "SELECT SpanName AS name, SpanModelStatusCode AS status, SpanModelReturnedMessage AS m "
        "FROM otel_traces WHERE TraceId = {t:String} AND ParentSpanId != '' ORDER BY name"
    )
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(_returning_spans(before)))
        assert s.migrate() == [m for m in EXPECTED if m >= "0041"]
        s.insert_spans(spans_ipc(_returning_spans(after)))
        for trace_id in (before, after):
            status = {"genai": "Error", "mention": "Unset", "oi": "Error", "raised": "Error",
                      "sdk": "Unset", "tl": "Error"}  # fmt: skip
            assert s.query(calls, {"t": trace_id}) == [
                {"name": n, "status": v} for n, v in sorted(status.items())
            ], trace_id
            assert s.query(raw, {"t": trace_id}) == [
                {"name": n, "status": v, "m": "down" if n in ("genai", "oi", "tl") else ""}
                for n, v in sorted(status.items())
            ], trace_id


def _langfuse_mlflow_returning_spans(trace_id: str) -> list[list[Any]]:
    """A Langfuse agent and an MLflow agent whose tool calls return an error envelope: a
    Langfuse tool observation (UNSET, as its SDK leaves it) and an MLflow TOOL span (OK, as
    MLflow sets it) with the result a dict gives, an MLflow TOOL span whose function returned
    the envelope as a string (a JSON string in ``mlflow.spanOutputs``), a Langfuse tool at level
    ERROR (its own message), a mention, and a non-tool observation of each returning it."""
    envelope = json.dumps({"isError": True, "content": [{"type": "text", "text": "down"}]})
    quota = json.dumps({"error": "quota", "code": 429})
    lf_run = make_span(trace_id=trace_id, name="lf", attrs={A.LF_OBSERVATION_TYPE: "agent"})
    ml_run = make_span(trace_id=trace_id, name="ml", attrs={"mlflow.spanType": '"AGENT"'})

    def lf(name: str, kind: str, output: str, **attrs: str) -> list[Any]:
        lf_attrs = {A.LF_OBSERVATION_TYPE: kind, "langfuse.observation.output": output}
        lf_attrs |= {f"langfuse.observation.{k}": v for k, v in attrs.items()}
        return make_span(trace_id=trace_id, name=name, parent=lf_run[2], attrs=lf_attrs)

    def ml(name: str, kind: str, output: str) -> list[Any]:
        ml_attrs = {"mlflow.spanType": json.dumps(kind), "mlflow.spanOutputs": output}
        return make_span(trace_id=trace_id, name=name, parent=ml_run[2], attrs=ml_attrs,
                         status="Ok")  # fmt: skip

    return [
        lf_run,
        ml_run,
        lf("lf-tool", "tool", envelope),
        lf("lf-level", "tool", envelope, level="ERROR", status_message="own"),
        lf("lf-mention", "tool", '{"errors": [], "error": null}'),
        lf("lf-span", "span", envelope),
        ml("ml-tool", "TOOL", envelope),
        ml("ml-string", "TOOL", json.dumps(quota)),
        ml("ml-chain", "CHAIN", envelope),
    ]


def test_0043_langfuse_and_mlflow_tool_calls_that_returned_an_error_failed(
    tmp_path: Path,
) -> None:
    """0043 on a store at 0042: a Langfuse tool observation or an MLflow TOOL span whose result
    is an error envelope (MLflow's also as a JSON string) says Error with the envelope's type and
    message in otel_traces and in its tool call row, whether stored before the migration (the
    column computed again, the row written again and the old copy deleted) or after; a mention,
    a Langfuse ERROR level (its own message) and a non-tool observation keep theirs."""
    old = _migrations_before(tmp_path, "0043")
    before, after = new_trace_id(), new_trace_id()
    calls = (
        "SELECT o.SpanName AS name, c.StatusCode AS status, c.ErrorType AS type "
        "FROM planscope_tool_calls AS c INNER JOIN otel_traces AS o USING (TraceId, SpanId) "
        "WHERE TraceId = {t:String} ORDER BY name"
    )
    raw = (
        f"SELECT SpanName AS name, SpanModelStatusCode AS status, {SPAN_STATUS_MESSAGE_SQL} AS m "
        "FROM otel_traces WHERE TraceId = {t:String} AND ParentSpanId != '' ORDER BY name"
    )
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(_langfuse_mlflow_returning_spans(before)))
        assert s.migrate() == [m for m in EXPECTED if m >= "0043"]
        s.insert_spans(spans_ipc(_langfuse_mlflow_returning_spans(after)))
        for trace_id in (before, after):
            assert s.query(calls, {"t": trace_id}) == [
                {"name": "lf-level", "status": "Error", "type": ""},
                {"name": "lf-mention", "status": "Unset", "type": ""},
                {"name": "lf-tool", "status": "Error", "type": ""},
                {"name": "ml-string", "status": "Error", "type": "429"},
                {"name": "ml-tool", "status": "Error", "type": ""},
            ], trace_id
            assert s.query(raw, {"t": trace_id}) == [
                {"name": "lf-level", "status": "Error", "m": "own"},
                {"name": "lf-mention", "status": "Unset", "m": ""},
                {"name": "lf-span", "status": "Unset", "m": ""},
                {"name": "lf-tool", "status": "Error", "m": "down"},
                {"name": "ml-chain", "status": "Ok", "m": ""},
                {"name": "ml-string", "status": "Error", "m": "quota"},
                {"name": "ml-tool", "status": "Error", "m": "down"},
            ], trace_id


def _langchain_tool_spans(trace_id: str) -> list[list[Any]]:
    """An OpenLLMetry LangGraph run's tool spans: two polls answering the same in ToolMessages
    of different tool_call_ids, a ToolMessage whose status is error (UNSET, as the instrumentor
    leaves it), a tool invoked without a tool call, and a GenAI tool's plain result."""
    run = make_span(trace_id=trace_id, name="graph", attrs={"traceloop.span.kind": "workflow"})

    def message(content: str, call: str, status: str = "success") -> str:
        fields = {"content": content, "tool_call_id": call, "status": status}
        ids = ["langchain", "schema", "messages", "ToolMessage"]
        output = {"lc": 1, "type": "constructor", "id": ids, "kwargs": fields}
        return json.dumps({"output": output, "kwargs": {"name": "poll"}})

    def tl(name: str, output: str) -> list[Any]:
        attrs = {"traceloop.span.kind": "tool", "traceloop.entity.output": output,
                 "gen_ai.tool.call.result": output}  # fmt: skip
        return make_span(trace_id=trace_id, name=name, parent=run[2], attrs=attrs)

    genai = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": "plain"}
    return [
        run,
        tl("poll-1", message("pending", "c1")),
        tl("poll-2", message("pending", "c2")),
        tl("cancel", message("no such job", "c3", "error")),
        tl("direct", json.dumps({"output": {"n": 1}, "kwargs": {}})),
        make_span(trace_id=trace_id, name="genai", parent=run[2], attrs=genai),
    ]


def test_0046_a_langchain_tool_result_is_its_content_on_old_and_new_rows(
    tmp_path: Path,
) -> None:
    """0046 on a store before it: an OpenLLMetry LangChain tool call's result is its
    ToolMessage's content (its output when it is none), a ToolMessage whose status is error
    failed with its content as the message, in otel_traces and in its tool call row (one row
    per call), whether stored before the migration (the row written again, the old copy
    deleted) or after; another convention's result is as it was."""
    old = _migrations_before(tmp_path, "0046")
    before, after = new_trace_id(), new_trace_id()
    calls = (
        "SELECT o.SpanName AS name, c.Result AS result, c.StatusCode AS status "
        "FROM planscope_tool_calls AS c INNER JOIN otel_traces AS o USING (TraceId, SpanId) "
        "WHERE TraceId = {t:String} ORDER BY name"
    )
    raw = (
        f"SELECT SpanName AS name, SpanModelStatusCode AS status, {SPAN_STATUS_MESSAGE_SQL} AS m "
        "FROM otel_traces WHERE TraceId = {t:String} AND SpanName = 'cancel'"
    )
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate(directory=old)
        s.insert_spans(spans_ipc(_langchain_tool_spans(before)))
        assert s.migrate() == [m for m in EXPECTED if m >= "0046"]
        s.insert_spans(spans_ipc(_langchain_tool_spans(after)))
        for trace_id in (before, after):
            assert s.query(calls, {"t": trace_id}) == [
                {"name": "cancel", "result": "no such job", "status": "Error"},
                {"name": "direct", "result": '{"n":1}', "status": "Unset"},
                {"name": "genai", "result": "plain", "status": "Unset"},
                {"name": "poll-1", "result": "pending", "status": "Unset"},
                {"name": "poll-2", "result": "pending", "status": "Unset"},
            ], trace_id
            assert s.query(raw, {"t": trace_id}) == [
                {"name": "cancel", "status": "Error", "m": "no such job"}
            ], trace_id


def test_0034_langfuse_observations_map_to_the_span_model(tmp_path: Path) -> None:
    """0034: Langfuse's observation types are kinds, its ERROR level an error with its status
    message where the OpenTelemetry status is UNSET, its WARNING a failed step attempt only,
    its input / output / model / usage read into the typed rows."""
    trace_id = new_trace_id()
    usage = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}

    def observation(name: str, kind: str, parent: str = "", **attrs: Any) -> list[Any]:
        lf = {
            A.LF_OBSERVATION_TYPE: kind,
            **{f"langfuse.observation.{k}": v for k, v in attrs.items()},
        }
        return make_span(trace_id=trace_id, name=name, parent=parent, attrs=lf)

    run = observation(
        "order", "agent", input="move 3 rooms", level="ERROR", status_message="gave up"
    )
    spans = [
        run,
        observation("plan", "chain", run[2]),
        observation(
            "ask", "generation", run[2], **{"model.name": "gpt-4o-mini"}, usage_details=usage
        ),
        observation("try", "agent", run[2], level="WARNING", status_message="retry later"),
        observation(
            "book", "tool", run[2], input={"args": [], "kwargs": {"day": "05-02"}}, output="ok"
        ),
        observation("check", "guardrail", run[2], level="ERROR", status_message="wrong day"),
    ]
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate()
        s.insert_spans(spans_ipc(spans))
        kinds = s.query(
            "SELECT SpanName AS name, SpanModelKind AS kind, SpanModelSource AS source, "
            "SpanModelStatusCode AS status FROM otel_traces WHERE TraceId = {t:String} "
            "ORDER BY name",
            {"t": trace_id},
        )
        assert [(r["name"], r["kind"], r["source"], r["status"]) for r in kinds] == [
            ("ask", "llm", "langfuse", "Unset"),
            ("book", "tool", "langfuse", "Unset"),
            ("check", "other", "langfuse", "Error"),
            ("order", "run", "langfuse", "Error"),
            ("plan", "other", "langfuse", "Unset"),
            ("try", "step", "langfuse", "Unset"),
        ]
        (r,) = s.query(
            "SELECT Objective, Outcome, StatusMessage FROM planscope_runs "
            "WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (r["Objective"], r["Outcome"], r["StatusMessage"]) == (
            "move 3 rooms",
            "failure",
            "gave up",
        )
        (a,) = s.query(
            "SELECT StepId, Status, StatusCode, StatusMessage FROM planscope_step_attempts "
            "WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (a["StepId"], a["Status"], a["StatusCode"], a["StatusMessage"]) == (
            "try",
            "error",
            "Unset",
            "retry later",
        )
        (c,) = s.query(
            "SELECT ToolName, Arguments, Result FROM planscope_tool_calls "
            "WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (c["ToolName"], c["Arguments"], c["Result"]) == ("book", '{"day":"05-02"}', "ok")
        (m,) = s.query(
            "SELECT Model, InputTokens, OutputTokens FROM planscope_llm_calls "
            "WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (m["Model"], m["InputTokens"], m["OutputTokens"]) == ("gpt-4o-mini", 120, 30)


def test_0039_griptape_tags_map_to_the_span_model(tmp_path: Path) -> None:
    """0039: Griptape's spans carry only ``tags`` (a JSON list): a span tagged ``Tool.run()`` is
    a call of the tool its span names (its ERROR status the call's), one tagged
    ``PromptDriver.run()`` an LLM call, the others (``main``, ``Agent.run()``) stay ``other``;
    a ``tags`` attribute of other values changes nothing."""
    trace_id = new_trace_id()
    root = make_span(trace_id=trace_id, name="main")
    agent = make_span(trace_id=trace_id, name="Agent.run()", parent=root[2])

    def tagged(name: str, tags: list[str], status: str = "Unset") -> Any:
        attrs = {"tags": json.dumps(tags)}
        return make_span(trace_id=trace_id, name=name, parent=agent[2], attrs=attrs, status=status)

    spans = [
        root,
        agent,
        tagged("OpenAiChatPromptDriver.run()", ["PromptDriver.run()"]),
        tagged("Calculator.try_run()", ["Tool.run()"], "Error"),
        tagged("cache.get", ["warm", "hit"]),
    ]
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate()
        s.insert_spans(spans_ipc(spans))
        kinds = s.query(
            "SELECT SpanName AS name, SpanModelKind AS kind, SpanModelSource AS source "
            "FROM otel_traces WHERE TraceId = {t:String} ORDER BY name",
            {"t": trace_id},
        )
        assert [(r["name"], r["kind"], r["source"]) for r in kinds] == [
            ("Agent.run()", "other", ""),
            ("Calculator.try_run()", "tool", "griptape"),
            ("OpenAiChatPromptDriver.run()", "llm", "griptape"),
            ("cache.get", "other", ""),
            ("main", "other", ""),
        ]
        (c,) = s.query(
            "SELECT ToolName, StatusCode FROM planscope_tool_calls WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (c["ToolName"], c["StatusCode"]) == ("Calculator", "Error")


def test_0040_usage_that_is_no_finite_number_counts_as_none(tmp_path: Path) -> None:
    """0040: an LLM call whose token count or cost reads as nan or inf (``NaN``, ``Infinity``,
    ``1e400``) failed the insert of its whole request; now it is stored, those numbers 0, the
    others as they are (found by tests/analyzer/test_fuzz_mapping.py)."""
    trace_id = new_trace_id()

    def call(tokens: str, cost: str, model: str) -> Any:
        attrs = {
            A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
            A.GEN_AI_REQUEST_MODEL: model,
            A.GEN_AI_USAGE_INPUT_TOKENS: tokens,
            A.GEN_AI_USAGE_OUTPUT_TOKENS: "30",
            "gen_ai.usage.cost": cost,
        }
        return make_span(trace_id=trace_id, name=f"chat {model}", attrs=attrs)

    spans = [call("NaN", "Infinity", "a"), call("1e400", "-inf", "b"), call("120", "0.5", "c")]
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate()
        s.insert_spans(spans_ipc(spans))
        rows = s.query(
            "SELECT Model, InputTokens, OutputTokens, CostUsd FROM planscope_llm_calls "
            "WHERE TraceId = {t:String} ORDER BY Model",
            {"t": trace_id},
        )
        assert [tuple(r.values()) for r in rows] == [
            ("a", 0, 30, 0.0),
            ("b", 0, 30, 0.0),
            ("c", 120, 30, 0.5),
        ]


def test_0038_mlflow_tracing_maps_to_the_span_model(tmp_path: Path) -> None:
    """0038: MLflow's span types (JSON-encoded, as MLflow writes every value) are kinds, its
    span inputs / outputs (a string output decoded), model and token usage read into the typed
    rows; its own ERROR status stays the status."""
    trace_id = new_trace_id()

    def span(
        name: str, kind: str, parent: str = "", status: str = "Unset", attrs: Any = None
    ) -> Any:
        encoded = {A.MLFLOW_SPAN_TYPE: json.dumps(kind)}
        encoded |= {k: json.dumps(v) for k, v in (attrs or {}).items()}
        return make_span(trace_id=trace_id, name=name, parent=parent, attrs=encoded, status=status)

    run = span("loan", "AGENT", "", "Error", attrs={A.MLFLOW_SPAN_INPUTS: {"loan": "L-1"}})
    usage = {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150}
    spans = [
        run,
        span("planner", "CHAIN", run[2]),
        span(
            "Completions",
            "CHAT_MODEL",
            run[2],
            attrs={A.MLFLOW_LLM_MODEL: "gpt-4o-mini", A.MLFLOW_CHAT_USAGE: usage},
        ),
        span("executor", "AGENT", run[2], "Error"),
        span(
            "book",
            "TOOL",
            run[2],
            attrs={A.MLFLOW_SPAN_INPUTS: {"day": "05-02"}, A.MLFLOW_SPAN_OUTPUTS: '{"ok": 1}'},
        ),
        span("check", "GUARDRAIL", run[2]),
    ]
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate()
        s.insert_spans(spans_ipc(spans))
        kinds = s.query(
            "SELECT SpanName AS name, SpanModelKind AS kind, SpanModelSource AS source "
            "FROM otel_traces WHERE TraceId = {t:String} ORDER BY name",
            {"t": trace_id},
        )
        assert [(r["name"], r["kind"], r["source"]) for r in kinds] == [
            ("Completions", "llm", "mlflow"),
            ("book", "tool", "mlflow"),
            ("check", "other", "mlflow"),
            ("executor", "step", "mlflow"),
            ("loan", "run", "mlflow"),
            ("planner", "other", "mlflow"),
        ]
        (r,) = s.query(
            "SELECT Objective, Outcome FROM planscope_runs WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (r["Objective"], r["Outcome"]) == ('{"loan": "L-1"}', "failure")
        (a,) = s.query(
            "SELECT StepId, Status FROM planscope_step_attempts WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (a["StepId"], a["Status"]) == ("executor", "error")
        (c,) = s.query(
            "SELECT ToolName, Arguments, Result FROM planscope_tool_calls "
            "WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (c["ToolName"], c["Arguments"], c["Result"]) == (
            "book",
            '{"day": "05-02"}',
            '{"ok": 1}',
        )
        (m,) = s.query(
            "SELECT Model, InputTokens, OutputTokens FROM planscope_llm_calls "
            "WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
        assert (m["Model"], m["InputTokens"], m["OutputTokens"]) == ("gpt-4o-mini", 120, 30)


def test_0037_logfire_logs_carry_their_level_and_text(tmp_path: Path) -> None:
    """0037: a Logfire log span's level and formatted message are columns of their own; every
    other span (a Logfire span too) has level 0."""
    trace_id = new_trace_id()
    root = make_span(
        trace_id=trace_id,
        name="fund grant {grant}",
        attrs={A.LOGFIRE_SPAN_TYPE: "span", A.LOGFIRE_MSG: "fund grant G-1"},
    )
    spans = [
        root,
        make_span(
            trace_id=trace_id,
            name="{step} gave up",
            parent=root[2],
            attrs={
                A.LOGFIRE_SPAN_TYPE: "log",
                A.LOGFIRE_LEVEL_NUM: 17,
                A.LOGFIRE_MSG: "pay gave up",
            },
        ),
        make_span(
            trace_id=trace_id, name="note", parent=root[2], attrs={A.LOGFIRE_SPAN_TYPE: "log"}
        ),
    ]
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate()
        s.insert_spans(spans_ipc(spans))
        rows = s.query(
            "SELECT SpanName AS name, SpanModelLogLevel AS level, SpanModelLogMessage AS text "
            "FROM otel_traces WHERE TraceId = {t:String} ORDER BY name",
            {"t": trace_id},
        )
    assert [(r["name"], r["level"], r["text"]) for r in rows] == [
        ("fund grant {grant}", 0, ""),
        ("note", 1, ""),
        ("{step} gave up", 17, "pay gave up"),
    ]


def test_0042_a_structured_plans_step_key_is_its_id(tmp_path: Path) -> None:
    """0042: a foreign LLM call's structured-output plan whose steps name themselves by ``key``
    keeps those names as step ids (before: their positions); ``id`` / ``name`` still win."""
    trace_id = new_trace_id()
    plan = {
        "tasks": [
            {"key": "reserve", "goal": "Reserve stock", "tool": "search_lots"},
            {"key": "pay", "goal": "Pay", "tool": "pay", "name": "settle"},
        ]
    }
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": json.dumps(plan)}]}]
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(answer)}
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate()
        s.insert_spans(spans_ipc([make_span(trace_id=trace_id, name="chat", attrs=attrs)]))
        steps = s.query(
            "SELECT StepId, Tool FROM planscope_plan_steps WHERE TraceId = {t:String} "
            "ORDER BY Position",
            {"t": trace_id},
        )
        assert [(r["StepId"], r["Tool"]) for r in steps] == [
            ("reserve", "search_lots"),
            ("settle", "pay"),
        ]


def test_0044_a_plan_of_sentences_names_each_step_by_its_trimmed_text(tmp_path: Path) -> None:
    """0044: a structured-output plan of bare strings (``Plan(steps: list[str])``) names each
    step by its sentence, trimmed (before: its position); a text that is an identifier is still
    its id, and an empty one its position."""
    trace_id = new_trace_id()
    plan = {"steps": ["  Fetch the torn folio from the reading room. ", "press_folio", " "]}
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": json.dumps(plan)}]}]
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(answer)}
    with open_store(f"chdb://{tmp_path}/db") as s:
        s.migrate()
        s.insert_spans(spans_ipc([make_span(trace_id=trace_id, name="chat", attrs=attrs)]))
        steps = s.query(
            "SELECT StepId FROM planscope_plan_steps WHERE TraceId = {t:String} ORDER BY Position",
            {"t": trace_id},
        )
    assert [r["StepId"] for r in steps] == [
        "Fetch the torn folio from the reading room.",
        "press_folio",
        "3",
    ]
