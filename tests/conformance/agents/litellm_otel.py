"""LiteLLM (``litellm.completion``) under LiteLLM's own OpenTelemetry callback
(``litellm.integrations.opentelemetry.OpenTelemetry`` on the suite's provider, in
``litellm.callbacks``; ``USE_OTEL_LITELLM_REQUEST_SPAN=true``: a ``litellm_request`` span per
model call under the app's current span, a ``raw_gen_ai_request`` child with the provider's raw
request and response), and the app's own plain spans: a root per run (``refund``) and a span
per step (``step <id>``). LiteLLM traces model calls only: no tool span; the tool calls are in
the conversation (the answer's tool calls, the ``tool`` messages the next request repeats). The
failing ``issue_refund`` returns its error as a value (``{"type": "error", "error": {...}}``);
the step span of a step that gave up is ERROR, and the root."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from ..fake_openai import MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    TOOL_SCHEMAS,
    ToolFailure,
    parse_plan,
    step_prompt,
    tools_for,
)


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    # LiteLLM fetches a price list from the internet when imported unless told to use its own
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = "true"
    import litellm
    from litellm.integrations.custom_logger import CustomLogger
    from litellm.integrations.opentelemetry import OpenTelemetry, OpenTelemetryConfig

    class Settled(CustomLogger):
        """Counts the calls LiteLLM finished logging (its callbacks run on worker threads after
        the call returns, in order: once this one saw a call, the OpenTelemetry callback before
        it ended that call's spans)."""

        def __init__(self) -> None:
            super().__init__()
            self.seen = 0
            self.changed = threading.Condition()

        def log_success_event(  # LiteLLM passes these by name
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            with self.changed:
                self.seen += 1
                self.changed.notify_all()

        def wait_for(self, calls: int) -> None:
            with self.changed:
                if not self.changed.wait_for(lambda: self.seen >= calls, timeout=60):
                    raise RuntimeError(f"LiteLLM logged {self.seen} of {calls} calls")

    settled = Settled()
    litellm.callbacks = [
        OpenTelemetry(config=OpenTelemetryConfig(), tracer_provider=provider),
        settled,
    ]
    tracer = provider.get_tracer("refund-app")
    asked = 0

    def ask(messages: list[dict[str, Any]], **extra: Any) -> Any:
        nonlocal asked
        asked += 1
        out = litellm.completion(
            model=f"openai/{MODEL}", api_base=base_url, api_key="test", messages=messages, **extra
        )
        return out.choices[0].message

    def call(fns: dict[str, Any], name: str, arguments: str) -> str:
        try:
            return str(fns[name](**json.loads(arguments)))
        except ToolFailure as e:  # the error as a value, as an HTTP API's client gives it
            return json.dumps({"type": "error", "error": {"type": "api_error", "message": str(e)}})

    for scenario in scenarios:
        fns = tools_for(scenario)
        with mark(scenario), tracer.start_as_current_span("refund") as root:
            planner = [
                {"role": "system", "content": PLANNER_PROMPT},
                {"role": "user", "content": OBJECTIVE},
            ]
            failed = []
            for step in parse_plan(ask(planner).content or "[]"):
                with tracer.start_as_current_span(f"step {step['id']}") as span:
                    messages: list[dict[str, Any]] = [
                        {"role": "system", "content": EXECUTOR_PROMPT},
                        {"role": "user", "content": step_prompt(step)},
                    ]
                    while (msg := ask(messages, tools=TOOL_SCHEMAS)).tool_calls:
                        messages.append(msg.model_dump(exclude_none=True))
                        for c in msg.tool_calls:
                            result = call(fns, c.function.name, c.function.arguments)
                            messages.append(
                                {"role": "tool", "tool_call_id": c.id, "content": result}
                            )
                    if str(msg.content).startswith("giving up"):
                        span.set_status(Status(StatusCode.ERROR, str(msg.content)))
                        failed.append(step["id"])
            if failed:
                root.set_status(Status(StatusCode.ERROR, f"steps failed: {', '.join(failed)}"))
            settled.wait_for(asked)
