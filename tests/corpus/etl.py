"""A data-pipeline (ETL) agent traced with plain OpenTelemetry spans, GenAI conventions only.

No planscope code and no ``planscope.*`` attribute: a root ``invoke_agent etl-pipeline`` span,
the planner's ``chat`` call (its plan is the JSON of ``gen_ai.output.messages``), one
``invoke_agent {stage}`` span per stage attempt, and ``execute_tool {tool}`` spans with
``gen_ai.tool.call.arguments`` / ``result`` and ``error.type``. It is what a team that
instruments by hand with the OpenTelemetry SDK sends. There is no record of the context each
stage got, so context starvation is out of scope for this agent.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from ._labels import Label

SOURCE_COLUMNS = ("order_id", "customer_id", "order_total", "created_at")
STAGES = ("extract", "validate", "transform", "load", "publish")


class StageError(Exception):
    """A transient failure inside a stage."""

    error_type = "StageError"


class LoadRejected(Exception):
    """The warehouse refused the data (retrying the same data does not help)."""

    error_type = "LoadRejected"


@contextmanager
def _span(tracer: Tracer, name: str, attributes: dict[str, Any]) -> Iterator[Span]:
    """A span that records an exception as ``error.type`` + ERROR status and re-raises it."""
    with tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except Exception as e:
            span.set_attribute("error.type", getattr(e, "error_type", type(e).__name__))
            span.set_status(Status(StatusCode.ERROR, str(e)))
            span.record_exception(e)
            raise


class Pipeline:
    """The agent: a planner call, then stages run in order with retries."""

    def __init__(self, tracer: Tracer, label: Label) -> None:
        self.tracer = tracer
        self.label = label
        self.rng = random.Random(label.seed + 7)
        p = label.params
        self.transient = list(p.get("errors", ())) if "loop" not in label.scenario else []
        self.broken = list(p.get("errors", ())) if "loop" in label.scenario else []
        self.calls = 0

    def tool(self, name: str, arguments: dict[str, Any], body: Callable[[], Any]) -> Any:
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": f"call_{self.rng.getrandbits(40):010x}",
            "gen_ai.tool.call.arguments": json.dumps(arguments, sort_keys=True),
        }
        with _span(self.tracer, f"execute_tool {name}", attrs) as span:
            result = body()
            span.set_attribute("gen_ai.tool.call.result", json.dumps(result, sort_keys=True))
            return result

    def chat(self, prompt: str, answer: Any) -> Any:
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.input.messages": json.dumps([{"role": "user", "content": prompt}]),
        }
        with _span(self.tracer, "chat gpt-4o-mini", attrs) as span:
            span.set_attribute(
                "gen_ai.output.messages",
                json.dumps([{"role": "assistant", "content": json.dumps(answer)}]),
            )
            span.set_attribute("gen_ai.usage.input_tokens", 40 + len(prompt) // 4)
            span.set_attribute("gen_ai.usage.output_tokens", 120)
            return answer

    def _transient(self, where: str, key: str) -> None:
        """The scenario's faults: ``key`` names which tool they hit."""
        sc = self.label.scenario
        target = {
            "flaky_stage": "sql_query",
            "tool_retry_recovers": "bulk_insert",
            "loop_stage_varying": "run_transform",
            "loop_tool_varying_args": "bulk_insert",
        }.get(sc)
        if target != key:
            return
        if self.transient:
            raise StageError(self.transient.pop(0))
        if self.broken:
            self.calls += 1
            raise StageError(self.broken[(self.calls - 1) % len(self.broken)])

    # -- stages ---------------------------------------------------------------------------
    def extract(self, plan: dict[str, Any]) -> list[dict[str, Any]]:
        pages = int(self.label.params.get("pages", 1))
        rows: list[dict[str, Any]] = []
        for page in range(1, pages + 1):
            args = {"table": plan["source"], "columns": plan["columns"], "page": page}

            def query(page: int = page) -> dict[str, Any]:
                self._transient("extract", "sql_query")
                got = [
                    {
                        c: (self.rng.randint(1, 999) if c in SOURCE_COLUMNS else None)
                        for c in plan["columns"]
                    }
                    for _ in range(5)
                ]
                return {"rows": len(got), "page": page, "more": page < pages, "data": got}

            rows += self.tool("sql_query", args, query)["data"]
        return rows

    def validate(self, rows: list[dict[str, Any]]) -> int:
        return int(
            self.tool(
                "check_row_count",
                {"rows": len(rows), "min_rows": 1},
                lambda: {"ok": True, "rows": len(rows)},
            )["rows"]
        )

    def transform(self, rows: list[dict[str, Any]], attempt: int) -> list[dict[str, Any]]:
        args = {"job": "orders_daily", "memory_mb": 512 * attempt, "rows": len(rows)}

        def body() -> dict[str, Any]:
            self._transient("transform", "run_transform")
            return {"rows_out": len(rows)}

        self.tool("run_transform", args, body)
        return rows

    def load(self, rows: list[dict[str, Any]], plan: dict[str, Any]) -> None:
        target_col = plan["columns"][2]
        nulls = sum(r.get(target_col) is None for r in rows)
        batch = 1000
        patience = len(self.broken) if self.broken else 3
        job = ""
        for n in range(1, patience + 1):

            def insert(batch: int = batch) -> dict[str, Any]:
                self._transient("load", "bulk_insert")
                if nulls:
                    raise LoadRejected(
                        f"column {target_col} is NULL in {nulls} of {len(rows)} rows "
                        f"(revenue is NOT NULL)"
                    )
                return {"job_id": f"job-{self.rng.getrandbits(24):06x}", "accepted": len(rows)}

            try:
                job = self.tool(
                    "bulk_insert",
                    {"table": "dw.orders", "batch_size": batch, "rows": len(rows)},
                    insert,
                )["job_id"]
                break
            except StageError:
                if n == patience:
                    raise
                batch = max(50, batch // 2)  # arguments vary from call to call
        polls = int(self.label.params.get("polls", 1))
        for i in range(1, polls + 1):
            state = "done" if i == polls else "running"
            self.tool(
                "load_status",
                {"job_id": job},
                partial(dict, state=state, progress=round(i / polls, 2)),
            )

    def publish(self) -> None:
        self.tool("refresh_dashboard", {"dashboard": "revenue"}, lambda: {"ok": True})

    def run(self) -> str:
        sc = self.label.scenario
        month = f"2026-{self.rng.randint(1, 12):02d}"
        objective = f"Load {month} orders into the warehouse and refresh the revenue dashboard"
        with _span(
            self.tracer,
            "invoke_agent etl-pipeline",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "etl-pipeline",
                "gen_ai.conversation.id": self.label.run,
            },
        ) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            revenue = self.label.params["column"] if sc == "wrong_column" else "order_total"
            plan = self.chat(
                objective,
                {
                    "source": "orders",
                    "columns": ["order_id", "customer_id", revenue, "created_at"],
                    "stages": list(STAGES),
                },
            )
            rows: list[dict[str, Any]] = []
            for stage in STAGES:
                patience = 3 if stage != "transform" or not self.broken else len(self.broken)
                for attempt in range(1, patience + 1):
                    try:
                        with _span(
                            self.tracer,
                            f"invoke_agent {stage}",
                            {
                                "gen_ai.operation.name": "invoke_agent",
                                "gen_ai.agent.name": stage,
                            },
                        ):
                            if stage == "extract":
                                rows = self.extract(plan)
                            elif stage == "validate":
                                self.validate(rows)
                            elif stage == "transform":
                                rows = self.transform(rows, attempt)
                            elif stage == "load":
                                self.load(rows, plan)
                            else:
                                self.publish()
                        break
                    except LoadRejected as e:
                        root.set_status(Status(StatusCode.ERROR, str(e)))
                        root.set_attribute("error.type", "LoadRejected")
                        return trace_id
                    except StageError as e:
                        if stage == "load" or attempt == patience:
                            root.set_status(Status(StatusCode.ERROR, f"{stage} failed: {e}"))
                            root.set_attribute("error.type", "StageError")
                            return trace_id
        return trace_id


def run(label: Label, tracer: Tracer | None = None) -> str:
    """Play one labelled scenario with ``tracer`` (default: the global provider's); trace id."""
    return Pipeline(tracer or trace.get_tracer("etl-agent"), label).run()
