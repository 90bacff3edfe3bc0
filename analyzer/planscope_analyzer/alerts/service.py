"""The collector extension: alert routes under ``/api/alerts`` plus the evaluation and delivery
threads, loaded by the collector from its ``planscope.collector_extensions`` entry point.

>>> from planscope_collector import BackgroundServer, CollectorSettings  # doctest: +SKIP
>>> with BackgroundServer(CollectorSettings(port=0)) as s:  # doctest: +SKIP
...     httpx.get(s.url + "/api/alerts/rules").json()
{'rules': []}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from planscope import safejson
from planscope_collector import settings_problems
from planscope_collector.extensions import admin_project_of, api_error, project_of
from pydantic import ValidationError

from ._engine import AlertEngine
from ._errors import AlertError, DeliveryError, RuleValidationError
from ._repo import StoredRule
from ._rules import keep_secrets, parse_rule, redacted, with_id
from ._settings import AlertSettings
from ._targets import AllowList, check_target

if TYPE_CHECKING:
    from planscope_collector import Collector

__all__ = ["AlertsExtension", "extension"]

MAX_RULE_BYTES = 64 * 1024
Project = Annotated[str, Depends(project_of)]
AdminProject = Annotated[str, Depends(admin_project_of)]
MAX_SINCE_SECONDS = 9.2e9  # year 2262: DateTime64(9)'s end


def _error(status: int, reason: str, problems: list[str] | None = None) -> JSONResponse:
    # A rule's problems read "field: what is wrong"; the first names the field at fault.
    first = (problems or [""])[0]
    field = first.split(":", 1)[0] if ":" in first and " " not in first.split(":", 1)[0] else None
    return api_error(status, reason, field=field, problems=problems)


async def _rule_body(request: Request) -> Any:
    raw = await request.body()
    if len(raw) > MAX_RULE_BYTES:
        raise RuleValidationError(f"rule body exceeds {MAX_RULE_BYTES} bytes")
    try:
        data = safejson.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError) as exc:  # bad JSON, or nested too deep
        raise RuleValidationError(f"the body is not JSON: {exc}") from None
    return parse_rule(data)


def _check_targets(rule: Any, allow: AllowList) -> None:
    """Refuse (422) a rule whose webhook resolves to a non-public address the operator did not
    allow; the same check runs again at every delivery."""
    problems = []
    for i, channel in enumerate(rule.notify):
        url = getattr(channel, "url", None)
        if url is None:
            continue
        try:
            check_target(url, allow)
        except DeliveryError as exc:
            problems.append(f"notify.{i}.url: {exc}")
    if problems:
        raise RuleValidationError("invalid rule: " + "; ".join(problems), problems)


def _rule_json(stored: StoredRule, engine: AlertEngine) -> dict[str, Any]:
    st = engine.state_of(stored.project, stored.rule.id)
    return {
        **redacted(stored.rule),
        "version": stored.version,
        "source": stored.source,
        "updated_at": stored.updated_at,
        "state": st.state,
    }


class AlertsExtension:
    """Routes, lifecycle and the ``on_flush`` hook of the alerting component."""

    def __init__(self, collector: Collector, settings: AlertSettings | None = None) -> None:
        self.collector = collector
        self.settings = (settings or AlertSettings()).with_data_dir(collector.settings.data_dir)
        self.engine = AlertEngine(lambda: collector.store, self.settings)
        self.router: APIRouter | None = self._routes()

    def start(self) -> None:
        if self.settings.enabled:
            self.engine.start()

    def stop(self) -> None:
        if self.settings.enabled:
            self.engine.stop()

    def on_flush(self, trace_ids: set[tuple[str, str]]) -> None:
        self.engine.mark_dirty({project for project, _ in trace_ids})

    def on_analyzed(self, projects: set[str]) -> None:
        """New findings may exist: evaluate finding-count rules now, not on the next tick."""
        self.engine.mark_dirty(projects)

    def _routes(self) -> APIRouter:
        router = APIRouter(prefix="/api/alerts", tags=["alerts"])
        engine = self.engine
        repo = engine.rules

        async def run(fn: Any, *args: Any) -> Any:
            return await anyio.to_thread.run_sync(fn, *args)

        @router.get("/rules")
        async def list_rules(project: Project) -> dict[str, Any]:
            rules = await run(repo.current, project)
            return {"rules": [_rule_json(r, engine) for r in rules]}

        @router.post("/rules", status_code=201, response_model=None)
        async def create_rule(request: Request, project: AdminProject) -> Any:
            try:
                rule = with_id(await _rule_body(request))
                await run(_check_targets, rule, self.settings.allow_targets)
            except RuleValidationError as exc:
                return _error(422, str(exc), exc.problems)

            cap = self.collector.settings.max_alert_rules

            def write() -> StoredRule | str:
                with repo.lock:
                    if repo.get(project, rule.id) is not None:
                        return f"rule {rule.id!r} exists; PUT /api/alerts/rules/{rule.id}"
                    if len(repo.current(project)) >= cap:
                        return (
                            f"project {project!r} has {cap} rules, the most allowed "
                            "(max_alert_rules); delete one first"
                        )
                    return repo.put(project, rule, source=_source(request))

            stored = await run(write)
            if isinstance(stored, str):
                return _error(409, stored)
            engine.rules_changed()
            return JSONResponse(_rule_json(stored, engine), status_code=201)

        @router.get("/rules/{rule_id}", response_model=None)
        async def get_rule(rule_id: str, project: Project) -> Any:
            stored = await run(repo.get, project, rule_id)
            if stored is None:
                return _error(404, f"no rule {rule_id!r} in project {project!r}")
            return _rule_json(stored, engine)

        @router.get("/rules/{rule_id}/history", response_model=None)
        async def rule_history(rule_id: str, project: Project) -> Any:
            versions = await run(repo.history, project, rule_id)
            if not versions:
                return _error(404, f"no rule {rule_id!r} in project {project!r}")
            return {
                "versions": [
                    {
                        **redacted(v.rule),
                        "version": v.version,
                        "source": v.source,
                        "deleted": v.deleted,
                        "updated_at": v.updated_at,
                    }
                    for v in versions
                ]
            }

        @router.put("/rules/{rule_id}", response_model=None)
        async def replace_rule(rule_id: str, request: Request, project: AdminProject) -> Any:
            try:
                rule = await _rule_body(request)
                if rule.id not in (None, rule_id):
                    raise RuleValidationError(
                        f"id: the body says {rule.id!r} but the URL says {rule_id!r}"
                    )
                rule = rule.model_copy(update={"id": rule_id})
            except RuleValidationError as exc:
                return _error(422, str(exc), exc.problems)

            def write() -> StoredRule | str:
                current = repo.get(project, rule_id)
                if current is None:
                    return "missing"
                try:
                    new = keep_secrets(rule, current.rule)
                    _check_targets(new, self.settings.allow_targets)
                except RuleValidationError as exc:
                    return str(exc)
                if new == current.rule:  # an unchanged rule keeps its version and history
                    return current
                return repo.put(project, new, source=_source(request))

            result = await run(write)
            if result == "missing":
                return _error(404, f"no rule {rule_id!r} in project {project!r}; POST to create")
            if isinstance(result, str):
                return _error(422, result, [result])
            engine.rules_changed()
            return _rule_json(result, engine)

        @router.delete("/rules/{rule_id}", response_model=None)
        async def delete_rule(rule_id: str, request: Request, project: AdminProject) -> Any:
            def write() -> StoredRule | None:
                current = repo.get(project, rule_id)
                if current is None:
                    return None
                return repo.put(project, current.rule, source=_source(request), deleted=True)

            stored = await run(write)
            if stored is None:
                return _error(404, f"no rule {rule_id!r} in project {project!r}")
            engine.rules_changed()
            return {"deleted": rule_id, "version": stored.version}

        @router.post("/rules/{rule_id}/test", response_model=None)
        async def test_rule(rule_id: str, project: Project) -> Any:
            stored = await run(repo.get, project, rule_id)
            if stored is None:
                return _error(404, f"no rule {rule_id!r} in project {project!r}")
            result = await run(engine.dry_run, project, stored.rule)
            return {"rule_id": rule_id, "version": stored.version, **result}

        @router.post("/test", response_model=None)
        async def test_unsaved(request: Request, project: Project) -> Any:
            try:
                rule = await _rule_body(request)
            except RuleValidationError as exc:
                return _error(422, str(exc), exc.problems)
            result = await run(engine.dry_run, project, rule)
            return {"rule_id": rule.id, "version": None, **result}

        @router.get("/events")
        async def list_events(
            project: Project,
            rule_id: str | None = None,
            state: Annotated[str | None, Query(pattern="^(firing|resolved)$")] = None,
            since: Annotated[
                float, Query(ge=0, le=MAX_SINCE_SECONDS, description="unix seconds")
            ] = 0.0,
            limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        ) -> dict[str, Any]:
            events = await run(
                lambda: engine.events.history(
                    project, rule_id=rule_id, state=state, since=since, limit=limit
                )
            )
            return {"events": [e.to_json() for e in events]}

        @router.get("/state")
        async def alert_state(project: Project) -> dict[str, Any]:
            pending = [e for e in engine.dispatcher.pending() if e.project == project]
            state: dict[str, Any] = {
                "rules": engine.states(project),
                "engine": {
                    "enabled": self.settings.enabled,
                    "ready": engine.wait_ready(0),
                    "interval": self.settings.interval,
                    "pending_deliveries": len(pending),
                },
            }
            if not self.collector.auth.enabled:
                # Open mode (one operator): the rules file and the engine's own counters and
                # errors, which span every project. With keys a tenant sees its project only.
                state["file"] = engine.file_status
                state["engine"].update(engine.stats)
            return state

        return router


def _source(request: Request) -> str:
    agent = request.headers.get("user-agent", "")
    return "cli" if agent.startswith("planscope-cli") else "api"


def extension(collector: Collector) -> AlertsExtension:
    """The factory the collector calls (``planscope.collector_extensions`` entry point); the
    settings are read from the environment now, when the collector starts."""
    try:
        settings = AlertSettings()
    except ValidationError as exc:
        raise AlertError(f"invalid alert settings: {settings_problems(exc)}") from None
    return AlertsExtension(collector, settings)
