"""The collector's public contract for extensions: components that add routes and react to data.

Everything an extension may use is here: the :class:`Extension` protocol, the ``project_of``
and ``admin_project_of`` dependencies (project resolution; the second for configuration
changes, which need a key with the ``admin`` scope), :class:`Leases` (one replica works on a
unit at a time) and :func:`ingest_backlogged` (the backlog signal). Nothing else of the
collector is public to them.

The analyzer (findings, alerts) is such a component. It lives in its own package and registers
its factory as a ``planscope.collector_extensions`` entry point; the collector calls every
installed ``factory(collector)`` and then:

- mounts ``router`` (a FastAPI ``APIRouter``) on the app; routes read the caller's project with
  the ``project_of`` dependency, so one project never reads another's data;
- calls ``start()`` after the store is reachable and ``stop()`` at shutdown;
- calls ``on_flush({(project, trace_id), ...})`` from the writer thread after each batch is
  stored; it must return quickly (hand work to its own thread);
- calls ``on_analyzed({project, ...})``, when the extension has it, after an analysis pass
  (``Collector.analysis_done``): alert rules on findings are evaluated right away;
- calls ``enrich_trace(project, trace_id, detail)``, when the extension has it, before
  ``GET /api/traces/{id}`` answers: the analyzer adds the trace's ``findings``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from fastapi import Header, Request
from fastapi.responses import JSONResponse

from ._lease import Lease, Leases

if TYPE_CHECKING:
    from fastapi import APIRouter

    from ._app import Collector

__all__ = [
    "Extension",
    "Lease",
    "Leases",
    "admin_project_of",
    "api_error",
    "ingest_backlogged",
    "load_extensions",
    "project_of",
]

log = logging.getLogger("planscope.collector")

ENTRY_POINT_GROUP = "planscope.collector_extensions"
"""Entry-point group of extensions: ``<name> = "module:factory"``, ``factory(collector)``."""


class Extension(Protocol):
    """What a collector extension provides."""

    router: APIRouter | None

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def on_flush(self, trace_ids: set[tuple[str, str]]) -> None: ...


def api_error(
    status: int,
    reason: str,
    *,
    field: str | None = None,
    problems: list[str] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """The one shape of every error the API answers: ``{"error": reason}``, plus the ``field``
    at fault and every ``problems`` found where that helps. The collector's own routes, its
    request validation and every extension's routes answer through it.

    >>> api_error(400, "limit: must be at least 1", field="limit").body
    b'{"error":"limit: must be at least 1","field":"limit"}'
    """
    body: dict[str, Any] = {"error": reason}
    if field is not None:
        body["field"] = field
    if problems is not None:
        body["problems"] = problems
    return JSONResponse(body, status_code=status, headers=headers)


def load_extensions(collector: Collector) -> list[Extension]:
    """Instantiate every installed extension; one that fails to load is logged and skipped."""
    loaded: list[Extension] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            factory: Callable[[Any], Extension] = ep.load()
        except (ImportError, AttributeError) as exc:  # an extra is missing, or a broken plug-in
            log.warning("collector extension %s (%s) is unavailable: %s", ep.name, ep.value, exc)
            continue
        loaded.append(factory(collector))
    return loaded


def project_of(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    project: str | None = None,
) -> str:
    """FastAPI dependency: the project a query may read.

    With API keys, the key's project (a ``?project=`` asking for another is ignored); in open
    mode, ``?project=`` or ``default``.
    """
    key_project = request.app.state.collector.auth.project_for(authorization)
    return str(key_project or project or "default")


def admin_project_of(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    project: str | None = None,
) -> str:
    """FastAPI dependency for routes that change configuration (alert rules, webhooks).

    Like :func:`project_of`, but with API keys the key needs the ``admin`` scope (403
    otherwise): the ingest key agents carry cannot point webhooks anywhere.
    """
    key_project = request.app.state.collector.auth.project_for(authorization, "admin")
    return str(key_project or project or "default")


def ingest_backlogged(collector: Collector) -> bool:
    """True while the writer has more than a spool segment left to store: ingest goes first.

    Extensions that share the store with the writer (the analyzer) defer their work meanwhile.

    >>> # if not ingest_backlogged(collector): analyse_pending()
    """
    spool = collector.spool
    return spool is not None and spool.pending_bytes > collector.settings.segment_max_bytes
