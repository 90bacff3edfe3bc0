"""A warehouse-restocking agent traced with OpenLLMetry's (Traceloop's) conventions by hand.

Sealed split only (see README.md): written after the detectors were final and scored once.
No planscope code: the agent's own spans carry ``traceloop.span.kind`` workflow / task / tool
and ``traceloop.entity.*`` as traceloop-sdk's decorators write them (inputs as
``{"args": [...], "kwargs": {...}}``), with the constants of opentelemetry-semantic-conventions-ai;
its planner is an ordinary LLM call whose answer (``gen_ai.output.messages``, the parts format
the OpenLLMetry OpenAI instrumentor writes) is a JSON object ``{"steps": [...]}`` of step
objects (``name``, ``task``, ``tool``, ``args``). Tasks that fail are re-run by a retry
wrapper (one task span per attempt); purchase orders are retried inside the task; a failed
delivery booking makes the planner re-plan. No context data is recorded by this source.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.semconv_ai import SpanAttributes, TraceloopSpanKindValues
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from ._labels import Label

WORKFLOW = "restock"
WAREHOUSES = ("LYS-2", "LYS-3", "MRS-1", "TLS-4")
SUPPLIERS = ("acme-parts", "nordwise", "blue-harbor")


class Transient(Exception):
    """An upstream hiccup (worth retrying)."""


class Refused(Exception):
    """A request the counterpart refuses, whatever the number of tries."""


@contextmanager
def _entity(
    tracer: Tracer, kind: TraceloopSpanKindValues, name: str, kwargs: dict[str, Any]
) -> Iterator[Span]:
    """One Traceloop entity span; an exception sets ERROR + an exception event and re-raises."""
    with tracer.start_as_current_span(
        f"{name}.{kind.value}", record_exception=False, set_status_on_exception=False
    ) as span:
        span.set_attribute(SpanAttributes.TRACELOOP_SPAN_KIND, kind.value)
        span.set_attribute(SpanAttributes.TRACELOOP_ENTITY_NAME, name)
        span.set_attribute(SpanAttributes.TRACELOOP_WORKFLOW_NAME, WORKFLOW)
        if kind is not TraceloopSpanKindValues.WORKFLOW:
            span.set_attribute(SpanAttributes.TRACELOOP_ENTITY_PATH, WORKFLOW)
        span.set_attribute(
            SpanAttributes.TRACELOOP_ENTITY_INPUT, json.dumps({"args": [], "kwargs": kwargs})
        )
        try:
            yield span
        except Exception as e:
            span.record_exception(e)
            span.set_status(Status(StatusCode.ERROR, str(e)))
            raise


class Restocker:
    """The agent: plan with an LLM, run the tasks with retries, check the result."""

    def __init__(self, tracer: Tracer, label: Label) -> None:
        self.tracer = tracer
        self.label = label
        self.p = label.params
        rng = random.Random(label.seed)
        self.sku = f"SKU-{rng.randint(1000, 9999)}"
        self.warehouse = rng.choice(WAREHOUSES)
        self.quantity = rng.choice([20, 40, 60, 120])
        self.deadline = dt.date(2026, 3, 1) + dt.timedelta(days=rng.randint(5, 40))
        self.rng = random.Random(label.seed + 11)
        self.errors = list(self.p.get("errors", ()))
        self.failures = 0

    # -- the world --------------------------------------------------------------------------
    def _fault(self, where: str) -> None:
        """The scenario's injected failures at ``where`` (a tool name)."""
        if self.p.get("at") != where:
            return
        if self.label.kind == "runaway_loop":
            self.failures += 1
            raise Transient(self.errors[(self.failures - 1) % len(self.errors)])
        if self.errors:
            raise Transient(self.errors.pop(0))

    def tool(self, name: str, kwargs: dict[str, Any], body: Callable[[], Any]) -> Any:
        with _entity(self.tracer, TraceloopSpanKindValues.TOOL, name, kwargs) as span:
            self._fault(name)
            out = body()
            span.set_attribute(SpanAttributes.TRACELOOP_ENTITY_OUTPUT, json.dumps(out))
            return out

    def chat(self, prompt: str, answer: Any) -> Any:
        with self.tracer.start_as_current_span("openai.chat") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.provider.name", "openai")
            span.set_attribute("gen_ai.request.model", "gpt-4.1-mini")
            span.set_attribute(
                "gen_ai.input.messages",
                json.dumps([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]),
            )
            text = json.dumps(answer)
            span.set_attribute(
                "gen_ai.output.messages",
                json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [{"type": "text", "content": text}],
                            "finish_reason": "stop",
                        }
                    ]
                ),
            )
            span.set_attribute("gen_ai.usage.input_tokens", 60 + len(prompt) // 4)
            span.set_attribute("gen_ai.usage.output_tokens", 20 + len(text) // 4)
            return answer

    # -- planner ----------------------------------------------------------------------------
    def objective(self) -> str:
        return (
            f"Restock {self.sku} at warehouse {self.warehouse} with {self.quantity} units, "
            f"delivered by {self.deadline.isoformat()}"
        )

    def plan(self, version: int, avoid: str = "") -> list[dict[str, Any]]:
        sc = self.label.scenario
        warehouse, quantity, date = self.warehouse, self.quantity, self.deadline
        if sc == "wrong_warehouse":
            others = [w for w in WAREHOUSES if w != self.warehouse]
            warehouse = others[int(self.p["index"]) % len(others)]
        if sc == "wrong_quantity":
            quantity = self.quantity * int(self.p["factor"])
        if sc == "wrong_date":
            date = self.deadline + dt.timedelta(days=int(self.p["late_days"]))
        if version > 1:
            date = date - dt.timedelta(days=version - 1)  # an earlier slot on a replan
        steps = [
            {
                "name": "check_stock",
                "task": f"check {self.sku} stock at {warehouse}",
                "tool": "inventory_lookup",
                "args": {"sku": self.sku, "warehouse": warehouse},
            },
            {
                "name": "get_quotes",
                "task": "collect supplier quotes",
                "tool": "supplier_quotes",
                "args": {"sku": self.sku, "exclude": avoid},
            },
            {
                "name": "place_order",
                "task": "order from the cheapest supplier",
                "tool": "create_purchase_order",
                "args": {"sku": self.sku, "quantity": quantity},
            },
            {
                "name": "book_delivery",
                "task": "book a delivery slot",
                "tool": "schedule_delivery",
                "args": {"warehouse": warehouse, "date": date.isoformat()},
            },
            {
                "name": "notify",
                "task": "tell the warehouse team",
                "tool": "post_message",
                "args": {"channel": f"#wh-{warehouse.lower()}"},
            },
        ]
        prompt = self.objective() + (f" (replan {version}: {avoid or 'delivery failed'})")
        answer = self.chat(prompt if version > 1 else self.objective(), {"steps": steps})
        return list(answer["steps"])

    # -- executors --------------------------------------------------------------------------
    def check_stock(self, a: dict[str, Any]) -> dict[str, Any]:
        on_hand = 3 if a["warehouse"] == self.warehouse else 0
        return self.tool(
            "inventory_lookup",
            {"sku": a["sku"], "warehouse": a["warehouse"]},
            lambda: {"sku": a["sku"], "on_hand": on_hand, "warehouse": a["warehouse"]},
        )

    def get_quotes(self, a: dict[str, Any]) -> dict[str, Any]:
        calls = 0
        while True:
            calls += 1
            try:
                quotes = self.tool(
                    "supplier_quotes",
                    {"sku": a["sku"], "exclude": a.get("exclude", "")},
                    lambda: [
                        {"supplier": s, "unit_price": round(4 + 3 * i + self.rng.random(), 2)}
                        for i, s in enumerate(SUPPLIERS)
                        if s != a.get("exclude")
                    ],
                )
                return quotes[0]
            except Transient:
                if calls >= 3:
                    raise

    def place_order(self, a: dict[str, Any], quote: dict[str, Any]) -> dict[str, Any]:
        patience = len(self.errors) if self.p.get("at") == "create_purchase_order" else 3
        split = 1
        order: dict[str, Any] = {}
        for n in range(1, max(patience, 1) + 1):
            try:
                order = self.tool(
                    "create_purchase_order",
                    {
                        "supplier": quote["supplier"],
                        "sku": a["sku"],
                        "quantity": a["quantity"],
                        "deliveries": split,
                    },
                    lambda: {
                        "po": f"PO-{self.rng.getrandbits(20):05x}",
                        "supplier": quote["supplier"],
                        "quantity": a["quantity"],
                    },
                )
                break
            except Transient:
                if n >= patience:
                    raise
                split += 1  # the arguments vary from call to call: smaller deliveries
        for i in range(1, int(self.p.get("polls", 1)) + 1):
            state = "confirmed" if i == int(self.p.get("polls", 1)) else "pending"
            self.tool("po_status", {"po": order["po"]}, partial(dict, state=state))
        return order

    def book_delivery(self, a: dict[str, Any], order: dict[str, Any]) -> dict[str, Any]:
        if self.label.scenario == "wrong_warehouse" and a["warehouse"] != self.warehouse:

            def refuse() -> Any:
                raise Refused(
                    f"warehouse {a['warehouse']} has no open purchase for {self.sku}: "
                    f"{order['po']} cannot be received there"
                )

            return self.tool(
                "schedule_delivery", {"po": order["po"], "warehouse": a["warehouse"]}, refuse
            )
        return self.tool(
            "schedule_delivery",
            {"po": order["po"], "warehouse": a["warehouse"], "date": a["date"]},
            lambda: {"slot": f"{a['date']}T08:00", "dock": self.rng.randint(1, 9)},
        )

    def notify(self, a: dict[str, Any], delivery: dict[str, Any]) -> dict[str, Any]:
        text = f"{self.sku}: delivery {delivery['slot']} at dock {delivery['dock']}"
        return self.tool(
            "post_message", {"channel": a["channel"], "text": text}, lambda: {"ok": True}
        )

    # -- the run ----------------------------------------------------------------------------
    def run(self) -> str:
        sc = self.label.scenario
        with _entity(
            self.tracer,
            TraceloopSpanKindValues.WORKFLOW,
            WORKFLOW,
            {"objective": self.objective()},
        ) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                self._run(root, sc)
            except (Transient, Refused) as e:
                root.set_status(Status(StatusCode.ERROR, str(e)))
        return trace_id

    def _task(self, step: dict[str, Any], body: Callable[[], Any], patience: int) -> Any:
        """Run one task, re-running it (a new task span) on a transient failure."""
        for attempt in range(1, patience + 1):
            try:
                with _entity(
                    self.tracer,
                    TraceloopSpanKindValues.TASK,
                    step["name"],
                    {"task": step["task"], "attempt": attempt},
                ) as span:
                    out = body()
                    span.set_attribute(SpanAttributes.TRACELOOP_ENTITY_OUTPUT, json.dumps(out))
                    return out
            except Transient:
                if attempt >= patience:
                    raise
        raise AssertionError("unreachable")

    def _run(self, root: Span, sc: str) -> None:
        looping = sc == "loop_task_varying"

        def patience(step: str) -> int:
            """How long the retry wrapper keeps at a task: the agent's own setting."""
            return len(self.errors) if looping and self.p["step"] == step else 3

        steps = {s["name"]: s for s in self.plan(1)}
        self._task(
            steps["check_stock"],
            lambda: self.check_stock(steps["check_stock"]["args"]),
            patience("check_stock"),
        )
        if sc == "legit_replan":
            # the cheapest supplier is out of stock: the planner re-plans without it
            quote = self._task(
                steps["get_quotes"], lambda: self.get_quotes(steps["get_quotes"]["args"]), 3
            )
            steps = {s["name"]: s for s in self.plan(2, avoid=quote["supplier"])}
        quote = self._task(
            steps["get_quotes"], lambda: self.get_quotes(steps["get_quotes"]["args"]), 3
        )
        order = self._task(
            steps["place_order"],
            lambda: self.place_order(steps["place_order"]["args"], quote),
            1,
        )
        versions = int(self.p.get("versions", 1))
        version = 1
        while True:
            try:
                delivery = self._task(
                    steps["book_delivery"],
                    partial(self.book_delivery, steps["book_delivery"]["args"], order),
                    patience("book_delivery") if sc != "loop_across_replans" else 2,
                )
                break
            except Transient:
                if sc != "loop_across_replans" or version >= versions:
                    raise
                version += 1
                steps = {s["name"]: s for s in self.plan(version)}
        self._task(steps["notify"], lambda: self.notify(steps["notify"]["args"], delivery), 3)
        # the outcome check: the delivery is on time, at the right place, for the right amount
        booked = dt.date.fromisoformat(steps["book_delivery"]["args"]["date"])
        if booked > self.deadline or order["quantity"] != self.quantity:
            reason = (
                f"restock check failed: {order['po']} orders {order['quantity']} units "
                f"delivered {booked.isoformat()}"
            )
            root.set_status(Status(StatusCode.ERROR, reason))
            root.set_attribute(SpanAttributes.TRACELOOP_ENTITY_OUTPUT, json.dumps(reason))
            return
        if sc == "external_lost":
            # after the agent finished: the carrier loses the shipment, seen by tracking
            for i in range(1, int(self.p["polls"]) + 1):
                lost = i == int(self.p["polls"])

                def track(lost: bool = lost) -> Any:
                    if lost:
                        raise Refused(f"carrier reports shipment for {order['po']} lost")
                    return {"state": "in transit"}

                self.tool("delivery_tracking", {"po": order["po"]}, track)
        root.set_attribute(SpanAttributes.TRACELOOP_ENTITY_OUTPUT, json.dumps("restocked"))


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the restock agent's scenarios with spans going to ``provider``; run -> trace id."""
    tracer = provider.get_tracer("traceloop.tracer")
    return {label.run: Restocker(tracer, label).run() for label in labels}
