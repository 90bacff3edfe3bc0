"""Every error the API answers has one shape, ``{"error": reason, "field": ...}``: the
collector's own routes, FastAPI's request validation, unknown routes and the analyzer's and
alerts' routes alike; the published schema says so."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from planscope.semconv import FINDING_KINDS
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import Migrated


@pytest.fixture(scope="module")
def collector(
    tmp_path_factory: pytest.TempPathFactory, migrated: Migrated
) -> Iterator[BackgroundServer]:
    data = migrated.data_dir(tmp_path_factory.mktemp("api-errors") / "data")
    with BackgroundServer(CollectorSettings(data_dir=data, port=0)) as server:
        yield server


def _error(r: httpx.Response, status: int, field: str | None = None) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert "detail" not in body and isinstance(body["error"], str) and body["error"], body
    assert body.get("field") == field, body
    return str(body["error"])


def test_every_error_has_the_one_shape(collector: BackgroundServer) -> None:
    url = collector.url
    reason = _error(httpx.get(f"{url}/api/traces", params={"limit": 0}), 400, "limit")
    assert reason.startswith("limit: ") and "1" in reason
    _error(httpx.get(f"{url}/api/traces", params={"limit": "many"}), 400, "limit")
    _error(httpx.get(f"{url}/api/stats/runs", params={"bucket": "x"}), 400, "bucket")
    _error(httpx.get(f"{url}/api/alerts/events", params={"limit": -1}), 400, "limit")
    _error(httpx.get(f"{url}/api/traces/not-hex"), 400, "trace_id")
    _error(httpx.get(f"{url}/api/traces/{'ab' * 16}"), 404)
    _error(httpx.get(f"{url}/api/no-such-route"), 404)
    _error(httpx.delete(f"{url}/api/traces"), 405)
    # a body that is not JSON, and a JSON body with a wrong field
    bad_json = httpx.post(
        f"{url}/api/analyze", content=b"{nope", headers={"content-type": "application/json"}
    )
    _error(bad_json, 400, "body")
    _error(httpx.post(f"{url}/api/analyze", json={"trace_id": 7}), 400, "trace_id")
    # an alert rule that parses but is not valid stays a 422, in the same shape
    _error(httpx.post(f"{url}/api/alerts/rules", json={"id": "r"}), 422, "kind")


def test_unknown_finding_kind_or_severity_is_a_400_naming_the_valid_ones(
    collector: BackgroundServer,
) -> None:
    r = httpx.get(f"{collector.url}/api/findings", params={"kind": ["runaway_loop", "nope"]})
    reason = _error(r, 400, "kind")
    assert "'nope'" in reason and all(k in reason for k in FINDING_KINDS), reason
    reason = _error(httpx.get(f"{collector.url}/api/findings?severity=huge"), 400, "severity")
    assert "critical" in reason
    ok = httpx.get(f"{collector.url}/api/findings", params={"kind": list(FINDING_KINDS)})
    assert ok.status_code == 200 and ok.json()["findings"] == []


def test_the_schema_documents_the_error_shape(collector: BackgroundServer) -> None:
    schema = httpx.get(f"{collector.url}/openapi.json").json()
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    assert schema["components"]["schemas"]["Error"]["required"] == ["error"]
    traces = schema["paths"]["/api/traces"]["get"]["responses"]
    assert "422" not in traces and "Error" in str(traces["400"])
    # Swagger UI and ReDoc would load from a CDN (blank offline): not served.
    assert httpx.get(f"{collector.url}/docs").status_code == 404
    assert httpx.get(f"{collector.url}/redoc").status_code == 404
