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
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
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
    sql: str, cluster: str | None = None, *, database: str = "default", ttl_days: int = 30
) -> str:
    """Render a migration template for one node (``cluster=None``) or a ClickHouse cluster.

    >>> render("CREATE TABLE {db}.t {on_cluster} (x UInt8) ENGINE = {engine:MergeTree}", "c")
    'CREATE TABLE `default`.t ON CLUSTER `c` (x UInt8) ENGINE = ReplicatedMergeTree'
    """
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


__all__ = ["Migration", "load_migrations", "quote_identifier", "render", "split_statements"]
