"""Data access: the one place the dashboard talks to the collector's query API.

The dashboard never opens the store; it reads ``/api/...`` over HTTP with an optional API key.
Every failure becomes a :class:`DashboardError` with a message fit for the user (shown with
``st.error``, never as a traceback).

Hierarchy::

    PlanscopeError
    └── DashboardError            root of the dashboard's errors
        ├── CollectorUnreachable  connection refused, DNS, timeout
        ├── CollectorAuthError    401/403: missing or wrong API key
        ├── NotFound              404 for a trace that does not exist
        ├── RuleRejected          422/409 from the alerts API, with its problems
        └── CollectorResponseError any other non-2xx or an unreadable body
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
from planscope import PlanscopeError
from planscope.environment_variables import collector_url

ENV_API_KEY = "PLANSCOPE_API_KEY"
"""API key sent as ``Authorization: Bearer <key>`` (unset: open mode)."""
ENV_PROJECT = "PLANSCOPE_PROJECT"
"""Project to read in open mode (``?project=``); with an API key the key's project wins."""
DEFAULT_COLLECTOR_URL = "http://127.0.0.1:4318"

MAX_PAGE = 1000
"""The collector's largest ``limit`` for ``/api/traces``."""
MAX_FINDINGS_PAGE = 1000
"""The analyzer's largest ``limit`` for ``/api/findings``."""
MAX_SEARCH = 256
"""The collector's longest ``q`` for ``/api/traces``."""


class DashboardError(PlanscopeError):
    """Root of the dashboard's errors; ``str()`` is a message for the user."""


class CollectorUnreachable(DashboardError):
    """The collector did not answer (refused, DNS, timeout)."""


class CollectorAuthError(DashboardError):
    """The collector refused the API key (401/403)."""


class NotFound(DashboardError):
    """The requested trace does not exist in this project."""


class CollectorResponseError(DashboardError):
    """Any other non-2xx answer or a body that is not the expected JSON."""


class RuleRejected(DashboardError):
    """The alerts API refused a rule (422 invalid, 409 exists); ``problems`` lists why."""

    def __init__(self, message: str, problems: list[str]) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True)
class ClientSettings:
    """Where the collector is and how to authenticate; built from env vars by default."""

    base_url: str = DEFAULT_COLLECTOR_URL
    api_key: str | None = None
    project: str | None = None
    timeout: float = 15.0

    @classmethod
    def from_env(cls) -> ClientSettings:
        """Settings from ``PLANSCOPE_ENDPOINT``, ``PLANSCOPE_API_KEY``, ``PLANSCOPE_PROJECT``.

        >>> ClientSettings.from_env().timeout
        15.0
        """
        return cls(
            base_url=collector_url(default=DEFAULT_COLLECTOR_URL),
            api_key=os.environ.get(ENV_API_KEY) or None,
            project=os.environ.get(ENV_PROJECT) or None,
        )


@dataclass
class FindingsPage:
    """Findings as answered by the analyzer; ``available`` is False when the collector has none."""

    available: bool
    findings: list[dict[str, Any]] = field(default_factory=list)
    has_more: bool = False
    """More findings exist than were read."""


@dataclass
class AlertsPage:
    """Alert rules; ``available`` is False when the collector has no alerts API (404)."""

    available: bool
    items: list[dict[str, Any]] = field(default_factory=list)


class CollectorClient:
    """A typed, synchronous client of the query API.

    >>> client = CollectorClient(ClientSettings(base_url="http://127.0.0.1:9"))
    >>> client.base_url
    'http://127.0.0.1:9'
    """

    def __init__(self, settings: ClientSettings | None = None) -> None:
        self.settings = settings or ClientSettings.from_env()
        headers = {"Accept": "application/json"}
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

    def _get(self, path: str, params: dict[str, Any] | None = None) -> httpx.Response:
        return self._request("GET", path, params)

    def _request(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        body: Any = None,
    ) -> httpx.Response:
        query = {k: v for k, v in (params or {}).items() if v is not None and v != ""}
        if self.settings.project and not self.settings.api_key:
            query.setdefault("project", self.settings.project)
        try:
            if body is None:
                return self._http.request(method, path, params=query)
            return self._http.request(method, path, params=query, json=body)
        except httpx.TimeoutException:
            raise CollectorUnreachable(
                f"the collector at {self.base_url} did not answer {path} within "
                f"{self.settings.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise CollectorUnreachable(
                f"cannot reach the collector at {self.base_url} ({type(exc).__name__}: {exc}). "
                "Is `planscope serve` running? Set --collector / PLANSCOPE_ENDPOINT."
            ) from None

    def _json(self, response: httpx.Response) -> Any:
        if response.status_code in (401, 403):
            raise CollectorAuthError(
                f"the collector refused the request ({response.status_code}: "
                f"{_reason(response)}); pass --api-key / set PLANSCOPE_API_KEY"
            )
        if response.status_code == 404:
            raise NotFound(_reason(response))
        if response.status_code >= 400:
            raise CollectorResponseError(
                f"{response.request.method} {response.request.url.path} answered "
                f"{response.status_code}: {_reason(response)}"
            )
        try:
            return response.json()
        except ValueError:
            raise CollectorResponseError(
                f"{response.request.url.path} did not answer JSON (is {self.base_url} a "
                "planscope collector?)"
            ) from None

    # -- API ------------------------------------------------------------------------------------

    def ready(self) -> dict[str, Any]:
        """``/readyz`` (answers 503 with the same body while not ready)."""
        response = self._get("/readyz")
        if response.status_code == 503:
            return dict(response.json())
        return dict(self._json(response))

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
    ) -> dict[str, Any]:
        """One page of ``GET /api/traces`` (newest first), filtered by the collector."""
        body = self._json(
            self._get(
                "/api/traces",
                {
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
                },
            )
        )
        if not isinstance(body, dict) or not isinstance(body.get("traces"), list):
            raise CollectorResponseError("/api/traces answered an unexpected shape")
        return body

    def recent_traces(
        self,
        *,
        max_rows: int,
        service: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
    ) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``max_rows`` newest traces; the flag says whether more exist (truncated)."""
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
            rows.extend(page["traces"])
            if page.get("next_offset") is None:
                return rows, False
            offset = int(page["next_offset"])
        return rows[:max_rows], True

    def get_trace(self, trace_id: str) -> dict[str, Any]:
        """``GET /api/traces/{id}``; raises :class:`NotFound` for an unknown id."""
        tid = trace_id.strip().lower()
        if len(tid) != 32 or any(c not in "0123456789abcdef" for c in tid):
            raise NotFound(f"{trace_id!r} is not a trace id (32 hex characters)")
        body = self._json(self._get(f"/api/traces/{tid}"))
        if not isinstance(body, dict) or not isinstance(body.get("spans"), list):
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

    def list_findings(
        self,
        *,
        kind: str | None = None,
        severity: str | None = None,
        trace_id: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        max_rows: int = 5000,
    ) -> FindingsPage:
        """``GET /api/findings`` (paged up to ``max_rows``); ``available=False`` on 404."""
        found: list[dict[str, Any]] = []
        offset = 0
        while len(found) < max_rows:
            limit = min(MAX_FINDINGS_PAGE, max_rows - len(found))
            response = self._get(
                "/api/findings",
                {
                    "kind": kind,
                    "severity": severity,
                    "trace_id": trace_id,
                    "since": since_ns,
                    "until": until_ns,
                    "limit": limit,
                    "offset": offset,
                },
            )
            page = self._findings(response)
            if not page.available:
                return page
            found.extend(page.findings)
            body_more = page.has_more
            if not body_more or not page.findings:
                return FindingsPage(available=True, findings=found)
            offset += len(page.findings)
        return FindingsPage(available=True, findings=found[:max_rows], has_more=True)

    # -- aggregates (/api/stats, computed in ClickHouse) ------------------------------------------

    def _object(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        body = self._json(self._get(path, params))
        if not isinstance(body, dict):
            raise CollectorResponseError(f"{path} answered an unexpected shape")
        return body

    def stats_runs(
        self,
        *,
        since_ns: int | None = None,
        until_ns: int | None = None,
        service: str | None = None,
        agent: str | None = None,
        bucket_s: int = 3600,
    ) -> dict[str, Any]:
        """``GET /api/stats/runs``: buckets x outcome, totals, agents."""
        body = self._object(
            "/api/stats/runs",
            {
                "since": since_ns,
                "until": until_ns,
                "service": service,
                "agent": agent,
                "bucket": max(1, int(bucket_s)),
            },
        )
        if not isinstance(body.get("buckets"), list):
            raise CollectorResponseError("/api/stats/runs answered an unexpected shape")
        return body

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
        body = self._object(
            "/api/stats/steps",
            {
                "since": since_ns,
                "until": until_ns,
                "service": service,
                "agent": agent,
                "limit": limit,
            },
        )
        if not isinstance(body.get("steps"), list):
            raise CollectorResponseError("/api/stats/steps answered an unexpected shape")
        return [s for s in body["steps"] if isinstance(s, dict)]

    def stats_variants(
        self,
        *,
        since_ns: int | None = None,
        until_ns: int | None = None,
        service: str | None = None,
        agent: str | None = None,
    ) -> list[dict[str, Any]]:
        """``GET /api/stats/variants``: per runtime variant."""
        body = self._object(
            "/api/stats/variants",
            {"since": since_ns, "until": until_ns, "service": service, "agent": agent},
        )
        if not isinstance(body.get("variants"), list):
            raise CollectorResponseError("/api/stats/variants answered an unexpected shape")
        return [v for v in body["variants"] if isinstance(v, dict)]

    # -- alerts (/api/alerts); available=False when the collector has no alerting ---------------

    def alert_rules(self) -> AlertsPage:
        """``GET /api/alerts/rules`` (current rules with version and state)."""
        response = self._get("/api/alerts/rules")
        if response.status_code in (404, 405):
            return AlertsPage(available=False)
        body = self._json(response)
        items = body.get("rules") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise CollectorResponseError("/api/alerts/rules answered an unexpected shape")
        return AlertsPage(available=True, items=[r for r in items if isinstance(r, dict)])

    def alert_state(self) -> dict[str, Any]:
        """``GET /api/alerts/state``: firing/resolved per rule, the rules file, engine stats."""
        body = self._json(self._get("/api/alerts/state"))
        if not isinstance(body, dict):
            raise CollectorResponseError("/api/alerts/state answered an unexpected shape")
        return body

    def alert_events(
        self, *, rule_id: str | None = None, state: str | None = None, limit: int = 200
    ) -> list[dict[str, Any]]:
        """``GET /api/alerts/events``: state changes, newest first."""
        body = self._json(
            self._get("/api/alerts/events", {"rule_id": rule_id, "state": state, "limit": limit})
        )
        items = body.get("events") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise CollectorResponseError("/api/alerts/events answered an unexpected shape")
        return [e for e in items if isinstance(e, dict)]

    def save_alert_rule(self, rule: dict[str, Any], *, replace: bool) -> dict[str, Any]:
        """Create (POST) or replace (PUT, a new version) a rule; raises :class:`RuleRejected`
        with the collector's list of problems when it is invalid."""
        rule_id = str(rule.get("id") or "")
        if replace:
            response = self._request("PUT", f"/api/alerts/rules/{_path_part(rule_id)}", body=rule)
        else:
            response = self._request("POST", "/api/alerts/rules", body=rule)
        return self._rule_answer(response)

    def test_alert_rule(self, rule_id: str) -> dict[str, Any]:
        """``POST /api/alerts/rules/{id}/test``: a dry run (no event, no delivery)."""
        return self._rule_answer(
            self._request("POST", f"/api/alerts/rules/{_path_part(rule_id)}/test")
        )

    def _rule_answer(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code in (409, 422):
            try:
                body = response.json()
            except ValueError:
                body = {}
            problems = body.get("problems") if isinstance(body, dict) else None
            raise RuleRejected(
                _reason(response),
                [str(p) for p in problems] if isinstance(problems, list) else [],
            )
        body = self._json(response)
        if not isinstance(body, dict):
            raise CollectorResponseError("the alerts API answered an unexpected shape")
        return body

    def trace_findings(self, trace_id: str) -> FindingsPage:
        """``GET /api/traces/{id}/findings``; ``available=False`` on 404 (no analyzer)."""
        return self._findings(self._get(f"/api/traces/{trace_id.strip().lower()}/findings"))

    def _findings(self, response: httpx.Response) -> FindingsPage:
        if response.status_code in (404, 405):  # no analyzer route on this collector
            return FindingsPage(available=False)
        body = self._json(response)
        items = body.get("findings") if isinstance(body, dict) else body
        if not isinstance(items, list):
            raise CollectorResponseError("the findings endpoint answered an unexpected shape")
        more = bool(body.get("has_more")) if isinstance(body, dict) else False
        return FindingsPage(
            available=True, findings=[f for f in items if isinstance(f, dict)], has_more=more
        )


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


def _path_part(value: str) -> str:
    """A rule id as one URL path segment (ids are ``[a-z0-9][a-z0-9_.-]*``; anything else is
    percent-encoded so it can never change the path)."""
    from urllib.parse import quote

    return quote(value, safe="")
