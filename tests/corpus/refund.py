"""A refund agent on a framework instrumentation: the ``openai`` client instrumented by
OpenInference (its LLM spans), the agent's own AGENT / CHAIN / TOOL spans through
OpenInference's tracer, talking to the conformance suite's deterministic OpenAI-compatible
server (``tests/conformance/fake_openai.py``) on a loopback port. No planscope code.

The model is the fake server's: a planner call returns the plan (``lookup``, then ``refund``);
an executor conversation calls the step's tool, calls it again after every error result and
gives up after five. The scenario (``_labels.py``) decides only what the tools do: fail a few
times then work (a flaky payment gateway), or fail every time. Context and plan data are not
recorded by this source, so only runaway loops are labelled.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.agents._common import EXECUTOR_PROMPT, PLANNER_PROMPT, TOOL_SCHEMAS
from tests.conformance.agents.openinference_openai import OpenInferenceSpans
from tests.conformance.fake_openai import MODEL, ModelServer

from ._labels import Label

TOOLS = {"lookup": "lookup_order", "refund": "issue_refund"}


def _tools(label: Label) -> dict[str, Callable[..., str]]:
    """The two tools; the scenario's errors come first, then the tool works (or never does)."""
    errors = list(label.params.get("errors", ()))
    broken = label.scenario.startswith("loop_")
    target = TOOLS[label.params["step"]] if "step" in label.params else ""
    calls = {"n": 0}

    def maybe_fail(name: str) -> None:
        if name != target:
            return
        calls["n"] += 1
        if broken:
            raise RuntimeError("error: " + errors[(calls["n"] - 1) % len(errors)])
        if errors:
            raise RuntimeError("error: " + errors.pop(0))

    def lookup_order(order_id: str) -> str:
        maybe_fail("lookup_order")
        return json.dumps({"order_id": order_id, "amount": 30, "status": "delivered"})

    def issue_refund(order_id: str) -> str:
        maybe_fail("issue_refund")
        return f"refund issued for order {order_id}"

    return {"lookup_order": lookup_order, "issue_refund": issue_refund}


def _run_one(client: OpenAI, spans: OpenInferenceSpans, label: Label) -> str:
    tools = _tools(label)
    with spans.run(f"Refund order 42 (ticket {label.seed})") as run:
        trace_id = format(run.get_span_context().trace_id, "032x")
        planner = [
            {"role": "system", "content": PLANNER_PROMPT},
            {"role": "user", "content": "Refund order 42"},
        ]
        response = client.chat.completions.create(model=MODEL, messages=planner)  # type: ignore[arg-type]
        plan = json.loads(response.choices[0].message.content or "[]")
        for step in plan:
            with spans.step(step) as span:
                messages: list[dict[str, Any]] = [
                    {"role": "system", "content": EXECUTOR_PROMPT},
                    {"role": "user", "content": f"Step {step['id']}: {step['description']}"},
                ]
                while True:
                    response = client.chat.completions.create(
                        model=MODEL,
                        messages=messages,  # type: ignore[arg-type]
                        tools=TOOL_SCHEMAS,  # type: ignore[arg-type]
                    )
                    message = response.choices[0].message
                    if not message.tool_calls:
                        answer = message.content or ""
                        break
                    messages.append(message.model_dump(exclude_none=True))
                    for call in message.tool_calls:
                        name, args = call.function.name, call.function.arguments  # type: ignore[union-attr]
                        try:
                            with spans.tool(name, args):
                                result = tools[name](**json.loads(args))
                        except RuntimeError as exc:
                            result = str(exc)
                        messages.append(
                            {"role": "tool", "tool_call_id": call.id, "content": result}
                        )
                if answer.startswith("giving up"):
                    spans.failed(span, answer)
                    spans.failed(run, f"step {step['id']} gave up")
                    return trace_id
    return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the refund agent's scenarios against a fake model server; run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer() as server:
            client = OpenAI(base_url=server.base_url("corpus-refund"), api_key="test")
            spans = OpenInferenceSpans(provider)
            for label in labels:
                out[label.run] = _run_one(client, spans, label)
    finally:
        instrumentor.uninstrument()
    return out
