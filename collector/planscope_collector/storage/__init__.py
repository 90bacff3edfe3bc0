"""ClickHouse storage for planscope: schema migrations and the Store the collector writes through.

One code path serves embedded chDB (``chdb:///abs/path``) and a ClickHouse server
(``http(s)://user:pass@host:port/db``), both through ``clickhouse_connect.get_client(dsn=...)``.
The schema and its decisions are described in docs/storage.md.

>>> from planscope_collector.storage import open_store, TRACE_COLUMNS
>>> store = open_store("chdb:///var/lib/planscope")  # doctest: +SKIP
>>> store.migrate()  # doctest: +SKIP
['0001_otel_traces', '0002_planscope_views', ...]

Exceptions::

    planscope.PlanscopeError
     └── StoreError                  any storage failure; the message says what and why
          ├── StoreUnavailable       transient (connection refused, timeout, overload, disk
          │                          full): the writer retries these with back-off
          ├── StoreRejected          permanent for this data (an insert the store refuses):
          │                          the writer quarantines the request that causes it
          ├── MigrationError         a migration failed, or an applied file's checksum changed
          └── InvalidDsn (+ValueError)  the DSN is not chdb:///abs/path or http(s)://host:port/db
"""

from __future__ import annotations

from planscope_collector.storage._errors import (
    InvalidDsn,
    MigrationError,
    StoreError,
    StoreRejected,
    StoreUnavailable,
)
from planscope_collector.storage._migrations import (
    Migration,
    load_migrations,
    render,
    split_statements,
)
from planscope_collector.storage._schema import (
    EXPORTER_TRACE_COLUMNS,
    INGEST_BATCH_COLUMNS,
    SPAN_STATUS_CODE_SQL,
    SPAN_STATUS_MESSAGE_SQL,
    TABLES,
    TRACE_COLUMNS,
    span_kind_sql,
    status_code_sql,
)
from planscope_collector.storage._store import Store, ipc_stream, open_store

__all__ = [
    "EXPORTER_TRACE_COLUMNS",
    "INGEST_BATCH_COLUMNS",
    "SPAN_STATUS_CODE_SQL",
    "SPAN_STATUS_MESSAGE_SQL",
    "TABLES",
    "TRACE_COLUMNS",
    "InvalidDsn",
    "Migration",
    "MigrationError",
    "Store",
    "StoreError",
    "StoreRejected",
    "StoreUnavailable",
    "ipc_stream",
    "load_migrations",
    "open_store",
    "render",
    "span_kind_sql",
    "split_statements",
    "status_code_sql",
]
