"""The Store API: DSNs, errors, parameter binding, ingest batches, locking."""

from __future__ import annotations

import datetime as dt
import socket
import threading
from pathlib import Path

import planscope
import planscope_collector.storage as storage
import pytest
from clickhouse_connect.driver.binding import must_escape
from planscope_collector.storage import (
    InvalidDsn,
    MigrationError,
    Store,
    StoreError,
    StoreUnavailable,
    open_store,
)
from planscope_collector.storage._store import EMBEDDED_SETTINGS, ESCAPED_CHARS, _parse_dsn

from tests.conftest import Migrated

from ._spans import count, make_span, new_trace_id, spans_ipc
from .test_storage_migrations import EXPECTED


def test_public_surface() -> None:
    public = {name for name in dir(storage) if not name.startswith("_")}
    assert set(storage.__all__) == public - {"annotations"}
    assert storage.TRACE_COLUMNS[-1] == "Project"
    assert storage.TRACE_COLUMNS[:-1] == storage.EXPORTER_TRACE_COLUMNS
    assert len(storage.EXPORTER_TRACE_COLUMNS) == 22


def test_exception_hierarchy() -> None:
    assert issubclass(StoreError, planscope.PlanscopeError)
    assert issubclass(StoreUnavailable, StoreError)
    assert issubclass(MigrationError, StoreError)
    assert issubclass(InvalidDsn, StoreError) and issubclass(InvalidDsn, ValueError)


@pytest.mark.parametrize(
    "dsn",
    [
        "",
        "chdb://relative/path",
        "chdb:relative",
        "postgres://host/db",
        "http:///nohost",
        "http://host:99999/db",
        "http://host:8123/a/b",
        "http://host:8123/bad-name",
    ],
)
def test_invalid_dsns(dsn: str) -> None:
    with pytest.raises(InvalidDsn):
        open_store(dsn)


def test_dsn_parsing_keeps_the_password_out_of_repr() -> None:
    target = _parse_dsn("https://alice:s3cret@ch.example:8443/planscope?compress=lz4", None)
    assert (target.kind, target.database) == ("http", "planscope")
    assert target.client_dsn == "https://alice:s3cret@ch.example:8443?compress=lz4"
    assert "s3cret" not in target.display
    assert _parse_dsn("http://ch:8123", None).database == "default"
    assert _parse_dsn("http://ch:8123/x", "override").database == "override"
    chdb = _parse_dsn("chdb:///var/lib/x/", None)
    assert (chdb.kind, chdb.database, str(chdb.path)) == ("chdb", "default", "/var/lib/x")


def test_unreachable_server_is_unavailable_not_a_crash() -> None:
    with socket.socket() as sock:  # a loopback port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StoreUnavailable, match=r"127\.0\.0\.1") as info:
        open_store(f"http://default:hunter2@127.0.0.1:{port}/planscope")
    assert "hunter2" not in str(info.value)


def test_embedded_store_creates_its_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "a" / "b" / "chdb"
    with open_store(f"chdb://{data}") as s:
        assert data.is_dir()
        assert s.embedded and s.ping()
        assert s.query("SELECT {x:UInt8} + 1 AS y", {"x": 1}) == [{"y": 2}]
    assert not s.ping()
    with pytest.raises(StoreError, match="closed"):
        s.query("SELECT 1")
    s.close()  # idempotent


def test_data_survives_reopen(tmp_path: Path, migrated: Migrated) -> None:
    dsn = migrated.store_dsn(tmp_path / "db")
    trace_id = new_trace_id()
    with open_store(dsn) as s:
        s.migrate()
        s.insert_spans(spans_ipc([make_span(trace_id=trace_id)]))
    with open_store(dsn) as s:
        assert s.migrate() == []
        assert count(s, "otel_traces", "TraceId = {t:String}", {"t": trace_id}) == 1


HOSTILE = [
    "plain",
    "it's",
    "a'b'c",
    "back\\slash",
    "trailing\\",
    "\\'; DROP TABLE otel_traces; --",
    'double"quote',
    "{x:String}",
    "%(project)s",
    "%s",
    "new\nline\ttab",
    "ünïcødé ✓",
    "",
]


def test_parameter_binding_with_hostile_strings_returns_exactly_the_rows(store: Store) -> None:
    trace_id = new_trace_id()
    store.insert_spans(
        spans_ipc([make_span(trace_id=trace_id, name=value, project=value) for value in HOSTILE])
    )
    for value in HOSTILE:
        rows = store.query(
            "SELECT SpanName, Project FROM otel_traces "
            "WHERE Project = {p:String} AND SpanName = {n:String} AND TraceId = {t:String}",
            {"p": value, "n": value, "t": trace_id},
        )
        assert rows == [{"SpanName": value, "Project": value}], value
    rows = store.query(
        "SELECT count() AS n FROM otel_traces WHERE Project IN {ps:Array(String)}",
        {"ps": HOSTILE[:4]},
    )
    assert rows == [{"n": 4}]
    assert count(store, "otel_traces") == len(HOSTILE)  # nothing was dropped


def test_long_strings_bind_exactly_with_or_without_characters_to_escape(store: Store) -> None:
    """A long string with nothing to escape skips the driver's per-character escaping; one with
    any such character, or a short one, goes through it: all bind to exactly the value given."""
    assert must_escape == ESCAPED_CHARS  # the skip is exact only for what the driver escapes
    ids = ",".join(new_trace_id() for _ in range(200))
    for value in [ids, *(ids + c + ids for c in HOSTILE[1:]), "a" * 2000 + "\\", "short"]:
        rows = store.query("SELECT {v:String} AS v, length({v:String}) AS n", {"v": value})
        assert rows == [{"v": value, "n": len(value.encode())}], value[-40:]
    listed = store.query(
        "SELECT count() AS n FROM (SELECT arrayJoin(splitByChar(',', {ids:String})) AS i) "
        "WHERE length(i) = 32",
        {"ids": ids},
    )
    assert listed == [{"n": 200}]


def test_embedded_arrow_results_are_not_compressed(store: Store) -> None:
    """In process, the Arrow result is read where it was written: no LZ4 frames to undo."""
    assert store.embedded
    table = store.query_arrow(
        "SELECT getSetting('output_format_arrow_compression_method') AS method"
    )
    assert table.to_pylist() == [{"method": "none"}]


def test_client_side_formatting_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="server-side binding"):
        store.query("SELECT * FROM otel_traces WHERE Project = %(p)s", {"p": "x"})
    with pytest.raises(StoreError, match="server-side binding"):
        store.command("ALTER TABLE otel_traces DELETE WHERE Project = %(p)s", {"p": "x"})


def test_sql_errors_are_store_errors_not_unavailable(store: Store) -> None:
    with pytest.raises(StoreError) as info:
        store.query("SELECT * FROM no_such_table")
    assert not isinstance(info.value, StoreUnavailable)
    assert store.ping()  # the store still works afterwards


def test_ingest_batches_and_known_hashes(store: Store) -> None:
    now = dt.datetime.now(dt.timezone.utc)
    old = now - dt.timedelta(hours=2)
    rows = [("default", "h-new", now, 3), ("p2", "h-new-2", now, 1), ("default", "h-old", old, 9)]
    store.insert_ingest_batches(rows, dedup_token="seg-1")
    store.insert_ingest_batches(rows, dedup_token="seg-1")
    assert count(store, "planscope_ingest_batches") == 3
    assert store.known_batch_hashes(3600) == {"h-new", "h-new-2"}
    assert store.known_batch_hashes(3 * 3600) == {"h-new", "h-new-2", "h-old"}
    ms = int(now.timestamp() * 1000)
    store.insert_ingest_batches([("default", "h-int", ms, 1)])
    assert "h-int" in store.known_batch_hashes(60)


def test_concurrent_writers_and_readers_share_one_store(store: Store) -> None:
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(5):
                trace_id = new_trace_id()
                store.insert_spans(
                    spans_ipc([make_span(trace_id=trace_id) for _ in range(10)]),
                    dedup_token=f"w{n}-{i}",
                )
                store.query("SELECT count() FROM planscope_trace_index")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert count(store, "otel_traces") == 4 * 5 * 10
    assert store.query("SELECT sum(SpanCount) AS n FROM planscope_trace_index") == [{"n": 200}]


def test_second_chdb_path_in_one_process_is_a_clear_error(tmp_path: Path) -> None:
    with (
        open_store(f"chdb://{tmp_path}/one"),
        pytest.raises(StoreError, match="one data directory per process"),
    ):
        open_store(f"chdb://{tmp_path}/two")
    with open_store(f"chdb://{tmp_path}/two") as s:  # fine once the first is closed
        assert s.ping()


def test_command_runs_ddl_in_the_store_database(tmp_path: Path) -> None:
    with open_store(f"chdb://{tmp_path}/db", database="tenant_a") as s:
        assert s.migrate() == EXPECTED
        s.insert_spans(spans_ipc([make_span(trace_id=new_trace_id())]))
        assert count(s, "otel_traces") == 1
        assert count(s, "tenant_a.otel_traces") == 1
        assert count(s, "system.tables", "database = 'default' AND name = 'otel_traces'") == 0
        s.command("TRUNCATE TABLE otel_traces")
        assert count(s, "otel_traces") == 0


def test_the_embedded_engine_is_sized_for_the_collector_process(tmp_path: Path) -> None:
    """ClickHouse's defaults (5 GiB per cache, 16 merge threads) assume a server owning the host."""
    with open_store(f"chdb://{tmp_path}/db") as s:
        rows = s.query(
            "SELECT name, value FROM system.server_settings WHERE name IN {n:Array(String)}",
            {"n": list(EMBEDDED_SETTINGS)},
        )
        values = {str(r["name"]): int(r["value"]) for r in rows}
    assert values == dict(EMBEDDED_SETTINGS)
