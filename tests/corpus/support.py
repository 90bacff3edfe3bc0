"""A customer-support agent written with the planscope context managers (held-out only).

A different hand and style from ``travel.py``: no decorators, ``start_run`` / ``start_plan`` /
``start_step`` / ``start_tool`` blocks, a planner that reads the ticket and a helpdesk world
(customers, orders, refunds that settle asynchronously, tickets a customer can reopen). Its
scenarios are never used while the detectors are tuned.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import planscope
from opentelemetry import trace
from planscope import PlanStep

from ._labels import Label


class Transient(Exception):
    """A helpdesk API hiccup (worth retrying)."""


class Refused(Exception):
    """A request the helpdesk refuses whatever the number of tries."""


def _steps(refund_step: str = "refund") -> list[PlanStep]:
    money = (
        PlanStep(
            "refund",
            "refund the order",
            tool="issue_refund",
            depends_on=["lookup_order", "classify"],
            requires=["order", "category"],
            produces=["refund"],
        )
        if refund_step == "refund"
        else PlanStep(
            "store_credit",
            "give store credit instead",
            tool="grant_credit",
            depends_on=["lookup_order"],
            requires=["order"],
            produces=["refund"],
        )
    )
    return [
        PlanStep(
            "classify",
            "classify the ticket",
            tool="classify_ticket",
            requires=["ticket"],
            produces=["category"],
        ),
        PlanStep(
            "lookup_customer",
            "find the customer",
            tool="find_customer",
            requires=["email"],
            produces=["customer"],
        ),
        PlanStep(
            "lookup_order",
            "find the order",
            tool="get_order",
            depends_on=["lookup_customer"],
            requires=["order_id", "customer"],
            produces=["order"],
        ),
        money,
        PlanStep(
            "draft_reply",
            "write the reply",
            tool="compose_reply",
            depends_on=[money.id],
            requires=["ticket", "customer", "refund"],
            produces=["reply"],
        ),
        PlanStep(
            "close_ticket",
            "send the reply and close",
            tool="close_ticket",
            depends_on=["draft_reply"],
            requires=["reply"],
            irreversible=True,
        ),
    ]


class Helpdesk:
    """Customers, orders and tickets, plus the scenario's faults."""

    def __init__(self, label: Label, rng: random.Random) -> None:
        self.label, self.rng = label, rng
        self.customer = f"C-{rng.randint(10, 99)}"
        self.email = f"ann{rng.randint(1, 9)}@example.com"
        self.order = f"A-{rng.randint(1000, 9999)}"
        self.other_order = f"A-{rng.randint(1000, 9999)}"
        self.amount = round(rng.uniform(10, 300), 2)
        sc = label.scenario
        errors = list(label.params.get("errors", ()))
        self.flaky = errors if sc == "flaky_lookup" else []
        self.broken = errors if sc.startswith("loop_") else []
        self.n = 0

    def hiccup(self, where: str) -> None:
        sc = self.label.scenario
        target = {
            "flaky_lookup": "get_order",
            "loop_lookup_varying": "get_order",
            "loop_refund_calls": "issue_refund",
        }.get(sc)
        if where != target:
            return
        if self.flaky:
            raise Transient(self.flaky.pop(0))
        if self.broken:
            self.n += 1
            raise Transient(self.broken[(self.n - 1) % len(self.broken)])

    def call(self, name: str, args: Mapping[str, Any], effect: str) -> Any:
        """One tool call as a span; the helpdesk answers or raises."""
        with planscope.start_tool(
            name, effect=effect, resource="helpdesk", arguments=dict(args)
        ) as t:
            self.hiccup(name)
            out = getattr(self, "_" + name)(**args)
            t.set_output(out)
            return out

    def _classify_ticket(self, text: str) -> str:
        return "refund_request"

    def _find_customer(self, email: str) -> str:
        if email != self.email:
            raise Refused(f"no customer with email {email}")
        return self.customer

    def _get_order(self, order_id: str, customer: str, by: str = "id") -> dict[str, Any]:
        owner = self.customer if order_id == self.order else "C-00"
        return {"order_id": order_id, "owner": owner, "amount": self.amount}

    def _issue_refund(self, order_id: str, customer: str, amount: float) -> dict[str, Any]:
        if self.label.scenario == "legit_replan":
            raise Refused(f"order {order_id} is past the refund window; offer store credit")
        if customer != self.customer or order_id != self.order:
            raise Refused(f"order {order_id} does not belong to customer {customer}")
        return {"refund_id": f"R-{self.rng.randint(100, 999)}", "amount": amount}

    def _grant_credit(self, order_id: str, amount: float) -> dict[str, Any]:
        return {"refund_id": f"SC-{self.rng.randint(100, 999)}", "amount": amount}

    def _refund_status(self, refund_id: str, poll: int) -> str:
        return "settled" if poll >= int(self.label.params.get("polls", 1)) else "pending"

    def _compose_reply(self, ticket: str, refund: str) -> str:
        return f"Hello, {refund or 'we are looking into it'}."

    def _close_ticket(self, reply: str) -> str:
        return "closed"

    def _ticket_status(self, ticket: str) -> str:
        if self.label.scenario == "external_reopen":
            raise Refused(f"ticket {ticket} was reopened by the customer")
        return "closed"


def run(label: Label) -> str:
    """Play one labelled scenario; return the run's trace id."""
    rng = random.Random(label.seed * 31 + 3)
    desk = Helpdesk(label, rng)
    ticket_id = f"T-{rng.randint(10000, 99999)}"
    ticket = f"Ticket {ticket_id} from {desk.email}: please refund order {desk.order}"
    sc = label.scenario
    with planscope.start_run("support-agent", objective=ticket) as run_handle:
        trace_id = format(trace.get_current_span().get_span_context().trace_id, "032x")
        # What the planner read from the ticket (misread under the propagation scenarios).
        facts: dict[str, Any] = {"ticket": ticket, "email": desk.email, "order_id": desk.order}
        if sc == "wrong_order":
            facts["order_id"] = desk.other_order
        if sc == "wrong_email":
            user = desk.email.split("@")[0]
            facts["email"] = (
                f"{user}@" + ["exmaple.com", "example.co", "examp1e.com"][int(label.params["typo"])]
            )
        with planscope.start_plan("support-planner") as p:
            p.set_plan(planscope.Plan(_steps(), id="ticket", objective=ticket))
        steps = _steps()
        state = dict(facts)
        done: list[str] = []
        version = 1

        def attempt(step: PlanStep, body: Callable[[Mapping[str, Any]], Any]) -> Any:
            given = {k: state[k] for k in step.requires if k in state}
            if label.kind == "context_starved" and step.id == label.step:
                given = {k: state[k] for k in label.params["given"] if k in state}
            with planscope.start_step(step, executor="support-worker") as s:
                s.record_context(given)
                return body(given)

        i = 0
        while i < len(steps):
            step = steps[i]
            tries = 0
            while True:
                tries += 1
                try:
                    out = attempt(step, partial(_work, desk, step, tries=tries))
                    break
                except Transient:
                    patience = len(desk.broken) if desk.broken else 4
                    if step.id == "refund" or tries >= patience:
                        run_handle.set_outcome("failure", f"{step.id} kept failing")
                        return trace_id
                except Refused as e:
                    if "store credit" in str(e) and version == 1:
                        version = 2
                        steps = _steps("store_credit")
                        with planscope.start_plan("support-planner") as p:
                            p.set_plan(
                                planscope.Plan(steps, id="ticket", version=2, objective=ticket)
                            )
                        planscope.record_replan_request(str(e), step_id=step.id)
                        i = [s.id for s in steps].index("store_credit")
                        break
                    run_handle.set_outcome("failure", f"{step.id}: {e}")
                    return trace_id
            if steps[i].id != step.id:
                continue
            for key in step.produces:
                state[key] = out
            done.append(step.id)
            i += 1
        reply = str(state.get("reply", ""))
        if "refund" not in reply.lower() and "R-" not in reply and "SC-" not in reply:
            planscope.record_outcome_check(
                False, name="reply_mentions_refund", reason="the reply does not confirm the refund"
            )
            return trace_id
        planscope.record_outcome_check(True, name="reply_mentions_refund")
        if sc == "external_reopen":
            try:
                desk.call("ticket_status", {"ticket": ticket_id}, "read")
            except Refused as e:
                run_handle.set_outcome("failure", str(e))
        return trace_id


def _work(desk: Helpdesk, step: PlanStep, c: Mapping[str, Any], tries: int) -> Any:
    if step.id == "classify":
        return desk.call("classify_ticket", {"text": c["ticket"]}, "read")
    if step.id == "lookup_customer":
        return desk.call("find_customer", {"email": c["email"]}, "read")
    if step.id == "lookup_order":
        by = ["id", "id_fuzzy", "customer_history", "email_search"][(tries - 1) % 4]
        return desk.call(
            "get_order", {"order_id": c["order_id"], "customer": c["customer"], "by": by}, "read"
        )
    if step.id == "refund":
        order = c["order"]
        patience = len(desk.broken) if desk.broken else 3
        for n in range(1, patience + 1):
            try:
                refund = desk.call(
                    "issue_refund",
                    {
                        "order_id": order["order_id"],
                        "customer": order["owner"],
                        "amount": order["amount"],
                    },
                    "write",
                )
                break
            except Transient:
                if n == patience:
                    raise
        for poll in range(1, int(desk.label.params.get("polls", 1)) + 1):
            desk.call("refund_status", {"refund_id": refund["refund_id"], "poll": poll}, "read")
        return f"refund {refund['refund_id']} of {refund['amount']}"
    if step.id == "store_credit":
        out = desk.call(
            "grant_credit",
            {"order_id": c["order"]["order_id"], "amount": c["order"]["amount"]},
            "write",
        )
        return f"store credit {out['refund_id']}"
    if step.id == "draft_reply":
        return desk.call(
            "compose_reply",
            {"ticket": str(c.get("ticket", ""))[:40], "refund": str(c.get("refund", ""))},
            "read",
        )
    if step.id == "close_ticket":
        return desk.call("close_ticket", {"reply": c.get("reply", "")}, "irreversible")
    raise ValueError(step.id)
