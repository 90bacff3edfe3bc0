"""The Store: one code path for embedded chDB and a ClickHouse server via clickhouse-connect."""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from planscope_collector.runmodel import BindingCache
from planscope_collector.storage._errors import (
    InvalidDsn,
    MigrationError,
    StoreError,
    StoreRejected,
    StoreUnavailable,
    is_transient,
)
from planscope_collector.storage._migrations import (
    Migration,
    load_migrations,
    quote_identifier,
    render,
    split_statements,
)
from planscope_collector.storage._schema import (
    EXPORTER_TRACE_COLUMNS,
    INGEST_BATCH_COLUMNS,
    INGEST_BATCHES_TABLE,
    MIGRATIONS_TABLE,
    TRACE_COLUMNS,
    TRACES_TABLE,
)

logger = logging.getLogger(__name__)

_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SERVER_BIND_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*):[^{}]+\}")
#: Settings for every span insert: synchronous, so insert_deduplication_token applies, and
#: deduplication propagated into the materialized views' target tables.
_INSERT_SETTINGS: Mapping[str, Any] = {
    "async_insert": 0,
    "deduplicate_blocks_in_dependent_materialized_views": 1,
}

#: The embedded engine's server settings, given to chDB when it starts, for the 1 GiB the
#: collector's process keeps to (docs/storage.md, "Memory"). ClickHouse sizes its caches for a
#: server owning the host: 5 GiB each for marks, primary indexes and skip-index marks, filled by
#: reads and kept; in the collector's process they would grow with the data read. One merge
#: thread: merges of several typed tables at once (~100-170 MiB each, even of small parts) on
#: top of an insert took the process past 1 GiB with a full spool.
EMBEDDED_SETTINGS: Mapping[str, int] = {
    "mark_cache_size": 128 << 20,
    "primary_index_cache_size": 64 << 20,
    "index_mark_cache_size": 32 << 20,
    "query_condition_cache_size": 16 << 20,
    "background_pool_size": 1,
}

# Columns that the clickhouseexporter's tables may lack (``Project`` always; the scope columns
# before the exporter added them), in the definitions 0001 gives them.
_PROJECT_COLUMN = "Project LowCardinality(String) DEFAULT 'default' CODEC(ZSTD(1))"
_ADOPTED_COLUMNS: dict[str, dict[str, str]] = {
    TRACES_TABLE: {
        "ScopeName": "ScopeName String CODEC(ZSTD(1)) AFTER ResourceAttributes",
        "ScopeVersion": "ScopeVersion String CODEC(ZSTD(1)) AFTER ScopeName",
        "Project": _PROJECT_COLUMN,
    },
    f"{TRACES_TABLE}_trace_id_ts": {"Project": _PROJECT_COLUMN},
}

#: ClickHouse refuses a block that spans more partitions than ``max_partitions_per_insert_block``
#: (default 100; code 252). ``otel_traces`` and the views are partitioned by day, so a span block
#: covering more days is inserted as several blocks of at most this many days each.
MAX_PARTITIONS_PER_INSERT = 100


def _partition_groups(body: bytes) -> list[bytes]:
    """An Arrow IPC stream of spans, split into streams of at most 100 distinct days each.

    The split depends only on the rows, so a replay of the same rows yields the same blocks.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.ipc.open_stream(pa.py_buffer(body)).read_all()  # a Buffer or bytes
    days = pc.cast(pc.cast(table["Timestamp"], pa.date32()), pa.int32()).to_numpy()
    distinct = np.unique(days)
    if len(distinct) <= MAX_PARTITIONS_PER_INSERT:
        return [body]
    group = np.searchsorted(distinct, days) // MAX_PARTITIONS_PER_INSERT
    blocks = []
    for number in range(int(group.max()) + 1):
        blocks.append(ipc_stream(table.filter(pa.array(group == number))).to_pybytes())
    return blocks


def ipc_stream(table: Any) -> Any:
    """A ``pyarrow.Table`` as one Arrow IPC stream (a ``pyarrow.Buffer``, bytes-like, not
    copied): the one encoding spans travel in, from the flatten worker to the store.

    >>> import pyarrow as pa
    >>> len(ipc_stream(pa.table({"a": [1]}))) > 0
    True
    """
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return sink.getvalue()


_BOOTSTRAP_SQL = """
CREATE DATABASE IF NOT EXISTS {db} {on_cluster};
CREATE TABLE IF NOT EXISTS {db}.schema_migrations {on_cluster} (
    name String,
    checksum String,
    applied_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {engine:MergeTree}
ORDER BY name
SETTINGS non_replicated_deduplication_window = 10000;
"""


@dataclass(frozen=True)
class _Target:
    kind: Literal["chdb", "http"]
    client_dsn: str
    database: str
    path: Path | None
    display: str


def _parse_dsn(dsn: str, database: str | None) -> _Target:
    if not isinstance(dsn, str) or not dsn:
        raise InvalidDsn("empty DSN; expected chdb:///abs/path or http(s)://host:port/db")
    parts = urlsplit(dsn)
    scheme = parts.scheme.lower()
    if scheme == "chdb":
        if parts.netloc:
            raise InvalidDsn(
                f"chdb DSN needs an absolute path and three slashes (chdb:///var/lib/planscope), "
                f"got {dsn!r}"
            )
        path = unquote(parts.path)
        if not path.startswith("/"):
            raise InvalidDsn(f"chdb DSN path must be absolute, got {dsn!r}")
        db = database or "default"
        if not _IDENT_RE.match(db):
            raise InvalidDsn(f"database name {db!r} is not a plain identifier")
        resolved = Path(os.path.realpath(path))
        client_dsn = urlunsplit(("chdb", "", str(resolved), parts.query, ""))
        return _Target("chdb", client_dsn, db, resolved, f"chdb://{resolved}")
    if scheme in ("http", "https"):
        if not parts.hostname:
            raise InvalidDsn(f"{scheme} DSN needs a host, got {_redact(dsn)!r}")
        try:
            _ = parts.port
        except ValueError as exc:
            raise InvalidDsn(f"bad port in DSN {_redact(dsn)!r}") from exc
        segments = [s for s in parts.path.split("/") if s]
        if len(segments) > 1:
            raise InvalidDsn(f"DSN path must be at most one database name, got {parts.path!r}")
        db = database or (unquote(segments[0]) if segments else "default")
        if not _IDENT_RE.match(db):
            raise InvalidDsn(f"database name {db!r} is not a plain identifier")
        # The database is applied per request after migrate() may have created it, so the client
        # connects without one (a missing database would otherwise fail the connect handshake).
        client_dsn = urlunsplit((scheme, parts.netloc, "", parts.query, ""))
        return _Target("http", client_dsn, db, None, _redact(dsn))
    raise InvalidDsn(
        f"unsupported DSN scheme {parts.scheme!r}; use chdb:///abs/path or http(s)://host:port/db"
    )


def _redact(dsn: str) -> str:
    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class Store:
    """ClickHouse storage for spans, derived tables and ingest bookkeeping.

    Create it with :func:`open_store`. Every method is thread-safe: calls are serialised by one
    lock, because chDB's in-process client is not known to be thread-safe and the collector calls
    the store from its writer thread and from request handlers.

    >>> store = open_store("chdb:///tmp/planscope-doc")
    >>> store.migrate()  # doctest: +SKIP
    ['0001_otel_traces', '0002_planscope_views', '0003_ingest_batches']
    >>> store.query("SELECT {x:UInt8} + 1 AS y", {"x": 1})
    [{'y': 2}]
    >>> store.close()
    """

    def __init__(self, target: _Target) -> None:
        self._target = target
        self._lock = threading.RLock()
        self._client: Any = None
        self._closed = False
        self.bindings = BindingCache()
        """The framework traces' bindings this store's readers reuse (``runmodel.bind_traces``)."""

    # -- connection --------------------------------------------------------------------------

    @property
    def database(self) -> str:
        """The database the store's tables live in (``default`` unless the DSN names one)."""
        return self._target.database

    @property
    def embedded(self) -> bool:
        """True for an in-process chDB store, False for a ClickHouse server."""
        return self._target.kind == "chdb"

    def __repr__(self) -> str:
        return f"Store({self._target.display!r}, database={self.database!r})"

    def _connect(self) -> Any:
        if self._closed:
            raise StoreError(f"{self!r} is closed")
        if self._client is not None:
            return self._client
        import clickhouse_connect

        if self._target.path is not None:
            try:
                self._target.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create chDB data dir {self._target.path}: {exc}") from exc
        with self._translate("connect"):
            if self.embedded:
                client = clickhouse_connect.get_client(
                    dsn=self._target.client_dsn, chdb_options=dict(EMBEDDED_SETTINGS)
                )
            else:
                client = clickhouse_connect.get_client(dsn=self._target.client_dsn)
        # Applied per request (chDB: USE on its handle), so it may name a database that only
        # migrate() creates; migrations qualify every name and run with use_database=False.
        client.database = self._target.database
        self._client = client
        return client

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        """Map driver exceptions onto the storage hierarchy; drop the client on transient ones."""
        from clickhouse_connect.driver.exceptions import ClickHouseError, OperationalError

        try:
            yield
        except StoreError:
            raise
        except (OperationalError, OSError, TimeoutError) as exc:
            self._discard_client()
            raise StoreUnavailable(f"{action} on {self._target.display} failed: {exc}") from exc
        except ClickHouseError as exc:
            message = str(exc)
            if "EmbeddedServer already initialized" in message:
                raise StoreError(
                    f"chDB allows one data directory per process and another one is open; "
                    f"close every store on it before opening {self._target.display} ({message})"
                ) from exc
            insert = action.startswith("insert")
            if is_transient(exc, insert=insert):
                self._discard_client()
                raise StoreUnavailable(f"{action} on {self._target.display}: {message}") from exc
            if insert:
                raise StoreRejected(f"{action} on {self._target.display}: {message}") from exc
            raise StoreError(f"{action} on {self._target.display}: {message}") from exc

    def _discard_client(self) -> None:
        client, self._client = self._client, None
        if client is not None and not self.embedded:
            try:
                client.close()
            except Exception:  # pragma: no cover - best effort on an already broken connection
                logger.debug("closing a failed client raised", exc_info=True)

    def ping(self, *, wait: bool = True) -> bool:
        """True when the store answers a trivial query; never raises.

        With ``wait=False`` a store that is busy with another call (an insert, a query) is not
        waited for and counts as up: whoever holds it reports its own failures (the collector's
        writer through its stats). Readiness probes use this, so they never queue behind a
        long insert.

        >>> store.ping()  # doctest: +SKIP
        True
        """
        if not self._lock.acquire(blocking=wait):
            return not self._closed
        try:
            client = self._connect()
            return bool(client.ping())
        except Exception:
            return False
        finally:
            self._lock.release()

    def close(self) -> None:
        """Release the connection (for chDB, lets this process open another data dir). Idempotent.

        >>> store.close()  # doctest: +SKIP
        """
        with self._lock:
            client, self._client = self._client, None
            self._closed = True
            if client is not None:
                client.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- schema ------------------------------------------------------------------------------

    def migrate(
        self,
        cluster: str | None = None,
        ttl_days: int = 30,
        *,
        directory: Path | None = None,
    ) -> list[str]:
        """Apply pending migrations in order; return the names applied by this call.

        Idempotent: applied files (recorded in ``schema_migrations``) are skipped. An applied file
        whose content changed is refused with :class:`MigrationError` - write a new migration
        instead. ``cluster`` renders ``ON CLUSTER`` and Replicated engines; ``directory``
        replaces the packaged migrations (tests, plugins).

        >>> store.migrate(ttl_days=14)  # doctest: +SKIP
        ['0001_otel_traces', '0002_planscope_views', '0003_ingest_batches']
        """
        migrations = load_migrations(directory)
        with self._lock:
            client = self._connect()
            self._run_script(client, "bootstrap", _BOOTSTRAP_SQL, cluster, ttl_days)
            applied = self._applied_migrations(client)
            if "0001_otel_traces" not in applied:
                self._adopt_exporter_table(client, cluster, ttl_days)
            for migration in migrations:
                recorded = applied.get(migration.name)
                if recorded is not None and recorded != migration.checksum:
                    raise MigrationError(
                        f"migration {migration.name} was applied with checksum {recorded[:12]}... "
                        f"but the file now has {migration.checksum[:12]}...; applied migrations "
                        f"must not change - add a new NNNN_*.sql file instead"
                    )
            done: list[str] = []
            for migration in migrations:
                if migration.name in applied:
                    continue
                self._apply(client, migration, cluster, ttl_days)
                done.append(migration.name)
            return done

    def applied_migrations(self) -> dict[str, str]:
        """Names and checksums recorded in ``schema_migrations`` (empty before the first migrate).

        >>> store.applied_migrations()  # doctest: +SKIP
        {'0001_otel_traces': '9f2c...', ...}
        """
        with self._lock:
            client = self._connect()
            exists = self._scalar(
                client,
                "SELECT count() FROM system.tables "
                "WHERE database = {db:String} AND name = {t:String}",
                {"db": self.database, "t": MIGRATIONS_TABLE},
            )
            return self._applied_migrations(client) if exists else {}

    def _applied_migrations(self, client: Any) -> dict[str, str]:
        table = f"{quote_identifier(self.database)}.{MIGRATIONS_TABLE}"
        with self._translate("reading schema_migrations"):
            result = client.query(
                f"SELECT name, argMax(checksum, applied_at) FROM {table} GROUP BY name"
            )
        return {str(name): str(checksum) for name, checksum in result.result_rows}

    def _adopt_exporter_table(self, client: Any, cluster: str | None, ttl_days: int) -> None:
        """Give the tables an OpenTelemetry Collector's clickhouseexporter created the columns
        planscope's migrations build on, so ``migrate`` extends them instead of failing."""
        for table, definitions in _ADOPTED_COLUMNS.items():
            with self._translate(f"reading the columns of {table}"):
                rows = client.query(
                    "SELECT name, type FROM system.columns "
                    "WHERE database = {db:String} AND table = {t:String}",
                    parameters={"db": self.database, "t": table},
                ).result_rows
            present = {str(name): str(kind) for name, kind in rows}
            if present.get("SpanAttributes", "Map").startswith("JSON"):
                raise MigrationError(
                    f"{table} was created by the clickhouseexporter's JSON schema "
                    "(SpanAttributes JSON); planscope reads the default Map schema - point "
                    "planscope at another database, or run the exporter without json: true"
                )
            missing = [column for column in definitions if column not in present]
            if not present or not missing:  # no such table, or nothing to add
                continue
            logger.info("adopting the clickhouseexporter's %s: adding %s", table, missing)
            adds = ", ".join(f"ADD COLUMN IF NOT EXISTS {definitions[c]}" for c in missing)
            sql = f"ALTER TABLE {{db}}.{table} {{on_cluster}} {adds}"
            self._run_script(client, f"adopting {table}", sql, cluster, ttl_days)

    def _scalar(self, client: Any, sql: str, parameters: Mapping[str, Any]) -> Any:
        with self._translate("query"):
            rows = client.query(sql, parameters=dict(parameters)).result_rows
        return rows[0][0] if rows else None

    def _apply(self, client: Any, migration: Migration, cluster: str | None, ttl: int) -> None:
        logger.info("applying migration %s to %s", migration.name, self._target.display)
        self._run_script(client, migration.name, migration.sql, cluster, ttl)
        with self._translate(f"recording migration {migration.name}"):
            client.insert(
                MIGRATIONS_TABLE,
                [[migration.name, migration.checksum]],
                column_names=["name", "checksum"],
                database=self.database,
            )

    def _run_script(
        self, client: Any, name: str, sql: str, cluster: str | None, ttl_days: int
    ) -> None:
        rendered = render(
            sql,
            cluster,
            database=self.database,
            ttl_days=ttl_days,
            distributed=cluster is not None,
        )
        for number, statement in enumerate(split_statements(rendered), start=1):
            try:
                with self._translate(f"migration {name} statement {number}"):
                    client.command(statement, use_database=False)
            except StoreUnavailable:
                raise
            except StoreError as exc:
                raise MigrationError(f"{exc}\n-- statement:\n{statement}") from exc

    # -- writes ------------------------------------------------------------------------------

    def insert_spans(self, body: Any, *, dedup_token: str | None = None) -> None:
        """Insert spans into ``otel_traces`` (and so, through the views, every derived table).

        ``body`` is an Arrow IPC stream (bytes-like) as :func:`ipc_stream` encodes the table
        ``SpanColumns.to_arrow`` builds; the collector's writer gets it from its flatten worker
        and sends it as it is, as one ``ArrowStream`` block that ClickHouse (and chDB) decode
        natively. The schema must name :data:`TRACE_COLUMNS` (or
        :data:`EXPORTER_TRACE_COLUMNS`) in that order; it is checked before anything is sent.
        With ``dedup_token`` (e.g. the spool segment id), inserting the same spans again with the
        same token changes nothing, in ``otel_traces`` or any view.

        >>> store.insert_spans(columns.to_ipc(), dedup_token="spool:42")  # doctest: +SKIP
        """
        import pyarrow as pa

        try:
            names = tuple(pa.ipc.open_stream(pa.py_buffer(body)).schema.names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise StoreError(f"span stream is not an Arrow IPC stream: {exc}") from exc
        if names not in (TRACE_COLUMNS, EXPORTER_TRACE_COLUMNS):
            raise StoreError(f"span stream columns {names} are not {TRACE_COLUMNS}")
        self._insert_span_stream(names, body, dedup_token)

    def _insert_span_stream(
        self, names: tuple[str, ...], body: bytes, dedup_token: str | None
    ) -> None:
        target = f"{quote_identifier(self.database)}.{TRACES_TABLE}"
        for part, block in enumerate(_partition_groups(body)):
            settings = dict(_INSERT_SETTINGS)
            if dedup_token is not None:
                # A replay splits the same rows the same way, so each part keeps its token.
                token = dedup_token if part == 0 else f"{dedup_token}/p{part}"
                settings["insert_deduplication_token"] = token
            with self._lock, self._translate(f"insert into {TRACES_TABLE}"):
                self._connect().raw_insert(
                    target, list(names), insert_block=block, settings=settings, fmt="ArrowStream"
                )

    def insert_otlp_spans(
        self, stream: bytes | Sequence[bytes | memoryview], *, dedup_token: str | None = None
    ) -> None:
        """Insert spans from OTLP protobuf requests that ClickHouse flattens itself.

        ``stream`` (bytes, or pieces to be concatenated, which are not copied into one) holds
        length-delimited requests (varint length, then the message) whose attribute values
        are scalars, each followed by its project override (see ``storage._protobuf``); the
        rows are those ``SpanColumns`` would build. Callers keep one
        insert under 100 distinct days (``max_partitions_per_insert_block``). With
        ``dedup_token``, the same insert again changes nothing, in ``otel_traces`` or any view.

        >>> store.insert_otlp_spans(segment_stream, dedup_token="spool:42/o0")  # doctest: +SKIP
        """
        from ._protobuf import (
            SETTINGS,
            STRUCTURE,
            flatten_select,
            literal,
            schema_settings,
            settings_clause,
        )

        pieces = [stream] if isinstance(stream, bytes) else stream
        schema = schema_settings(self._target.path if self.embedded else None)
        settings: dict[str, Any] = {**_INSERT_SETTINGS, **SETTINGS, **schema}
        if dedup_token is not None:
            settings["insert_deduplication_token"] = dedup_token
        names = ", ".join(f"`{c}`" for c in TRACE_COLUMNS)  # constants, some dotted
        target = f"{quote_identifier(self.database)}.{TRACES_TABLE}"
        if not self.embedded:  # the data travels in the request body, read by input()
            source = f"input({literal(STRUCTURE)})"
            sql = f"INSERT INTO {target} ({names}) {flatten_select(source)}"
            data = b"".join(pieces)
            with self._lock, self._translate(f"insert into {TRACES_TABLE}"):
                self._connect().command(f"{sql} FORMAT Protobuf", data=data, settings=settings)
            return
        # chDB reads a file (as clickhouse-connect's chDB backend does for every insert).
        with tempfile.NamedTemporaryFile(suffix=".pb") as tmp:
            tmp.writelines(pieces)
            tmp.flush()
            source = f"file({literal(tmp.name)}, 'Protobuf', {literal(STRUCTURE)})"
            sql = f"INSERT INTO {target} ({names}) {flatten_select(source)}"
            sql += f" SETTINGS {settings_clause(settings)}"
            with self._lock, self._translate(f"insert into {TRACES_TABLE}"):
                self._connect().command(sql)

    def insert_ingest_batches(
        self, rows: Sequence[Sequence[Any]], *, dedup_token: str | None = None
    ) -> None:
        """Record accepted ingest requests: rows of :data:`INGEST_BATCH_COLUMNS`.

        ``ReceivedAt`` is a ``datetime`` (UTC) or int milliseconds since the epoch.

        >>> store.insert_ingest_batches([("default", "ab12...", now, 120)])  # doctest: +SKIP
        """
        self.insert_rows(INGEST_BATCHES_TABLE, rows, INGEST_BATCH_COLUMNS, dedup_token=dedup_token)

    def insert_rows(
        self,
        table: str,
        rows: Sequence[Sequence[Any]],
        columns: Sequence[str],
        *,
        dedup_token: str | None = None,
    ) -> None:
        """Columnar insert of ``rows`` (one value per name in ``columns``) into ``table``.

        Never SQL text. With ``dedup_token``, a repeat of the same insert changes nothing.

        >>> store.insert_rows("alert_rules", rows, ("Project", "RuleId"))  # doctest: +SKIP
        """
        if not rows:
            return
        width = len(columns)
        for index, row in enumerate(rows):
            if len(row) != width:
                raise StoreError(
                    f"row {index} for {table} has {len(row)} values, expected {width} ({columns})"
                )
        settings = dict(_INSERT_SETTINGS)
        if dedup_token is not None:
            settings["insert_deduplication_token"] = dedup_token
        with self._lock, self._translate(f"insert into {table}"):
            self._connect().insert(
                table,
                rows,
                column_names=list(columns),
                database=self.database,
                settings=settings,
            )

    def insert_arrow(self, table: str, data: Any) -> None:
        """Columnar insert of a ``pyarrow.Table`` whose column names are ``table``'s, as one
        ``ArrowStream`` block (ClickHouse converts each Arrow type to its column's: a
        ``timestamp[ns]`` into ``DateTime64(9)``, a ``list<string>`` into ``Array(String)``).

        Never SQL text. Unlike :meth:`insert_rows`, the driver neither describes the table nor
        serialises the values one by one in Python (nor imports pandas to check for a
        DataFrame): the analyzer's writes of a full pass, two inserts per batch.

        >>> store.insert_arrow("analysis_progress", progress_table)  # doctest: +SKIP
        """
        import pyarrow as pa

        if data.num_rows == 0:
            return
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, data.schema) as writer:
            writer.write_table(data)
        target = f"{quote_identifier(self.database)}.{quote_identifier(table)}"
        with self._lock, self._translate(f"insert into {table}"):
            self._connect().raw_insert(
                target,
                list(data.column_names),
                insert_block=sink.getvalue().to_pybytes(),
                settings=dict(_INSERT_SETTINGS),
                fmt="ArrowStream",
            )

    # -- reads -------------------------------------------------------------------------------

    def known_batch_hashes(self, since_seconds: int) -> set[str]:
        """Hashes of ingest batches accepted in the last ``since_seconds`` seconds.

        >>> store.known_batch_hashes(3600)  # doctest: +SKIP
        {'ab12...'}
        """
        rows = self.query(
            f"SELECT DISTINCT BatchHash AS h FROM {INGEST_BATCHES_TABLE} "
            "WHERE ReceivedAt >= now64(3) - toIntervalSecond({since:UInt32})",
            {"since": max(0, int(since_seconds))},
        )
        return {str(row["h"]) for row in rows}

    def query(self, sql: str, parameters: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a SELECT and return its rows as dicts; values bind server-side as ``{name:Type}``.

        Unqualified table names resolve in the store's database. Every parameter must appear as a
        ``{name:Type}`` placeholder: client-side ``%(name)s`` formatting is refused.

        >>> store.query(
        ...     "SELECT TraceId FROM otel_traces WHERE Project = {p:String} LIMIT 1", {"p": "demo"}
        ... )  # doctest: +SKIP
        [{'TraceId': '5b8efff798038103d269b633813fc60c'}]
        """
        params = self._check_parameters(sql, parameters)
        with self._lock, self._translate("query"):
            result = self._connect().query(sql, parameters=params)
            return list(result.named_results())

    def query_arrow(self, sql: str, parameters: Mapping[str, Any] | None = None) -> Any:
        """Run a SELECT and return its result as a ``pyarrow.Table`` (String columns as strings).

        Same binding rules as :meth:`query` (server-side ``{name:Type}`` only). Columnar: for
        readers of many rows (the analyzer), which skip building a dict per row.

        >>> store.query_arrow("SELECT {x:UInt8} + 1 AS y", {"x": 1}).to_pylist()  # doctest: +SKIP
        [{'y': 2}]
        """
        params = self._check_parameters(sql, parameters)
        with self._lock, self._translate("query"):
            return self._connect().query_arrow(
                sql,
                parameters=params,
                use_strings=True,
                settings=_IN_PROCESS_ARROW if self.embedded else None,
            )

    def command(self, sql: str, parameters: Mapping[str, Any] | None = None) -> None:
        """Run a statement that returns no rows (DDL, ``OPTIMIZE``, ``ALTER ... DELETE``...).

        >>> store.command("OPTIMIZE TABLE planscope_trace_index FINAL")  # doctest: +SKIP
        """
        params = self._check_parameters(sql, parameters)
        with self._lock, self._translate("command"):
            self._connect().command(sql, parameters=params)

    @staticmethod
    def _check_parameters(sql: str, parameters: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if not parameters:
            return None
        used = set(_SERVER_BIND_RE.findall(sql))
        unused = sorted(set(parameters) - used)
        if unused:
            raise StoreError(
                f"parameters {unused} have no {{name:Type}} placeholder in the query; only "
                f"server-side binding is allowed"
            )
        return {
            name: _Unescaped(value)
            if isinstance(value, str) and len(value) > _PLAIN_MIN and not _ESCAPED.search(value)
            else value
            for name, value in parameters.items()
        }


_IN_PROCESS_ARROW: Mapping[str, str] = {"output_format_arrow_compression_method": "none"}
"""An embedded store's Arrow results are not compressed: they never leave the process, and
ClickHouse's default (LZ4 frames, then decompressed by pyarrow) cost 10-20% of the analyzer's
reads (docs/benchmarks-log.md, 2026-12-04 ``anaspeed7``). A server's results keep its default."""

_PLAIN_MIN = 1024
ESCAPED_CHARS = ("\\", "'", "`", "\t", "\n")
"""What the driver escapes in a bound string (``clickhouse_connect.driver.binding.must_escape``;
its ``escape_str`` takes one generator step per character: ~0.3 CPU s of a full analyzer pass
over 1M spans went to its comma-joined trace id lists)."""
_ESCAPED = re.compile("|".join(map(re.escape, ESCAPED_CHARS)))


@dataclass(frozen=True)
class _Unescaped:
    """A long string parameter in which the driver would escape nothing: bound as it is (the
    driver binds a value of a type it does not know by ``str``), without the per-character walk.

    >>> str(_Unescaped("5b8e,0af7"))
    '5b8e,0af7'
    """

    text: str

    def __str__(self) -> str:
        return self.text


def open_store(dsn: str, *, database: str | None = None) -> Store:
    """Open the store at ``dsn`` and connect (embedded: the data dir is created if missing).

    ``dsn`` is ``chdb:///abs/path`` (in-process chDB) or ``http(s)://user:pass@host:port/db``
    (a ClickHouse server). ``database`` overrides the DSN's database (chDB: default ``default``).

    >>> store = open_store("chdb:///var/lib/planscope")  # doctest: +SKIP
    >>> store = open_store("http://default:secret@clickhouse:8123/planscope")  # doctest: +SKIP
    """
    store = Store(_parse_dsn(dsn, database))
    with store._lock:
        store._connect()
    return store
