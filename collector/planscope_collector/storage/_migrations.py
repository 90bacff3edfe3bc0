"""Migration files: loading, a quote-aware statement splitter and the safe template renderer.

The ``.sql`` files under ``planscope_collector/migrations`` are templates with exactly four kinds of
placeholder, all of which render to identifiers, keywords or an integer - never to a value:

- ``{db}``: the database, a validated identifier, backtick-quoted (`` `default` ``);
- ``{on_cluster}``: empty, or ``ON CLUSTER `c``` when rendered for cluster ``c``;
- ``{ttl_days}``: the retention, a validated integer (1..36500);
- ``{engine:K(args)}``: ``K(args)``, or ``ReplicatedK(args)`` (server default replica path) for a
  cluster; K is one of the MergeTree family.

Placeholders are substituted only outside string literals, quoted identifiers and comments, and an
unknown ``{...}`` is an error, so a query parameter (``{name:Type}``) can never slip into DDL.

A sharded cluster needs one more layer than ``ON CLUSTER`` + Replicated engines, and it is derived
from the same files by ``render(sql, cluster, distributed=True)`` (see :func:`distribute`): every
MergeTree-family table ``T`` becomes the shard-local ``T_local`` plus a ``Distributed`` table ``T``
over it (sharded by ``cityHash64(TraceId)``, so one trace stays on one shard), and materialized
views read and write the ``_local`` tables of their own shard. Only identifiers change; no value is
ever templated.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from planscope_collector.storage._errors import MigrationError

_FILE_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([^{}]*))?\}")
_ENGINE_RE = re.compile(
    r"^(MergeTree|ReplacingMergeTree|AggregatingMergeTree|SummingMergeTree)"
    r"(\([A-Za-z0-9_, ]*\))?$"
)
MAX_TTL_DAYS = 36500


@dataclass(frozen=True)
class Migration:
    """One numbered migration file.

    Attributes:
        name: the file name without ``.sql``, e.g. ``"0001_otel_traces"``; recorded in
            ``schema_migrations``.
        sql: the template source text.
        checksum: sha256 (hex) of the source text; an applied file whose checksum changed is
            refused.
    """

    name: str
    sql: str
    checksum: str

    @classmethod
    def from_text(cls, name: str, sql: str) -> Migration:
        """Build a migration from its name and template text.

        >>> Migration.from_text("0009_x", "SELECT 1").checksum[:8]
        'e004ebd5'
        """
        return cls(name=name, sql=sql, checksum=hashlib.sha256(sql.encode()).hexdigest())


def load_migrations(directory: Path | None = None) -> list[Migration]:
    """Load ``NNNN_name.sql`` files in order (the packaged ones unless ``directory`` is given).

    >>> [m.name for m in load_migrations()][:1]
    ['0001_otel_traces']
    """
    if directory is None:
        root = resources.files("planscope_collector") / "migrations"
        entries = [(e.name, e.read_text(encoding="utf-8")) for e in root.iterdir() if e.is_file()]
    else:
        entries = [(p.name, p.read_text(encoding="utf-8")) for p in Path(directory).iterdir()]
    found: dict[str, Migration] = {}
    numbers: dict[str, str] = {}
    for file_name, text in sorted(entries):
        if not file_name.endswith(".sql"):
            continue
        match = _FILE_RE.match(file_name)
        if match is None:
            raise MigrationError(f"migration file {file_name!r} is not named NNNN_lower_snake.sql")
        number = match.group(1)
        if number in numbers:
            raise MigrationError(f"migrations {numbers[number]!r} and {file_name!r} share {number}")
        numbers[number] = file_name
        name = file_name[: -len(".sql")]
        found[name] = Migration.from_text(name, text)
    return [found[k] for k in sorted(found)]


def _segments(sql: str) -> Iterator[tuple[str, str]]:
    """Yield ``(kind, text)``; kind is ``code``, ``quoted`` (string/identifier) or ``comment``."""
    i = start = 0
    n = len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"`":
            j = i + 1
            while j < n:
                if sql[j] == "\\":
                    j += 2
                    continue
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:  # doubled quote escapes itself
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                raise MigrationError(f"unterminated {ch} quote starting at offset {i}")
            yield "code", sql[start:i]
            yield "quoted", sql[i : j + 1]
            i = start = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j == -1 else j
            yield "code", sql[start:i]
            yield "comment", sql[i:j]
            i = start = j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            if j == -1:
                raise MigrationError(f"unterminated /* comment starting at offset {i}")
            yield "code", sql[start:i]
            yield "comment", sql[i : j + 2]
            i = start = j + 2
        else:
            i += 1
    yield "code", sql[start:]


def split_statements(sql: str) -> list[str]:
    """Split SQL text on ``;`` outside quotes and comments; comments are dropped.

    >>> split_statements("SELECT ';' -- a;b\\n; SELECT 2;")
    ["SELECT ';'", 'SELECT 2']
    """
    statements: list[str] = []
    current: list[str] = []
    for kind, text in _segments(sql):
        if kind == "comment":
            current.append(" ")
            continue
        if kind == "quoted":
            current.append(text)
            continue
        parts = text.split(";")
        for k, part in enumerate(parts):
            if k > 0:
                statements.append("".join(current).strip())
                current = []
            current.append(part)
    statements.append("".join(current).strip())
    return [s for s in statements if s]


def quote_identifier(name: str) -> str:
    """Backtick-quote a plain identifier after validating it (letters, digits, underscore).

    >>> quote_identifier("planscope")
    '`planscope`'
    """
    if not _IDENT_RE.match(name):
        raise MigrationError(f"{name!r} is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return f"`{name}`"


def render(
    sql: str,
    cluster: str | None = None,
    *,
    database: str = "default",
    ttl_days: int = 30,
    distributed: bool = False,
) -> str:
    """Render a migration template for one node (``cluster=None``) or a ClickHouse cluster.

    ``distributed=True`` (needs ``cluster``) adds the sharding layer: see :func:`distribute`.
    The result is then one statement per ``;``-terminated paragraph, comments dropped.

    >>> render("CREATE TABLE {db}.t {on_cluster} (x UInt8) ENGINE = {engine:MergeTree}", "c")
    'CREATE TABLE `default`.t ON CLUSTER `c` (x UInt8) ENGINE = ReplicatedMergeTree'
    """
    if distributed and cluster is None:
        raise MigrationError("distributed=True needs a cluster name")
    rendered = _render(sql, cluster, database, ttl_days)
    if not distributed or cluster is None:
        return rendered
    statements = distribute(split_statements(rendered), cluster, database=database)
    return "".join(f"{statement};\n\n" for statement in statements)


def _render(sql: str, cluster: str | None, database: str, ttl_days: int) -> str:
    if isinstance(ttl_days, bool) or not isinstance(ttl_days, int):
        raise MigrationError(f"ttl_days must be an int, not {type(ttl_days).__name__}")
    if not 1 <= ttl_days <= MAX_TTL_DAYS:
        raise MigrationError(f"ttl_days must be within 1..{MAX_TTL_DAYS}, got {ttl_days}")
    db = quote_identifier(database)
    on_cluster = "" if cluster is None else f"ON CLUSTER {quote_identifier(cluster)}"

    def substitute(match: re.Match[str]) -> str:
        key, arg = match.group(1), match.group(2)
        if key == "db" and arg is None:
            return db
        if key == "on_cluster" and arg is None:
            return on_cluster
        if key == "ttl_days" and arg is None:
            return str(ttl_days)
        if key == "engine" and arg is not None:
            engine = arg.strip()
            if not _ENGINE_RE.match(engine):
                raise MigrationError(f"unsupported engine in template: {engine!r}")
            return engine if cluster is None else f"Replicated{engine}"
        raise MigrationError(f"unknown template placeholder {match.group(0)!r}")

    out: list[str] = []
    for kind, text in _segments(sql):
        out.append(_PLACEHOLDER_RE.sub(substitute, text) if kind == "code" else text)
    return "".join(out)


#: Suffix of the shard-local table under a Distributed table of the same name.
LOCAL_SUFFIX = "_local"
#: Sharding key of every table that has a ``TraceId`` column: one trace, one shard.
TRACE_SHARDING_KEY = "cityHash64(TraceId)"
#: Tables whose rows must meet on one shard by something other than TraceId or the sorting key.
#: The lease table: every claim of one key must reach the same shard, or the claim's dedup token
#: (which is per shard) could not stop a second claim of the same generation.
SHARDING_KEYS: dict[str, str] = {"planscope_analysis_leases": "cityHash64(Project, LeaseKey)"}

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_CREATE_TABLE_RE = re.compile(
    rf"^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(`{_NAME}`)\.({_NAME})\b", re.IGNORECASE
)
_CREATE_MV_RE = re.compile(
    rf"^CREATE\s+MATERIALIZED\s+VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?(`{_NAME}`)\.({_NAME})\b",
    re.IGNORECASE,
)
_ALTER_TABLE_RE = re.compile(rf"^ALTER\s+TABLE\s+(`{_NAME}`)\.({_NAME})\b", re.IGNORECASE)
_DROP_TABLE_RE = re.compile(
    rf"^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(`{_NAME}`)\.({_NAME})\b", re.IGNORECASE
)
_REPLICATED_ENGINE_RE = re.compile(r"\bENGINE\s*=\s*Replicated\w*MergeTree\b")
_NULL_ENGINE_RE = re.compile(r"\bENGINE\s*=\s*Null\b")
_TRACE_ID_COLUMN_RE = re.compile(r"[(,]\s*`?TraceId`?\s+\w")
_COLUMN_ALTER_RE = re.compile(
    r"\b(?:ADD|DROP|MODIFY|RENAME|COMMENT|CLEAR)\s+COLUMN\b", re.IGNORECASE
)
_MODIFY_QUERY_RE = re.compile(r"\bMODIFY\s+QUERY\b", re.IGNORECASE)


def _chunks(statement: str) -> Iterator[tuple[bool, str]]:
    """``(is_code, text)``: code and backtick identifiers together; string literals and comments
    apart, so identifier rewrites never touch a value."""
    run: list[str] = []
    for kind, text in _segments(statement):
        if kind == "code" or (kind == "quoted" and text.startswith("`")):
            run.append(text)
            continue
        if run:
            yield True, "".join(run)
            run = []
        yield False, text
    if run:
        yield True, "".join(run)


def _map_code(
    statement: str, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]
) -> str:
    """``pattern.sub(repl, ...)`` over the code of ``statement``, never inside literals/comments."""
    return "".join(pattern.sub(repl, text) if code else text for code, text in _chunks(statement))


def _code_only(statement: str) -> str:
    return "".join(text if code else " " for code, text in _chunks(statement))


def _order_by(statement: str) -> str:
    """The ORDER BY expression of a CREATE TABLE statement (without outer parentheses)."""
    code = _code_only(statement)
    match = re.search(r"\bORDER\s+BY\s+", code)
    if match is None:
        raise MigrationError(f"no ORDER BY in table statement: {statement[:80]}")
    rest = code[match.end() :]
    if rest.startswith("("):
        depth = 0
        for index, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return rest[1:index].strip()
        raise MigrationError(f"unbalanced ORDER BY in: {statement[:80]}")
    return rest.split()[0]


def sharding_key(statement: str) -> str:
    """The Distributed sharding key for one rendered CREATE TABLE statement.

    :data:`SHARDING_KEYS` if it names the table; else ``cityHash64(TraceId)`` when the table has
    a ``TraceId`` column (one trace, one shard: per-trace
    analysis and views never cross shards); otherwise ``cityHash64(<sorting key>)``, so the rows
    that a Replacing/Aggregating engine must merge (same sorting key) meet on one shard.

    >>> sharding_key("CREATE TABLE `d`.t (TraceId String, x Int8) ENGINE = M ORDER BY (x)")
    'cityHash64(TraceId)'
    >>> sharding_key("CREATE TABLE `d`.t (k String, v UInt8) ENGINE = M ORDER BY (k, v)")
    'cityHash64(k, v)'
    """
    table = _CREATE_TABLE_RE.match(statement)
    if table is not None and table.group(2) in SHARDING_KEYS:
        return SHARDING_KEYS[table.group(2)]
    code = _code_only(statement)
    columns = code.split("ENGINE", 1)[0]
    if _TRACE_ID_COLUMN_RE.search(columns):
        return TRACE_SHARDING_KEY
    return f"cityHash64({_order_by(statement)})"


def distribute(statements: list[str], cluster: str, *, database: str = "default") -> list[str]:
    """Add the Distributed layer to statements already rendered for ``cluster``.

    * ``CREATE TABLE db.T ... ENGINE = Replicated*MergeTree`` becomes ``db.T_local`` (same
      statement otherwise), followed by ``CREATE TABLE db.T ON CLUSTER c AS db.T_local ENGINE =
      Distributed(c, db, T_local, <sharding_key>)``: clients keep reading and writing ``T``.
    * ``CREATE MATERIALIZED VIEW db.V ... TO db.X AS SELECT ... FROM db.Y``: every table it names
      becomes ``_local``. A view fires on the shard-local insert that the Distributed table
      forwards, and writes that shard's local target: rows derived from a trace stay on its shard.
      Consequently a view can only read shard-local data (no JOIN with a table of other shards).
    * ``ALTER TABLE db.T``: applied to ``T_local``, and also to ``T`` for column changes (a
      Distributed table has columns, not data); ``ALTER TABLE db.V MODIFY QUERY`` rewrites the view
      like a CREATE.
    * ``CREATE TABLE db.T ... ENGINE = Null`` (a pipe between views, storing nothing) becomes
      ``db.T_local`` only: views on each shard pass rows through their own shard's pipe.
    * ``DROP TABLE [IF EXISTS] db.T`` drops ``db.T_local`` too (a Null pipe exists only as
      ``T_local``; write ``IF EXISTS`` for such a table).
    * Everything else (databases, plain views, other engines) is unchanged.

    >>> out = distribute(
    ...     ["CREATE TABLE `d`.t ON CLUSTER `c` (TraceId String) ENGINE = ReplicatedMergeTree"
    ...      " ORDER BY TraceId"], "c", database="d")
    >>> out[0][:35], out[1]
    ('CREATE TABLE `d`.t_local ON CLUSTER', 'CREATE TABLE IF NOT EXISTS `d`.t ON CLUSTER `c` AS `d`.t_local ENGINE = Distributed(`c`, `d`, `t_local`, cityHash64(TraceId))')
    """  # noqa: E501
    db = quote_identifier(database)
    on_cluster = quote_identifier(cluster)
    ref_re = re.compile(re.escape(db) + rf"\.({_NAME})\b")

    def local(name: str) -> str:
        return quote_identifier(name + LOCAL_SUFFIX)[1:-1]

    out: list[str] = []
    for statement in statements:
        table = _CREATE_TABLE_RE.match(statement)
        if table and table.group(1) == db and _REPLICATED_ENGINE_RE.search(_code_only(statement)):
            name = table.group(2)
            start, end = table.span(2)
            out.append(statement[:start] + local(name) + statement[end:])
            out.append(
                f"CREATE TABLE IF NOT EXISTS {db}.{name} ON CLUSTER {on_cluster} "
                f"AS {db}.{local(name)} ENGINE = Distributed({on_cluster}, {db}, "
                f"`{local(name)}`, {sharding_key(statement)})"
            )
            continue
        if table and table.group(1) == db and _NULL_ENGINE_RE.search(_code_only(statement)):
            start, end = table.span(2)
            out.append(statement[:start] + local(table.group(2)) + statement[end:])
            continue
        drop = _DROP_TABLE_RE.match(statement)
        if drop and drop.group(1) == db:
            start, end = drop.span(2)
            out.append(statement)
            out.append(statement[:start] + local(drop.group(2)) + statement[end:])
            continue
        view = _CREATE_MV_RE.match(statement)
        alter = _ALTER_TABLE_RE.match(statement)
        if view or (alter and _MODIFY_QUERY_RE.search(_code_only(statement))):
            head = view or alter
            assert head is not None
            cut = head.end()
            out.append(
                statement[:cut]
                + _map_code(statement[cut:], ref_re, lambda m: f"{db}.{local(m.group(1))}")
            )
            continue
        if alter and alter.group(1) == db:
            name = alter.group(2)
            start, end = alter.span(2)
            out.append(statement[:start] + local(name) + statement[end:])
            if _COLUMN_ALTER_RE.search(_code_only(statement)):
                out.append(statement)
            continue
        out.append(statement)
    return out


__all__ = [
    "LOCAL_SUFFIX",
    "SHARDING_KEYS",
    "TRACE_SHARDING_KEY",
    "Migration",
    "distribute",
    "load_migrations",
    "quote_identifier",
    "render",
    "sharding_key",
    "split_statements",
]
