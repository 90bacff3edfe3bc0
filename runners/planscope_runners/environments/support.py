"""Support desk on SQLite: customers, orders, tickets, refunds and an e-mail outbox.

``issue_refund`` and ``send_email`` are irreversible. ``add_note`` is a read-modify-write of a
customer's notes, so parallel notes on one customer lose an update.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Mapping
from typing import Any

from .._env import IRREVERSIBLE, READ, WRITE, Check, StepSpec, Task, Tool, read_modify_write_gap
from .._errors import ToolError

NAME = "support"

SCHEMA = """
CREATE TABLE customers (id TEXT PRIMARY KEY, email TEXT UNIQUE, name TEXT, tier TEXT,
                        notes TEXT NOT NULL DEFAULT '');
CREATE TABLE orders (id TEXT PRIMARY KEY, customer_id TEXT REFERENCES customers(id),
                     amount REAL, status TEXT);
CREATE TABLE tickets (id TEXT PRIMARY KEY, customer_id TEXT REFERENCES customers(id),
                      subject TEXT, status TEXT, priority TEXT, assignee TEXT);
CREATE TABLE refunds (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT UNIQUE, amount REAL);
CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, recipient TEXT, subject TEXT);
"""

CUSTOMERS = [
    ("c1", "ana@example.com", "Ana", "gold"),
    ("c2", "ben@example.com", "Ben", "silver"),
    ("c3", "chloe@example.com", "Chloe", "gold"),
    ("c4", "dev@example.com", "Dev", "bronze"),
    ("c5", "eve@example.com", "Eve", "silver"),
]
ORDERS = [
    ("o-100", "c1", 120.0, "delivered"),
    ("o-101", "c2", 35.5, "delivered"),
    ("o-102", "c3", 310.0, "damaged"),
    ("o-103", "c4", 18.0, "lost"),
    ("o-104", "c5", 64.0, "delivered"),
]


class SupportEnv:
    """A support desk in an in-memory SQLite database (one connection, one lock)."""

    name = NAME

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.lock = threading.Lock()
        self.db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self._tools = {t.name: t for t in self._build_tools()}

    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def reset(self, task: Task) -> None:
        with self.lock:
            for table in ("refunds", "outbox", "tickets", "orders", "customers"):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.executescript(SCHEMA)
            self.db.executemany(
                "INSERT INTO customers (id, email, name, tier) VALUES (?, ?, ?, ?)", CUSTOMERS
            )
            self.db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ORDERS)
            self.db.executemany(
                "INSERT INTO tickets VALUES (?, ?, ?, 'open', 'normal', '')",
                [(f"t-{c[0]}", c[0], f"help with order of {c[2]}") for c in CUSTOMERS],
            )
        task.setup(self)

    def close(self) -> None:
        self.db.close()

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """Run a SELECT (for success checks)."""
        with self.lock:
            return [dict(r) for r in self.db.execute(sql, params).fetchall()]

    # --- tools ----------------------------------------------------------------------------
    def _pause(self) -> None:
        if self.latency:
            time.sleep(self.latency)

    def _one(self, sql: str, *params: Any) -> dict[str, Any] | None:
        with self.lock:
            row = self.db.execute(sql, params).fetchone()
        return dict(row) if row is not None else None

    def find_customer(self, email: str) -> dict[str, Any]:
        self._pause()
        row = self._one("SELECT id, email, name, tier FROM customers WHERE email = ?", email)
        if row is None:
            raise ToolError(f"no customer with e-mail {email!r}")
        return row

    def get_order(self, order_id: str) -> dict[str, Any]:
        self._pause()
        row = self._one("SELECT * FROM orders WHERE id = ?", order_id)
        if row is None:
            raise ToolError(f"order {order_id!r} not found")
        return row

    def get_ticket(self, ticket_id: str) -> dict[str, Any]:
        self._pause()
        row = self._one("SELECT * FROM tickets WHERE id = ?", ticket_id)
        if row is None:
            raise ToolError(f"ticket {ticket_id!r} not found")
        return row

    def update_ticket(self, ticket_id: str, status: str, assignee: str = "") -> str:
        self._pause()
        with self.lock:
            cur = self.db.execute(
                "UPDATE tickets SET status = ?, assignee = CASE WHEN ? = '' THEN assignee "
                "ELSE ? END WHERE id = ?",
                (status, assignee, assignee, ticket_id),
            )
        if cur.rowcount == 0:
            raise ToolError(f"ticket {ticket_id!r} not found")
        return f"{ticket_id} -> {status}"

    def set_priority(self, ticket_id: str, priority: str) -> str:
        self._pause()
        with self.lock:
            cur = self.db.execute(
                "UPDATE tickets SET priority = ? WHERE id = ?", (priority, ticket_id)
            )
        if cur.rowcount == 0:
            raise ToolError(f"ticket {ticket_id!r} not found")
        return f"{ticket_id} priority {priority}"

    def add_note(self, customer_id: str, note: str) -> str:
        self._pause()
        row = self._one("SELECT notes FROM customers WHERE id = ?", customer_id)
        if row is None:
            raise ToolError(f"customer {customer_id!r} not found")
        read_modify_write_gap()  # parallel notes race here
        notes = (row["notes"] + "\n" + note).strip()
        with self.lock:
            self.db.execute("UPDATE customers SET notes = ? WHERE id = ?", (notes, customer_id))
        return notes

    def issue_refund(self, order_id: str, amount: float) -> str:
        self._pause()
        order = self._one("SELECT amount FROM orders WHERE id = ?", order_id)
        if order is None:
            raise ToolError(f"order {order_id!r} not found")
        if not isinstance(amount, (int, float)) or amount <= 0 or amount > order["amount"]:
            raise ToolError(f"refund amount {amount!r} is not within (0, {order['amount']}]")
        try:
            with self.lock:
                self.db.execute(
                    "INSERT INTO refunds (order_id, amount) VALUES (?, ?)", (order_id, amount)
                )
        except sqlite3.IntegrityError:
            raise ToolError(f"order {order_id!r} was already refunded") from None
        return f"refunded {amount} on {order_id}"

    def send_email(self, to: str, subject: str) -> str:
        self._pause()
        with self.lock:
            self.db.execute("INSERT INTO outbox (recipient, subject) VALUES (?, ?)", (to, subject))
        return f"sent to {to}"

    def _build_tools(self) -> list[Tool]:
        return [
            Tool(
                "find_customer",
                "Find a customer by e-mail",
                {"email": "string"},
                READ,
                lambda a: f"customer:{a.get('email')}",
                self.find_customer,
            ),
            Tool(
                "get_order",
                "Read an order",
                {"order_id": "string"},
                READ,
                lambda a: f"order:{a.get('order_id')}",
                self.get_order,
            ),
            Tool(
                "get_ticket",
                "Read a ticket",
                {"ticket_id": "string"},
                READ,
                lambda a: f"ticket:{a.get('ticket_id')}",
                self.get_ticket,
            ),
            Tool(
                "update_ticket",
                "Set a ticket's status (and optionally assignee)",
                {"ticket_id": "string", "status": "string", "assignee": "string"},
                WRITE,
                lambda a: f"ticket:{a.get('ticket_id')}",
                self.update_ticket,
                optional=("assignee",),
            ),
            Tool(
                "set_priority",
                "Set a ticket's priority",
                {"ticket_id": "string", "priority": "string"},
                WRITE,
                lambda a: f"ticket:{a.get('ticket_id')}",
                self.set_priority,
            ),
            Tool(
                "add_note",
                "Append a note to a customer record",
                {"customer_id": "string", "note": "string"},
                WRITE,
                lambda a: f"customer:{a.get('customer_id')}",
                self.add_note,
            ),
            Tool(
                "issue_refund",
                "Refund an order (cannot be undone)",
                {"order_id": "string", "amount": "number"},
                IRREVERSIBLE,
                lambda a: f"refund:{a.get('order_id')}",
                self.issue_refund,
            ),
            Tool(
                "send_email",
                "Send an e-mail to a customer (cannot be undone)",
                {"to": "string", "subject": "string"},
                IRREVERSIBLE,
                lambda a: f"email:{a.get('to')}",
                self.send_email,
            ),
        ]


# --- tasks ----------------------------------------------------------------------------------
def _noop(env: Any) -> None:
    return None


def refund_task(task_id: str, email: str, order_id: str, amount: float) -> Task:
    """A chain ending in two irreversible actions: refund, then e-mail."""
    cid = next(c[0] for c in CUSTOMERS if c[1] == email)

    def check(env: Any) -> Check:
        refunds = env.query("SELECT order_id, amount FROM refunds")
        if refunds != [{"order_id": order_id, "amount": amount}]:
            return Check(False, f"refunds {refunds}")
        ticket = env.query("SELECT status FROM tickets WHERE id = ?", f"t-{cid}")
        if ticket != [{"status": "resolved"}]:
            return Check(False, f"ticket t-{cid} is {ticket}")
        mails = env.query("SELECT recipient FROM outbox")
        return Check(mails == [{"recipient": email}], f"outbox {mails}")

    return Task(
        id=task_id,
        env=NAME,
        objective="Refund {amount} on order {order_id} for {email}, resolve the ticket, notify",
        facts={"email": email, "order_id": order_id, "amount": amount},
        misread={"amount": round(amount / 2, 2), "order_id": "o-101", "email": "ben@example.com"},
        steps=(
            StepSpec(
                "customer",
                "find the customer {email}",
                "find_customer",
                {"email": "{email}"},
                produces="customer",
            ),
            StepSpec(
                "order",
                "read order {order_id}",
                "get_order",
                {"order_id": "{order_id}"},
                ("customer",),
                produces="order",
            ),
            StepSpec(
                "refund",
                "refund {amount} on {order_id}",
                "issue_refund",
                {"order_id": "{order_id}", "amount": "{amount}"},
                ("order",),
                executor="payments",
            ),
            StepSpec(
                "resolve",
                "resolve the customer's ticket",
                "update_ticket",
                {"ticket_id": "t-{$customer.id}", "status": "resolved"},
                ("refund",),
                executor="desk",
            ),
            StepSpec(
                "notify",
                "e-mail {email} about the refund",
                "send_email",
                {"to": "{email}", "subject": "Your refund on {order_id}"},
                ("resolve",),
                executor="mailer",
            ),
        ),
        setup=_noop,
        check=check,
        shape="chain",
    )


def triage_task(task_id: str, emails: list[str], priority: str, assignee: str) -> Task:
    """Wide: look up several customers in parallel, then set priority and assignee on each."""
    cids = [next(c[0] for c in CUSTOMERS if c[1] == e) for e in emails]

    def check(env: Any) -> Check:
        rows = env.query("SELECT id, priority, assignee, status FROM tickets ORDER BY id")
        for row in rows:
            targeted = row["id"] in {f"t-{c}" for c in cids}
            want = (priority, assignee, "triaged") if targeted else ("normal", "", "open")
            got = (row["priority"], row["assignee"], row["status"])
            if got != want:
                return Check(False, f"ticket {row['id']}: {got} != {want}")
        return Check(True)

    steps: list[StepSpec] = []
    for i, email in enumerate(emails):
        steps.append(
            StepSpec(
                f"find_{i}",
                f"find customer {email}",
                "find_customer",
                {"email": email},
                produces=f"cust_{i}",
                executor=f"desk-{i % 2}",
            )
        )
        steps.append(
            StepSpec(
                f"prio_{i}",
                "set ticket priority to {priority}",
                "set_priority",
                {"ticket_id": f"t-{{$cust_{i}.id}}", "priority": "{priority}"},
                (f"find_{i}",),
                executor=f"desk-{i % 2}",
            )
        )
        steps.append(
            StepSpec(
                f"assign_{i}",
                "assign the ticket to {assignee}",
                "update_ticket",
                {"ticket_id": f"t-{{$cust_{i}.id}}", "status": "triaged", "assignee": "{assignee}"},
                (f"prio_{i}",),
                executor=f"desk-{i % 2}",
            )
        )
    return Task(
        id=task_id,
        env=NAME,
        objective=f"Triage the tickets of {', '.join(emails)}: priority {{priority}}, "
        "assign to {assignee}",
        facts={"priority": priority, "assignee": assignee},
        misread={"priority": "low", "assignee": "nobody"},
        steps=tuple(steps),
        setup=_noop,
        check=check,
        shape="wide",
    )


def notes_task(task_id: str, email: str, notes: list[str], order_id: str) -> Task:
    """Two writers of one customer record (serialised by an edge), a read in parallel."""
    cid = next(c[0] for c in CUSTOMERS if c[1] == email)

    def check(env: Any) -> Check:
        got = env.query("SELECT notes FROM customers WHERE id = ?", cid)[0]["notes"]
        want = "\n".join(notes)
        if got != want:
            return Check(False, f"notes {got!r} != {want!r}")
        ticket = env.query("SELECT status FROM tickets WHERE id = ?", f"t-{cid}")[0]
        return Check(ticket["status"] == "pending", f"ticket status {ticket['status']}")

    return Task(
        id=task_id,
        env=NAME,
        objective="Record the call with {email} in two notes, check order {order_id}, "
        "set the ticket pending",
        facts={"email": email, "order_id": order_id},
        misread={"email": "dev@example.com", "order_id": "o-103"},
        steps=(
            StepSpec(
                "customer",
                "find the customer {email}",
                "find_customer",
                {"email": "{email}"},
                produces="customer",
            ),
            StepSpec(
                "note_a",
                "add the first note",
                "add_note",
                {"customer_id": "{$customer.id}", "note": notes[0]},
                ("customer",),
                executor="notes-a",
            ),
            StepSpec(
                "note_b",
                "add the second note",
                "add_note",
                {"customer_id": "{$customer.id}", "note": notes[1]},
                ("note_a",),
                executor="notes-b",
            ),
            StepSpec(
                "order",
                "read order {order_id}",
                "get_order",
                {"order_id": "{order_id}"},
                ("customer",),
                produces="order",
            ),
            StepSpec(
                "pending",
                "set the ticket pending",
                "update_ticket",
                {"ticket_id": "t-{$customer.id}", "status": "pending"},
                ("note_b", "order"),
                executor="desk",
            ),
        ),
        setup=_noop,
        check=check,
        shape="diamond",
    )


def escalate_task(task_id: str, ticket_id: str, assignee: str) -> Task:
    """A short chain: read a ticket, escalate it, tell the customer."""
    cid = ticket_id.removeprefix("t-")
    email = next(c[1] for c in CUSTOMERS if c[0] == cid)

    def check(env: Any) -> Check:
        row = env.query("SELECT priority, assignee FROM tickets WHERE id = ?", ticket_id)[0]
        if (row["priority"], row["assignee"]) != ("urgent", assignee):
            return Check(False, f"ticket {row}")
        mails = env.query("SELECT recipient, subject FROM outbox")
        want = [{"recipient": email, "subject": f"Ticket {ticket_id} escalated"}]
        return Check(mails == want, f"outbox {mails}")

    return Task(
        id=task_id,
        env=NAME,
        objective="Escalate ticket {ticket_id} to {assignee} and notify the customer",
        facts={"ticket_id": ticket_id, "assignee": assignee},
        misread={"assignee": "tier1", "ticket_id": "t-c2"},
        steps=(
            StepSpec(
                "ticket",
                "read ticket {ticket_id}",
                "get_ticket",
                {"ticket_id": "{ticket_id}"},
                produces="ticket",
            ),
            StepSpec(
                "urgent",
                "set {ticket_id} urgent",
                "set_priority",
                {"ticket_id": "{ticket_id}", "priority": "urgent"},
                ("ticket",),
            ),
            StepSpec(
                "assign",
                "assign {ticket_id} to {assignee}",
                "update_ticket",
                {"ticket_id": "{ticket_id}", "status": "escalated", "assignee": "{assignee}"},
                ("urgent",),
            ),
            StepSpec(
                "tell",
                "e-mail the customer",
                "send_email",
                {"to": email, "subject": "Ticket {ticket_id} escalated"},
                ("assign",),
                executor="mailer",
            ),
        ),
        setup=_noop,
        check=check,
        shape="chain",
    )


TASKS: tuple[Task, ...] = (
    refund_task("support-refund-ana", "ana@example.com", "o-100", 120.0),
    refund_task("support-refund-chloe", "chloe@example.com", "o-102", 310.0),
    refund_task("support-refund-dev", "dev@example.com", "o-103", 18.0),
    triage_task("support-triage-pair", ["ana@example.com", "eve@example.com"], "high", "maria"),
    triage_task(
        "support-triage-wide",
        ["ana@example.com", "ben@example.com", "chloe@example.com", "dev@example.com"],
        "high",
        "omar",
    ),
    notes_task(
        "support-notes-ben",
        "ben@example.com",
        ["called about delay", "promised update by friday"],
        "o-101",
    ),
    notes_task(
        "support-notes-eve", "eve@example.com", ["asked for invoice copy", "sent invoice"], "o-104"
    ),
    escalate_task("support-escalate-c3", "t-c3", "lead-kim"),
    escalate_task("support-escalate-c4", "t-c4", "lead-raj"),
    escalate_task("support-escalate-c5", "t-c5", "lead-sam"),
)
