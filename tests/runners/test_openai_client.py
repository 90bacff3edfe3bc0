"""The OpenAI-compatible client against a real HTTP server on a loopback port."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from planscope import semconv as A
from planscope._cli import main
from planscope_runners import (
    ChatRequest,
    Message,
    ModelError,
    OpenAIChatModel,
    ToolSchema,
    get_task,
    run_task,
)
from planscope_runners._env import resolve_args

from .conftest import Spans, attr

TASK = get_task("files-merge-2")


class FakeOpenAI(ThreadingHTTPServer):
    """Answers /v1/chat/completions like an OpenAI-compatible server that knows one task."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[str] = []
        self.fail_next = 0
        self.status = 200

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        self.server.headers_seen.append(self.headers.get("Authorization", ""))
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": "not found"})
        if self.server.fail_next:
            self.server.fail_next -= 1
            return self._send(500, {"error": "overloaded"})
        if self.server.status != 200:
            return self._send(self.server.status, {"error": {"message": "bad request"}})
        message = _answer(body)
        self._send(
            200,
            {
                "id": "chatcmpl-1",
                "model": body["model"] + "-2026",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    prompt = body["messages"][-1]["content"]
    if body.get("tools"):  # an executor: call the tool for the step named in the prompt
        step_id = re.search(r"Step (\S+):", prompt).group(1)  # type: ignore[union-attr]
        context = json.loads(prompt.split("Context: ", 1)[1])
        spec = TASK.step(step_id)
        args = resolve_args(spec.args, context)
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": spec.tool, "arguments": json.dumps(args)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    steps = [
        {
            "id": s.id,
            "description": s.description,
            "tool": s.tool,
            "depends_on": list(s.depends_on),
            "requires": list(s.requires),
            "produces": [s.produces] if s.produces else [],
            "inputs": {f: TASK.facts[f] for f in s.fact_refs},
        }
        for s in TASK.steps
    ]
    return {"role": "assistant", "content": "```json\n" + json.dumps({"steps": steps}) + "\n```"}


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_tool_calls_usage_cost_and_auth(server: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o-mini", base_url=server.url, api_key="sk-test", timeout=5)
    tool = ToolSchema("read_file", "Read", {"type": "object", "properties": {}})
    response = model.complete(
        ChatRequest((Message("user", "Step read_jan: read\nContext: {}"),), tools=(tool,))
    )
    (call,) = response.tool_calls
    assert call.name == "read_file" and call.arguments == {"path": "reports/jan.txt"}
    assert response.usage.input_tokens == 100 and response.usage.output_tokens == 20
    assert response.model == "gpt-4o-mini-2026"
    assert response.cost_usd == pytest.approx((100 * 0.15 + 20 * 0.6) / 1e6)
    assert server.headers_seen == ["Bearer sk-test"]
    sent = server.requests[0]
    assert sent["tools"][0]["function"]["name"] == "read_file" and sent["temperature"] == 0


def test_retries_server_errors_and_reports_client_errors(server: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o", base_url=server.url, max_retries=2, timeout=5)
    server.fail_next = 2
    assert model.complete(ChatRequest((Message("user", "plan"),))).content
    assert len(server.requests) == 3
    server.status = 400
    with pytest.raises(ModelError, match="HTTP 400"):
        model.complete(ChatRequest((Message("user", "plan"),)))
    dead = OpenAIChatModel("gpt-4o", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=1)
    with pytest.raises(ModelError, match="failed after 1 attempts"):
        dead.complete(ChatRequest((Message("user", "x"),)))


def test_a_full_run_with_http_planner_and_executor(server: FakeOpenAI, spans: Spans) -> None:
    planner = OpenAIChatModel("gpt-4o", base_url=server.url, timeout=5)
    executor = OpenAIChatModel("gpt-4o-mini", base_url=server.url, timeout=5)
    result = run_task("plan_and_act", "files", TASK, planner=planner, executor=executor)
    assert result.success, result.reason
    llms = spans.of_kind(A.KIND_LLM)
    assert len(llms) == 4  # 1 plan + 3 steps
    assert {attr(s, A.GEN_AI_PROVIDER_NAME) for s in llms} == {"openai"}
    assert {attr(s, A.GEN_AI_REQUEST_MODEL) for s in llms} == {"gpt-4o", "gpt-4o-mini"}
    assert all(attr(s, A.GEN_AI_USAGE_INPUT_TOKENS) == 100 for s in llms)
    assert result.counters.input_tokens == 400


def test_suite_takes_planner_and_executor_models_separately(
    server: FakeOpenAI, spans: Spans, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["suite", "--runs", "2", "--variants", "plan_and_act", "--envs", "files"]
    args += ["--fault-rate", "0", "--quiet", "--model", "openai", "--base-url", server.url]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--planner-model", "big-planner", "--executor-model", "small-executor"])
    assert exit_info.value.code == 0
    assert {r["model"] for r in server.requests} == {"big-planner", "small-executor"}
    out = capsys.readouterr().out
    assert "real models: planner big-planner, executor small-executor" in out
    assert "SYNTHETIC" not in out
