"""The collector's public contract for extensions: components that add routes and react to data.

Everything an extension may use is here: the :class:`Extension` protocol, the ``project_of``
dependency (project resolution), :class:`Leases` (one replica works on a unit at a time) and
:func:`ingest_backlogged` (the backlog signal). Nothing else of the collector is public to them.

The analyzer (findings, alerts) is such a component. It lives in its own package; the collector
loads every module named in ``EXTENSION_MODULES`` that is installed, calls its
``extension(collector)`` factory, and then:

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

import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from fastapi import Header, Request

from ._lease import Lease, Leases

if TYPE_CHECKING:
    from fastapi import APIRouter

    from ._app import Collector

__all__ = [
    "Extension",
    "Lease",
    "Leases",
    "ingest_backlogged",
    "load_extensions",
    "project_of",
]

log = logging.getLogger("planscope.collector")

EXTENSION_MODULES: tuple[str, ...] = (
    "planscope_analyzer.service",
    "planscope_analyzer.alerts.service",
)


class Extension(Protocol):
    """What a collector extension provides."""

    router: APIRouter | None

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def on_flush(self, trace_ids: set[tuple[str, str]]) -> None: ...


def load_extensions(collector: Collector) -> list[Extension]:
    """Instantiate every installed extension; one that fails to load is logged and skipped."""
    loaded: list[Extension] = []
    for name in EXTENSION_MODULES:
        try:
            factory: Callable[[Any], Extension] = importlib.import_module(name).extension
        except ImportError as exc:
            if exc.name and name.startswith(exc.name):
                continue  # not part of this installation
            log.warning("collector extension %s is unavailable: %s", name, exc)
            continue
        except AttributeError:
            log.warning("collector extension %s has no extension() factory", name)
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


def ingest_backlogged(collector: Collector) -> bool:
    """True while the writer has more than a spool segment left to store: ingest goes first.

    Extensions that share the store with the writer (the analyzer) defer their work meanwhile.

    >>> # if not ingest_backlogged(collector): analyse_pending()
    """
    spool = collector.spool
    return spool is not None and spool.pending_bytes > collector.settings.segment_max_bytes
