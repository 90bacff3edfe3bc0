"""The one client of the collector's HTTP API (query, analysis, alerts, OTLP upload).

The dashboard, the ``planscope analyze`` / ``alerts`` / ``import`` / ``attribute`` commands and
any other front end read the collector through :class:`CollectorClient`; answers are parsed by
the response models of :mod:`planscope.api`. Every failure is a :class:`ClientError` whose
``str()`` is a message fit for a user. Needs ``httpx`` and ``pydantic``
(``pip install 'planscope[dashboard]'``).

Hierarchy::

    PlanscopeError
    └── ClientError               root of the client's errors
        ├── CollectorUnreachable  connection refused, DNS, timeout
        ├── CollectorAuthError    401/403: missing or wrong API key
        ├── NotFound              404 for a trace or rule that does not exist
        ├── Unavailable           the collector does not serve this API (an extension not
        │                         running there, e.g. ``serve --role ingest``)
        ├── Rejected              400/409/413/422: the request was refused, with its problems
        └── CollectorResponseError any other answer, or a body that is not the expected shape

>>> from planscope.client import ClientSettings, CollectorClient
>>> with CollectorClient(ClientSettings(base_url="http://127.0.0.1:9/")) as client:
...     client.base_url
'http://127.0.0.1:9'
"""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import quote

try:
    import httpx
    from pydantic import BaseModel, Field, ValidationError
    from pydantic_settings import BaseSettings, SettingsConfigDict
except ImportError as exc:  # the agent's install has only opentelemetry-api
    raise ImportError(
        "planscope.client needs httpx and pydantic-settings: pip install 'planscope[dashboard]'"
    ) from exc

from . import api
from . import environment_variables as ENV
from ._errors import PlanscopeError

__all__ = [
    "DEFAULT_COLLECTOR_URL",
    "ClientError",
    "ClientSettings",
    "CollectorAuthError",
    "CollectorClient",
    "CollectorResponseError",
    "CollectorUnreachable",
    "NotFound",
    "Rejected",
    "Unavailable",
]

DEFAULT_COLLECTOR_URL = "http://127.0.0.1:4318"
MAX_PAGE = 1000
"""The collector's largest ``limit`` for ``/api/traces`` and ``/api/findings``."""
MAX_SEARCH = 256
"""The collector's longest ``q`` for ``/api/traces``."""

M = TypeVar("M", bound=BaseModel)


class ClientError(PlanscopeError):
    """Root of the client's errors; ``str()`` is a message for the user."""


class CollectorUnreachable(ClientError):
    """The collector did not answer (refused, DNS, timeout)."""


class CollectorAuthError(ClientError):
    """The collector refused the API key (401/403)."""


class NotFound(ClientError):
    """The trace or rule does not exist in this project (404)."""


class Unavailable(ClientError):
    """The collector does not serve this API (its route answers 404/405)."""


class CollectorResponseError(ClientError):
    """Any other non-2xx answer, or a body that is not the expected JSON."""


class Rejected(ClientError):
    """The collector refused the request (400/409/413/422); ``problems`` lists why."""

    def __init__(self, message: str, status: int, problems: list[str]) -> None:
        super().__init__(message)
        self.status = status
        self.problems = problems


class ClientSettings(BaseSettings):
    """Where the collector is and how to authenticate (pydantic settings).

    Fields not given come from ``PLANSCOPE_ENDPOINT`` (else the deprecated
    ``PLANSCOPE_COLLECTOR_URL``), ``PLANSCOPE_API_KEY`` and ``PLANSCOPE_PROJECT``
    (``planscope.environment_variables``); an empty variable counts as unset.

    >>> ClientSettings(base_url="http://c:4318", timeout=3.0).timeout
    3.0
    """

    model_config = SettingsConfigDict(frozen=True, validate_by_name=True, env_ignore_empty=True)

    base_url: str = Field(
        default_factory=lambda: _deprecated_url(DEFAULT_COLLECTOR_URL),
        validation_alias=ENV.PLANSCOPE_ENDPOINT,
    )
    api_key: str | None = Field(None, validation_alias=ENV.PLANSCOPE_API_KEY)
    project: str | None = Field(None, validation_alias=ENV.PLANSCOPE_PROJECT)
    """Project to read in open mode (``?project=``); with an API key the key's project wins."""
    timeout: float = Field(15.0, gt=0)

    @classmethod
    def from_env(cls, **overrides: Any) -> ClientSettings:
        """The environment, with the ``overrides`` that are not None winning (command-line
        options, whose absence is None).

        >>> ClientSettings.from_env(base_url=None, timeout=3.0).timeout
        3.0
        """
        return cls(**{k: v for k, v in overrides.items() if v is not None})


_warned_deprecated = False


def _deprecated_url(default: str) -> str:
    """``PLANSCOPE_COLLECTOR_URL`` (said once to be deprecated on stderr), else ``default``."""
    global _warned_deprecated
    old = os.environ.get(ENV.PLANSCOPE_COLLECTOR_URL)
    if not old:
        return default
    if not _warned_deprecated:
        _warned_deprecated = True
        print(
            f"planscope: warning: {ENV.PLANSCOPE_COLLECTOR_URL} is deprecated and will be removed "
            f"in 0.3; set {ENV.PLANSCOPE_ENDPOINT} instead",
            file=sys.stderr,
        )
    return old


class CollectorClient:
    """A typed, synchronous client of the collector's HTTP API.

    >>> client = CollectorClient(ClientSettings(base_url="http://127.0.0.1:9"))
    >>> client.base_url
    'http://127.0.0.1:9'
    """

    def __init__(self, settings: ClientSettings | None = None, *, user_agent: str = "") -> None:
        self.settings = settings or ClientSettings.from_env()
        headers = {"Accept": "application/json"}
        if user_agent:
            headers["User-Agent"] = user_agent
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(self.settings.timeout, connect=5.0),
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=16),
        )

    @property
    def base_url(self) -> str:
        return self.settings.base_url.rstrip("/")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> CollectorClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- low level ------------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        *,
        json: Any = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        project: str | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        query = {k: v for k, v in (params or {}).items() if v is not None and v != ""}
        project = project or self.settings.project
        if project and not self.settings.api_key:
            query.setdefault("project", project)
        extra: dict[str, Any] = {}
        if timeout is not None:
            extra["timeout"] = httpx.Timeout(timeout, connect=5.0)
        try:
            return self._http.request(
                method, path, params=query, json=json, content=content, headers=headers, **extra
            )
        except httpx.TimeoutException:
            raise CollectorUnreachable(
                f"the collector at {self.base_url} did not answer {path} within "
                f"{timeout or self.settings.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise CollectorUnreachable(
                f"cannot reach the collector at {self.base_url} ({type(exc).__name__}: {exc}). "
                "Is `planscope serve` running? Set --collector / PLANSCOPE_ENDPOINT."
            ) from None

    def _json(self, response: httpx.Response, *, absent: type[ClientError] = NotFound) -> Any:
        """The body of a 2xx answer; a typed error otherwise (``absent`` for a 404)."""
        status = response.status_code
        if status in (401, 403):
            raise CollectorAuthError(
                f"the collector refused the request ({status}: {_reason(response)}); "
                "pass --api-key / set PLANSCOPE_API_KEY"
            )
        if status == 404 or (status == 405 and absent is Unavailable):
            path = response.request.url.path
            if absent is Unavailable:
                raise Unavailable(f"the collector at {self.base_url} does not serve {path}")
            raise NotFound(_reason(response))
        if status in (400, 409, 413, 422):
            problems = _problems(response)
            raise Rejected(_reason(response), status, problems)
        if status >= 400:
            raise CollectorResponseError(
                f"{response.request.method} {response.request.url.path} answered "
                f"{status}: {_reason(response)}"
            )
        try:
            return response.json()
        except ValueError:
            raise CollectorResponseError(
                f"{response.request.url.path} did not answer JSON (is {self.base_url} a "
                "planscope collector?)"
            ) from None

    def _parse(self, model: type[M], response: httpx.Response, **kw: Any) -> M:
        body = self._json(response, **kw)
        try:
            return model.model_validate(body)
        except ValidationError as exc:
            raise CollectorResponseError(
                f"{response.request.url.path} answered an unexpected shape "
                f"({exc.error_count()} problems; first: {exc.errors()[0]['msg']})"
            ) from None

    def _object(self, response: httpx.Response, **kw: Any) -> dict[str, Any]:
        body = self._json(response, **kw)
        if not isinstance(body, dict):
            raise CollectorResponseError(
                f"{response.request.url.path} answered an unexpected shape"
            )
        return body

    # -- health ---------------------------------------------------------------------------------

    def ready(self) -> dict[str, Any]:
        """``/readyz`` (answers 503 with the same body while not ready)."""
        response = self._request("GET", "/readyz")
        if response.status_code == 503:
            return dict(response.json())
        return self._object(response)

    # -- traces ---------------------------------------------------------------------------------

    def list_traces(
        self,
        *,
        service: str | None = None,
        status: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        limit: int = 50,
        offset: int = 0,
        agent: str | None = None,
        variant: str | None = None,
        outcome: str | None = None,
        q: str | None = None,
    ) -> api.TracesPage:
        """One page of ``GET /api/traces`` (newest first), filtered by the collector."""
        params = {
            "service": service,
            "status": status,
            "since": since_ns,
            "until": until_ns,
            "limit": min(max(1, limit), MAX_PAGE),
            "offset": offset,
            "agent": agent,
            "variant": variant,
            "outcome": outcome,
            "q": q[:MAX_SEARCH] if q else None,
        }
        return self._parse(api.TracesPage, self._request("GET", "/api/traces", params))

    def recent_traces(
        self,
        *,
        max_rows: int,
        service: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
    ) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``max_rows`` newest trace rows; the flag says whether more exist (truncated)."""
        rows: list[dict[str, Any]] = []
        offset = 0
        while len(rows) < max_rows:
            page = self.list_traces(
                service=service,
                since_ns=since_ns,
                until_ns=until_ns,
                limit=min(MAX_PAGE, max_rows - len(rows)),
                offset=offset,
            )
            rows.extend(page.traces)
            if page.next_offset is None:
                return rows, False
            offset = page.next_offset
        return rows[:max_rows], True

    def get_trace(self, trace_id: str) -> dict[str, Any]:
        """``GET /api/traces/{id}``: the trace's spans, run and plans; :class:`NotFound` for an
        unknown id."""
        tid = trace_id.strip().lower()
        if not api.is_trace_id(tid):
            raise NotFound(f"{trace_id!r} is not a trace id (32 hex characters)")
        body = self._object(self._request("GET", f"/api/traces/{tid}"))
        if not isinstance(body.get("spans"), list):
            raise CollectorResponseError("/api/traces/{id} answered an unexpected shape")
        return body

    def get_traces(self, trace_ids: Iterable[str], workers: int = 8) -> list[dict[str, Any]]:
        """Several traces concurrently; ids that vanished (404) are left out."""

        def one(tid: str) -> dict[str, Any] | None:
            try:
                return self.get_trace(tid)
            except NotFound:
                return None

        ids = list(trace_ids)
        if not ids:
            return []
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(ids)))) as pool:
            return [t for t in pool.map(one, ids) if t is not None]

    def export_traces(self, request: bytes) -> None:
        """POST one serialized OTLP ``ExportTraceServiceRequest`` to ``/v1/traces`` (gzip)."""
        headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}
        response = self._request(
            "POST", "/v1/traces", content=gzip.compress(request), headers=headers
        )
        if response.status_code != 200:
            self._json(response)  # raises the typed error
            raise CollectorResponseError(f"/v1/traces answered {response.status_code}")

    # -- findings and analysis (the analyzer extension) -----------------------------------------

    def list_findings(
        self,
        *,
        kind: str | None = None,
        severity: str | None = None,
        trace_id: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        max_rows: int = 5000,
    ) -> api.FindingsPage:
        """``GET /api/findings``, paged up to ``max_rows``; :class:`Unavailable` without an
        analyzer."""
        found: list[api.Finding] = []
        while len(found) < max_rows:
            limit = min(MAX_PAGE, max_rows - len(found))
            params = {
                "kind": kind,
                "severity": severity,
                "trace_id": trace_id,
                "since": since_ns,
                "until": until_ns,
                "limit": limit,
                "offset": len(found),
            }
            page = self._parse(
                api.FindingsPage,
                self._request("GET", "/api/findings", params),
                absent=Unavailable,
            )
            found.extend(page.findings)
            if not page.has_more or not page.findings:
                return api.FindingsPage(findings=found, limit=max_rows, offset=0)
        return api.FindingsPage(findings=found[:max_rows], limit=max_rows, offset=0, has_more=True)

    def trace_findings(self, trace_id: str) -> list[api.Finding]:
        """``GET /api/traces/{id}/findings``; :class:`Unavailable` without an analyzer."""
        path = f"/api/traces/{_path_part(trace_id.strip().lower())}/findings"
        response = self._request("GET", path)
        return self._parse(api.TraceFindings, response, absent=Unavailable).findings

    def analyze(
        self, *, trace_id: str | None = None, since_ns: int | None = None, timeout: float = 600
    ) -> api.AnalyzeResult:
        """``POST /api/analyze``: analyse one trace, or the traces since ``since_ns``, now."""
        body: dict[str, Any] = {}
        if trace_id:
            body["trace_id"] = trace_id
        if since_ns is not None:
            body["since"] = since_ns
        response = self._request("POST", "/api/analyze", json=body, timeout=timeout)
        return self._parse(api.AnalyzeResult, response, absent=Unavailable)

    # -- aggregates (/api/stats, computed in ClickHouse) ----------------------------------------

    def stats_runs(
        self,
        *,
        since_ns: int | None = None,
        until_ns: int | None = None,
        service: str | None = None,
        agent: str | None = None,
        bucket_s: int = 3600,
    ) -> api.RunStats:
        """``GET /api/stats/runs``: buckets x outcome, totals, agents."""
        params = {
            "since": since_ns,
            "until": until_ns,
            "service": service,
            "agent": agent,
            "bucket": max(1, int(bucket_s)),
        }
        return self._parse(api.RunStats, self._request("GET", "/api/stats/runs", params))

    def stats_steps(
        self,
        *,
        since_ns: int | None = None,
        until_ns: int | None = None,
        service: str | None = None,
        agent: str | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """``GET /api/stats/steps``: per (agent, step id), worst first."""
        params = {
            "since": since_ns,
            "until": until_ns,
            "service": service,
            "agent": agent,
            "limit": limit,
        }
        return self._parse(api.StepStats, self._request("GET", "/api/stats/steps", params)).steps

    def stats_variants(
        self,
        *,
        since_ns: int | None = None,
        until_ns: int | None = None,
        service: str | None = None,
        agent: str | None = None,
    ) -> list[dict[str, Any]]:
        """``GET /api/stats/variants``: per runtime variant."""
        params = {"since": since_ns, "until": until_ns, "service": service, "agent": agent}
        response = self._request("GET", "/api/stats/variants", params)
        return self._parse(api.VariantStats, response).variants

    # -- alerts (the alerts extension); :class:`Unavailable` without it -------------------------

    def alert_rules(self) -> list[dict[str, Any]]:
        """``GET /api/alerts/rules``: current rules with version and state."""
        body = self._object(self._request("GET", "/api/alerts/rules"), absent=Unavailable)
        return _rows(body, "rules", "/api/alerts/rules")

    def alert_state(self) -> dict[str, Any]:
        """``GET /api/alerts/state``: firing/resolved per rule, the rules file, engine stats."""
        return self._object(self._request("GET", "/api/alerts/state"), absent=Unavailable)

    def alert_events(
        self, *, rule_id: str | None = None, state: str | None = None, limit: int = 200
    ) -> list[dict[str, Any]]:
        """``GET /api/alerts/events``: state changes, newest first."""
        params = {"rule_id": rule_id, "state": state, "limit": limit}
        response = self._request("GET", "/api/alerts/events", params)
        return _rows(self._object(response, absent=Unavailable), "events", "/api/alerts/events")

    def save_alert_rule(
        self, rule: dict[str, Any], *, replace: bool, project: str | None = None
    ) -> dict[str, Any]:
        """Create (POST) or replace (PUT, a new version) a rule; :class:`Rejected` with the
        collector's problems when it is invalid (422) or exists (409)."""
        if replace:
            path = f"/api/alerts/rules/{_path_part(str(rule.get('id') or ''))}"
            response = self._request("PUT", path, json=rule, project=project)
        else:
            response = self._request("POST", "/api/alerts/rules", json=rule, project=project)
        return self._object(response)

    def delete_alert_rule(self, rule_id: str) -> dict[str, Any]:
        """``DELETE /api/alerts/rules/{id}`` (the rule stays in its history)."""
        path = f"/api/alerts/rules/{_path_part(rule_id)}"
        return self._object(self._request("DELETE", path))

    def test_alert_rule(
        self,
        rule_id: str | None = None,
        *,
        rule: dict[str, Any] | None = None,
        project: str | None = None,
    ) -> dict[str, Any]:
        """A dry run (no event, no delivery) of a stored rule, or of an unsaved ``rule``."""
        if rule is not None:
            response = self._request("POST", "/api/alerts/test", json=rule, project=project)
        else:
            path = f"/api/alerts/rules/{_path_part(rule_id or '')}/test"
            response = self._request("POST", path)
        return self._object(response)

    # -- plan approvals -------------------------------------------------------------------------

    def file_approval(self, request: api.ApprovalRequest) -> api.Approval:
        """``POST /api/approvals``: file a plan for approval (the answer's ``id`` is polled)."""
        body = request.model_dump()
        return self._parse(api.Approval, self._request("POST", "/api/approvals", json=body))

    def get_approval(self, approval_id: str) -> api.Approval:
        """``GET /api/approvals/{id}``."""
        path = f"/api/approvals/{_path_part(approval_id)}"
        return self._parse(api.Approval, self._request("GET", path))

    def list_approvals(
        self, status: str | None = None, *, run_id: str | None = None, limit: int = 100
    ) -> list[api.Approval]:
        """``GET /api/approvals`` (``status="pending"``: the approval queue), newest first."""
        params = {"status": status, "run_id": run_id, "limit": limit}
        page = self._parse(api.ApprovalsPage, self._request("GET", "/api/approvals", params))
        return page.approvals

    def decide_approval(self, approval_id: str, decision: api.ApprovalDecision) -> api.Approval:
        """``POST /api/approvals/{id}/decision``; ``Rejected`` (409) when already decided."""
        path = f"/api/approvals/{_path_part(approval_id)}/decision"
        body = decision.model_dump(exclude_none=True)
        return self._parse(api.Approval, self._request("POST", path, json=body))


def _rows(body: dict[str, Any], key: str, path: str) -> list[dict[str, Any]]:
    items = body.get(key)
    if not isinstance(items, list):
        raise CollectorResponseError(f"{path} answered an unexpected shape")
    return [r for r in items if isinstance(r, dict)]


def _reason(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(body, dict):
        for key in ("error", "detail", "message"):
            if body.get(key):
                return str(body[key])[:300]
    return str(body)[:200]


def _problems(response: httpx.Response) -> list[str]:
    try:
        body = response.json()
    except ValueError:
        return []
    problems = body.get("problems") if isinstance(body, dict) else None
    return [str(p) for p in problems] if isinstance(problems, list) else []


def _path_part(value: str) -> str:
    """A value as one URL path segment (percent-encoded, so it can never change the path)."""
    return quote(value, safe="")
