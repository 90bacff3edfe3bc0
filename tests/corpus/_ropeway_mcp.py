"""The cable-car operator's MCP server for :mod:`tests.corpus.ropeway`: a ``FastMCP`` server
whose ``@mcp.tool()`` functions are the operator's back-office services, run by the app as a
separate process over stdio (``python _ropeway_mcp.py``, one process per job).

Run as a script, not as ``-m tests.corpus...``: importing the corpus package imports every agent
(seconds); this file imports only ``mcp``, so ``ropeway`` imports its work order from here but
nothing here imports the corpus. The server is not traced (the team traces its app, not the
back-office bridge); the job's scenario comes in ``ROPEWAY_JOB`` (the world's faults; no model,
no network).

A service that fails **raises** a :class:`Signal`, the ropeway's control-room signal words:
FastMCP turns it into a ``CallToolResult`` with ``isError=True`` and ``Error executing tool
{tool}: {text}``; the text is ``<WORD>: <what happened>`` and for some words `` -- <hint>``:
``SLACK: ... -- resume HH:MM`` (call again at that time), ``SWAY: ...`` (the step is to be run
again), ``DIVERT: ... -- use key=value`` (the plan has to change), ``DEROPE: ...`` (final).
"""

from __future__ import annotations

import json
import os
from typing import Any

WORK_ORDER: dict[str, Any] = {
    "order": "WO-2231",
    "line": "Red line",
    "cabin": "C07",
    "rope": "52 mm 6x36 haul rope",
    "station": "Harbour",
    "window": "2027-04-11",
    "crane": "Tadano ATF-70 (Harbour Cranes)",
    "budget": "MNT-4712-R",
    "parts": 18450.0,
    "commuters": "red-line-alerts",
}
RATED = {"Red line": "52 mm", "Blue line": "40 mm", "Green line": "46 mm"}
"""The haul rope each line runs (a splicer is certified for one rope)."""


class Signal(RuntimeError):
    """A service's refusal as a control-room signal; its text is what the client reads."""

    def __init__(self, word: str, text: str, hint: str = "") -> None:
        super().__init__(f"{word}: {text}" + (f" -- {hint}" if hint else ""))


class World:
    """The contractor list, the regulator, the crane hire, the ledger and the notice board of
    one job."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.scenario = str(job["scenario"])
        self.seed = int(job["seed"])
        self.params: dict[str, Any] = dict(job["params"])
        self.faults = [dict(f) for f in self.params.get("faults", ())]
        self.splicers: dict[str, str] = {}
        self.applications: dict[str, int] = {}
        self.bookings: dict[str, dict[str, str]] = {}
        self.reads = 0

    def fault(self, tool: str) -> None:
        """Raise the scenario's next signal when ``tool`` is the one it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        hint = f"resume {f['resume']}" if "resume" in f else ""
        if "use" in f:
            hint = f"use {f['use']}"
        raise Signal(f["signal"], f["text"], hint)

    def list_contractors(self, line: str, trade: str, page: int = 1) -> dict[str, Any]:
        self.fault("list_contractors")
        if page < int(self.params.get("pages", 1)):
            busy = [
                {"contractor": f"SPL-{page}{n}", "trade": trade, "free_from": f"2027-0{n + 5}-01"}
                for n in (1, 2, 3)
            ]
            return {"available": [], "busy": busy, "next_page": page + 1}
        name = f"SPL-{line.split()[0].upper()}-{self.seed % 1000:03d}"
        self.splicers[name] = line
        rope = RATED.get(line, "unknown")
        return {"available": [{"contractor": name, "trade": trade, "certified_rope": rope}]}

    def apply_for_approval(self, splicer: str, cabin: str) -> dict[str, Any]:
        self.fault("apply_for_approval")
        line = self.splicers.get(splicer, "")
        if line != WORK_ORDER["line"]:
            raise Signal(
                "DEROPE",
                f"the regulator refuses the splice: {splicer} is certified for the "
                f"{RATED.get(line, 'unknown')} rope of the {line or 'unknown line'}, cabin "
                f"{cabin} runs on the {WORK_ORDER['line']}'s {WORK_ORDER['rope']}",
            )
        application = f"RA-{self.seed}-{len(self.applications) + 1}"
        self.applications[application] = 0
        if "polls" in self.params or self.scenario == "loop_poll_stuck":
            return {"application": application, "state": "under_review"}
        return {"id": application, "state": "approved"}

    def approval_status(self, application: str) -> dict[str, Any]:
        self.applications[application] += 1
        stuck = self.scenario == "loop_poll_stuck"
        if stuck or self.applications[application] < int(self.params.get("polls", 0)):
            return {"application": application, "state": "under_review"}
        return {"id": application, "state": "approved"}

    def book_crane(
        self, crane: str, station: str, window: str, resume: str | None = None
    ) -> dict[str, Any]:
        self.fault("book_crane")
        other = self.params.get("crane_to")
        if other and crane == WORK_ORDER["crane"]:
            raise Signal(
                "DIVERT", f"{crane} is out for its own load test that week", f"use crane={other}"
            )
        booking = f"CR-{station[:3].upper()}-{len(self.bookings) + 1}"
        self.bookings[booking] = {"crane": crane, "station": station, "day": window}
        return {"id": booking, "crane": crane, "day": window, "from": resume or "05:30"}

    def charge_budget(
        self, budget: str, amount: float, reference: str, resume: str | None = None
    ) -> dict[str, Any]:
        self.fault("charge_budget")
        if budget != WORK_ORDER["budget"] and budget not in self.params.get("budgets", ()):
            raise Signal("DEROPE", f"the ledger holds no budget code {budget} to charge {amount}")
        return {"id": f"JE-{self.seed}-{reference[-4:]}", "budget": budget, "amount": amount}

    def notify_commuters(
        self,
        channel: str,
        window: str,
        crane_booking: str,
        approval: str,
        resume: str | None = None,
    ) -> dict[str, Any]:
        self.fault("notify_commuters")
        return {"id": f"NOTICE-{crane_booking}", "channel": channel, "sent": resume or "now"}

    def crane_booking(self, booking: str) -> dict[str, Any]:
        return {"id": booking} | self.bookings[booking]

    def line_status(self, line: str) -> dict[str, Any]:
        self.reads += 1
        if self.scenario.startswith("external_") and self.reads > int(self.params["reads"]):
            return {"line": line, "state": "closed: a thunderstorm warning stops every cabin"}
        return {"line": line, "state": "running"}


TOOLS = {
    "list_contractors": "Certified contractors of a trade for a line, a page at a time.",
    "apply_for_approval": "Apply to the safety regulator to approve a rope splice.",
    "approval_status": "Whether the regulator has approved an application yet.",
    "book_crane": "Book a mobile crane at a station for the maintenance window.",
    "charge_budget": "Charge parts to a maintenance budget code.",
    "notify_commuters": "Post the closure notice to the commuters' alert channel.",
    "crane_booking": "A crane booking's crane, station and day.",
    "line_status": "Whether a line is running.",
}
"""The operator's services (the ``World`` methods served) and their descriptions."""


def main() -> None:
    """Serve one job's world over stdio until the client closes it."""
    from mcp.server.fastmcp import FastMCP

    world = World(json.loads(os.environ["ROPEWAY_JOB"]))
    server = FastMCP("ropeway-back-office")
    for name, description in TOOLS.items():
        server.add_tool(getattr(world, name), name=name, description=description)
    server.run("stdio")


if __name__ == "__main__":
    main()
