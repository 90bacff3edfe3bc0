"""A food bank's weekly distribution, a hand-written planner-executor app calling a model through
the **Cohere Python SDK v2** (``cohere.ClientV2(base_url=...)``, ``client.chat(model=...,
messages=..., tools=[...])``, Cohere's own tool-call and tool-result messages: the answer's
``message.tool_plan`` and ``message.tool_calls``, sent back as an ``assistant`` message and one
``role: "tool"`` message per call with its ``tool_call_id``) traced by **OpenLLMetry's Cohere
instrumentor** (``CohereInstrumentor().instrument(tracer_provider=..., skip_dep_check=True)``:
a ``cohere.chat`` span per call, content captured as its default), plus the app's own plain
OpenTelemetry spans where a Cohere user adds them (scope ``pantry-app``: the distribution's
root, a plan span per revision, a span per job attempt, a span per tool function the app runs
for the model, a check and a watch), against a scripted model on the corpus's fake Cohere server
(:class:`tests.corpus._fake_cohere.CohereServer`). No planscope code.

The instrumentor 0.62.4 declares ``cohere >=4.2.7, <6`` and, asked plainly, instruments nothing
beside cohere 7.3.1 (it logs the conflict); its wrappers of ``ClientV2.chat`` work on 7.3.1, so
the app skips the dependency check, as a team on the current SDK would.

Sealed-64 split only (see README.md). The task: Eastgate Community Pantry's weekly distribution;
find a donor offering the week's food in the pantry's collection area (an offers board read page
by page), reserve a cold-storage slot for the donor's pallets at the warehouse (a slot request,
polled), book the volunteer shift for the distribution day, book the delivery route's van, pay
the van's hire from a grant fund, notify the partner agencies.

* the planner answers the plan as **a GitHub Actions-style YAML workflow**: a ``jobs:`` map keyed
  by job id, each job with ``needs: [...]``, ``uses: <tool>`` and ``with: {key: value}``, where
  ``${{ jobs.<id>.outputs.result }}`` (or ``.outputs.<field>``) stands for an earlier job's
  output; the app parses it with PyYAML and runs the jobs in the order their ``needs`` allow
  (ties in the order written). After a setback the planner answers a new workflow of the jobs
  still to do (``run-name`` counting the revision), its references to done jobs kept;
* the executor is one Cohere conversation per job attempt, handed the job as YAML with the
  outputs filled in and its tools; the app runs the tool calls the model asks for itself and
  reads a **conclusion block** (``conclusion: success|rerun|replan|failure|timed_out``,
  ``output: ...``, ``note: ...`` lines);
* the pantry's services answer failures the app hands the model as the tool's result,
  ``{"ok": false, "reason": ..., "detail": ...}``: ``hold`` (call again ``after`` the
  ``retry_at`` time, in the same conversation), ``retry`` (the app runs the job again, up to 8
  attempts), ``reassign`` (``(use key=value)``: a new plan, up to 4 plans), ``declined`` (final).

The planner trusts the coordinator's notes over the distribution sheet: the scenario's wrong
value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import cohere
import yaml
from opentelemetry.instrumentation.cohere import CohereInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from ._fake_cohere import MODEL, CohereServer
from ._labels import Label

SHEET: dict[str, Any] = {
    "pantry": "Eastgate Community Pantry",
    "week": "2027-W23",
    "food": "chilled dairy",
    "pallets": 6,
    "area": "eastgate",
    "warehouse": "Hollins Road cold store",
    "day": "2027-06-12",
    "volunteers": 14,
    "van": "luton-3.5t",
    "fund": "GF-2291-CF",
    "amount": 240,
    "email": "partners@eastgate-pantry.example.org",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 4
MAX_TURNS = 24
MAX_READS = 12
"""Slot-status reads in one conversation before the executor reports the request timed out."""
APP_TRACER = "pantry-app"
PLANNER = (
    "You plan a food bank's weekly distribution. Answer a GitHub Actions-style YAML workflow: "
    "a jobs map keyed by job id, each job with needs, uses (the tool) and with (its arguments); "
    "write ${{ jobs.<id>.outputs.result }} for an earlier job's output."
)
EXECUTOR = (
    "You run one job of the pantry's workflow with your tools, then answer three lines: "
    "conclusion: <success|rerun|replan|failure|timed_out>, output: <value>, note: <text>."
)
CONCLUSIONS = ("success", "rerun", "replan", "failure", "timed_out")


class Declined(RuntimeError):
    """A service's refusal the app itself raises (a tool the job was not given)."""


class DistributionFailed(RuntimeError):
    """The week's distribution could not be arranged, or went wrong after (the reason is the
    message)."""


# --- the plan's format --------------------------------------------------------------------
_REF = re.compile(r"\$\{\{\s*jobs\.(\w+)\.outputs\.(\w+)\s*\}\}")


@dataclass(frozen=True)
class Job:
    """One job of the workflow."""

    id: str
    name: str
    uses: str
    needs: tuple[str, ...]
    args: dict[str, Any]
    """Literal values, or strings holding ``${{ jobs.<id>.outputs.<field> }}``."""


@dataclass
class Workflow:
    """The planner's workflow: its name, run name and jobs in the order written."""

    name: str
    run_name: str
    jobs: list[Job]

    def order(self, done: set[str] | frozenset[str] = frozenset()) -> list[Job]:
        """The jobs in the order their ``needs`` allow, ties in the order written; a need on a
        job in ``done`` (run under an earlier workflow) is met.

        >>> wf = parse_workflow("jobs:\\n  b: {uses: t, needs: [a]}\\n  a: {uses: t}\\n")
        >>> [j.id for j in wf.order()]
        ['a', 'b']
        """
        out: list[Job] = []
        while len(out) < len(self.jobs):
            placed = {j.id for j in out} | set(done)
            ready = [j for j in self.jobs if j not in out and set(j.needs) <= placed]
            if not ready:
                raise ValueError("the workflow's needs form a cycle or name no job")
            out.append(ready[0])
        return out


def parse_workflow(text: str) -> Workflow:
    """The workflow from the planner's answer (a fenced ``yaml`` block or the bare document).

    >>> wf = parse_workflow('''```yaml
    ... name: weekly distribution
    ... jobs:
    ...   find_donation:
    ...     uses: search_donations
    ...     with:
    ...       area: eastgate
    ...       pallets: 6
    ...   reserve_cold:
    ...     needs: [find_donation]
    ...     uses: request_cold_slot
    ...     with:
    ...       donation: ${{ jobs.find_donation.outputs.result }}
    ... ```''')
    >>> [(j.id, j.uses, j.needs, j.args) for j in wf.order()][1]
    ('reserve_cold', 'request_cold_slot', ('find_donation',), {'donation': '${{ jobs.find_donation.outputs.result }}'})
    """  # noqa: E501
    fenced = re.search(r"```(?:ya?ml)?\n(.*?)```", text, re.DOTALL)
    doc = yaml.safe_load(fenced.group(1) if fenced else text)
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
        raise ValueError("the plan is not a workflow with a jobs map")
    jobs = []
    for job_id, spec in doc["jobs"].items():
        spec = spec or {}
        needs = spec.get("needs") or []
        args = {
            # PyYAML reads an unquoted date as a date: arguments travel as the text written
            str(k): v if isinstance(v, int) else str(v)
            for k, v in (spec.get("with") or {}).items()
        }
        jobs.append(
            Job(
                str(job_id),
                str(spec.get("name", job_id)),
                str(spec.get("uses", "")),
                tuple(str(n) for n in ([needs] if isinstance(needs, str) else needs)),
                args,
            )
        )
    return Workflow(str(doc.get("name", "")), str(doc.get("run-name", "")), jobs)


def _scalar(value: Any) -> str:
    if isinstance(value, int) or _REF.fullmatch(str(value)):
        return str(value)
    if re.fullmatch(r"[A-Za-z][\w-]*", str(value)) and str(value).lower() not in (
        "yes", "no", "on", "off", "true", "false", "null",
    ):  # fmt: skip
        return str(value)
    return json.dumps(str(value))


def render(job: Job, outputs: dict[str, dict[str, str]] | None = None) -> str:
    """A job as its YAML block; with ``outputs``, the earlier jobs' outputs filled in.

    >>> job = Job("pay_route", "Pay the van", "pay_van_hire", ("book_route",),
    ...     {"route": "${{ jobs.book_route.outputs.result }}", "amount": 240})
    >>> print(render(job, {"book_route": {"result": "RT-17"}}))
    pay_route:
      name: "Pay the van"
      needs: [book_route]
      uses: pay_van_hire
      with:
        route: RT-17
        amount: 240
    """

    def fill(value: Any) -> Any:
        if outputs is None or not isinstance(value, str):
            return value
        return _REF.sub(lambda m: outputs.get(m[1], {}).get(m[2], m[0]), value)

    lines = [f"{job.id}:", f"  name: {json.dumps(job.name)}"]
    if job.needs:
        lines.append(f"  needs: [{', '.join(job.needs)}]")
    lines += [f"  uses: {job.uses}", "  with:"]
    lines += [f"    {k}: {_scalar(fill(v))}" for k, v in job.args.items()]
    return "\n".join(lines)


# --- the scripted model -------------------------------------------------------------------
def _ref(job: str, name: str = "result") -> str:
    return "${{ jobs.%s.outputs.%s }}" % (job, name)  # noqa: UP031 (braces in the text)


def _plan_text(brief: str) -> str:
    """The planner's answer: the distribution sheet, the coordinator's notes trusted over it;
    after a ``(use key=value)`` setback that value; the jobs still to do."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Distribution sheet"]) | json.loads(
        lines.get("Coordinator's notes", "{}")
    )
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    donation = _ref("find_donation")
    jobs = [
        Job("find_donation", "Find a donor offering the week's food", "search_donations", (),
            {"food": facts["food"], "area": facts["area"], "pallets": facts["pallets"]}),
        Job("reserve_cold", "Reserve a cold-storage slot for the pallets", "request_cold_slot",
            ("find_donation",),
            {"donation": donation, "warehouse": facts["warehouse"], "pallets": facts["pallets"]}),
        Job("book_shift", "Book the volunteers' distribution shift", "book_volunteer_shift",
            ("reserve_cold",),
            {"day": facts["day"], "warehouse": facts["warehouse"],
             "volunteers": facts["volunteers"]}),
        Job("book_route", "Book the delivery route's van", "book_delivery_route",
            ("find_donation", "book_shift"),
            {"donation": donation, "shift": _ref("book_shift"), "van": facts["van"]}),
        Job("pay_route", "Pay the van's hire from the grant fund", "pay_van_hire",
            ("book_route",),
            {"route": _ref("book_route"), "fund": facts["fund"], "amount": facts["amount"]}),
        Job("notify_agencies", "Tell the partner agencies", "send_partner_notice",
            ("reserve_cold", "book_shift", "book_route"),
            {"email": facts["email"], "day": facts["day"], "dock": _ref("reserve_cold", "dock"),
             "shift": _ref("book_shift"), "route": _ref("book_route")}),
    ]  # fmt: skip
    revision = int(lines.get("Revision", 1))
    head = [
        f"name: weekly distribution {facts['week']}",
        f'run-name: "revision {revision}"',
        "on: workflow_dispatch",
        "jobs:",
    ]
    body = [
        "  " + line
        for job in jobs
        if job.id not in done
        for line in render(Job(job.id, job.name, job.uses, job.needs, job.args)).splitlines()
    ]
    return "```yaml\n" + "\n".join(head + body) + "\n```"


def _tool_call(job: str, n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call_id = f"{job}_{n:02d}_{name}"
    return {
        "tool_plan": f"I will call {name}.",
        "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }  # fmt: skip


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _executor(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The executor's next turn: make the job's call, call again ``after`` a hold, follow
    ``next_page``, read a queued slot request, answer the conclusion block."""
    block = order.split("\n", 1)[1]
    (job,) = parse_workflow("jobs:\n" + "\n".join("  " + x for x in block.splitlines())).jobs
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            asked[str(c.get("id"))] = (str(fn.get("name")), json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool":
            # Cohere's tool messages answer a call by its id
            name, args = asked[str(m.get("tool_call_id"))]
            calls.append((name, args, json.loads(str(m.get("content") or "{}"))))

    def conclude(word: str, output: str = "", note: str = "") -> dict[str, Any]:
        return _text(f"conclusion: {word}\noutput: {output}\nnote: {note}")

    if not calls:
        return _tool_call(job.id, 1, job.uses, job.args)
    name, called, answer = calls[-1]
    n = len(calls) + 1
    if answer.get("ok") is False:
        reason, detail = answer.get("reason"), answer.get("detail", "")
        if reason == "hold":
            return _tool_call(job.id, n, name, called | {"after": answer["retry_at"]})
        word = {"retry": "rerun", "reassign": "replan"}.get(str(reason), "failure")
        return conclude(word, note=f"{reason}: {detail}")
    if answer.get("next_page"):
        return _tool_call(job.id, n, name, called | {"page": answer["next_page"]})
    if answer.get("state") == "queued":
        reads = sum(c[0] == "cold_slot_status" for c in calls)
        if reads >= MAX_READS:
            return conclude("timed_out", note=f"slot request {answer['request']} still queued")
        return _tool_call(job.id, n, "cold_slot_status", {"request": answer["request"]})
    return conclude("success", str(answer["ref"]), str(answer.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's message for one ``/v2/chat`` request body.

    >>> brief = "Distribution sheet: " + json.dumps(SHEET)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> [j.id for j in parse_workflow(msg["content"][0]["text"]).order()][:3]
    ['find_donation', 'reserve_cold', 'book_shift']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return _text(_plan_text(user))
    return _executor(messages, user)


# --- the pantry's services ----------------------------------------------------------------
class Refusal(Exception):
    """A service's failure; ``answer`` is what the model is told."""

    def __init__(self, reason: str, detail: str, retry_at: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.answer: dict[str, Any] = {"ok": False, "reason": reason, "detail": detail}
        if retry_at:
            self.answer["retry_at"] = retry_at


@dataclass
class World:
    """The donations board, cold store, volunteer rota, van pool, grant ledger and mail of one
    week."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    donations: dict[str, str] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    shifts: list[dict[str, Any]] = field(default_factory=list)
    routes: list[dict[str, str]] = field(default_factory=list)
    payments: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, job: str) -> None:
        """Raise the scenario's next fault when ``job`` is the one it targets."""
        if not self.faults or job != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["kind"] == "hold":
            raise Refusal("hold", f["text"], f["hint"])
        if f["kind"] == "reassign":
            raise Refusal("reassign", f"{f['text']} (use {f['hint']})")
        raise Refusal(f["kind"], f["text"])

    # the tools: keyword arguments as the model sends them; a dict back, or a Refusal
    def search_donations(
        self, food: str, area: str, pallets: int, page: int = 1, after: str = ""
    ) -> dict[str, Any]:
        """Donor offers of a food in a collection area, a page of the offers board at a time."""
        self.fault("find_donation")
        code = area[:3].upper()
        if page < int(self.params.get("pages", 1)):
            taken = [f"OFF-{code}-{page * 10 + n} (claimed)" for n in (1, 2, 3)]
            return {"offers": [], "claimed": taken, "next_page": page + 1}
        offer = f"OFF-{code}-{self.label.seed % 1000}"
        self.donations[offer] = area
        return {"ref": offer, "area": area, "pallets": pallets, "food": food}

    def request_cold_slot(
        self, donation: str, warehouse: str, pallets: int, after: str = ""
    ) -> dict[str, Any]:
        """Ask the cold store for a slot for a donation's pallets (allocated by a queued job)."""
        self.fault("reserve_cold")
        area = self.donations.get(donation, "")
        if area != SHEET["area"]:
            raise Refusal(
                "declined",
                f"the cold chain from {donation} ({area or 'unknown area'}) is over the "
                f"{warehouse}'s 40-minute limit; it takes {SHEET['area']} donors only",
            )
        request = f"SLOT-{self.label.seed}-{len(self.requests) + 1}"
        self.requests[request] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"request": request, "state": "queued"}
        return {"ref": request, "state": "allocated", "dock": "D2"}

    def cold_slot_status(self, request: str, after: str = "") -> dict[str, Any]:
        """Whether the cold store has allocated a slot request yet."""
        self.requests[request] += 1
        if self.params.get("stuck") or self.requests[request] < int(self.params.get("polls", 0)):
            return {"request": request, "state": "queued"}
        return {"ref": request, "state": "allocated", "dock": "D2"}

    def book_volunteer_shift(
        self, day: str, warehouse: str, volunteers: int, after: str = ""
    ) -> dict[str, Any]:
        """Book a volunteer shift at the warehouse on a day."""
        self.fault("book_shift")
        ref = f"SHIFT-{day[5:7]}{day[8:]}-{self.label.seed % 97}"
        self.shifts.append({"shift": ref, "day": day, "volunteers": volunteers})
        return {"ref": ref, "day": day, "start": after or "08:00"}

    def book_delivery_route(
        self, donation: str, shift: str, van: str, after: str = ""
    ) -> dict[str, Any]:
        """Book a van of a size for the route from a donor to the warehouse for a shift."""
        self.fault("book_route")
        free = self.params.get("van_to")
        if free and van != free:
            raise Refusal("reassign", f"no {van} is free in the van pool that day (use van={free})")
        ref = f"RT-{self.label.seed % 900 + 100}"
        self.routes.append({"route": ref, "donation": donation, "shift": shift, "van": van})
        return {"ref": ref, "van": van}

    def pay_van_hire(self, route: str, fund: str, amount: int, after: str = "") -> dict[str, Any]:
        """Pay a route's van hire from a grant fund."""
        self.fault("pay_route")
        if fund != SHEET["fund"] and fund not in self.params.get("funds", ()):
            raise Refusal("declined", f"the grant ledger holds no fund {fund}")
        receipt = f"PAY-{self.label.seed}-{len(self.payments) + 1}"
        self.payments.append({"route": route, "fund": fund, "amount": amount})
        return {"ref": receipt, "amount": amount}

    def send_partner_notice(
        self, email: str, day: str, dock: str, shift: str, route: str, after: str = ""
    ) -> dict[str, Any]:
        """E-mail the partner agencies the distribution's day, dock, shift and route."""
        self.fault("notify_agencies")
        return {"ref": f"MAIL-{shift}", "to": email}


_INTEGERS = {"pallets", "volunteers", "amount", "page"}
_OPTIONAL = {"page", "after"}


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The tool's Cohere v2 function schema from its signature (every argument a string but
    counts)."""
    names = fn.__code__.co_varnames[1 : fn.__code__.co_argcount]
    props = {n: {"type": "integer" if n in _INTEGERS else "string"} for n in names}
    return {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": (fn.__doc__ or "").strip(),
            "parameters": {
                "type": "object",
                "properties": props,
                "required": [n for n in names if n not in _OPTIONAL],
            },
        },
    }


TOOLS = {
    "search_donations": ("search_donations",),
    "request_cold_slot": ("request_cold_slot", "cold_slot_status"),
    "book_volunteer_shift": ("book_volunteer_shift",),
    "book_delivery_route": ("book_delivery_route",),
    "pay_van_hire": ("pay_van_hire",),
    "send_partner_notice": ("send_partner_notice",),
}
"""The tools an executor gets for a job's ``uses``."""


# --- the app ------------------------------------------------------------------------------
@dataclass
class Distribution:
    """One week's distribution to arrange."""

    label: Label
    client: cohere.ClientV2
    tracer: Tracer
    world: World
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    plans: int = 0

    def brief(self, setback: str) -> str:
        notes = {k: self.label.params[k] for k in ("area", "day", "fund") if k in self.label.params}
        lines = [
            f"Objective: the {SHEET['week']} distribution of {SHEET['pantry']}.",
            f"Distribution sheet: {json.dumps(SHEET)}",
        ]
        if notes:
            lines.append(f"Coordinator's notes: {json.dumps(notes)}")
        if self.plans:
            done = {job: out["result"] for job, out in self.outputs.items()}
            lines += [
                f"Revision: {self.plans + 1}",
                f"Done: {json.dumps(done)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, setback: str) -> Workflow:
        with self.tracer.start_as_current_span(f"plan revision {self.plans + 1}") as span:
            span.set_attributes(
                {"pantry.plan.revision": self.plans + 1, "pantry.plan.setback": setback}
            )
            messages: list[Any] = [
                {"role": "system", "content": PLANNER},
                {"role": "user", "content": self.brief(setback)},
            ]
            response = self.client.chat(model=MODEL, messages=messages)
            self.plans += 1
            parts = response.message.content or []
            workflow = parse_workflow("".join(getattr(p, "text", "") for p in parts))
            span.set_attribute(
                "pantry.plan.jobs", [j.id for j in workflow.order(set(self.outputs))]
            )
            return workflow

    def run_tool(self, name: str, arguments: dict[str, Any], allowed: tuple[str, ...]) -> str:
        """Run one tool call the model asked for under the app's own span; its JSON answer."""
        with self.tracer.start_as_current_span(f"tool {name}") as span:
            span.set_attributes(
                {"pantry.tool": name, "pantry.tool.arguments": json.dumps(arguments)}
            )
            try:
                if name not in allowed:
                    raise Refusal("declined", f"no tool {name} for this job")
                answer = getattr(self.world, name)(**arguments)
            except Refusal as e:
                # the model is told what went wrong; the span keeps the error
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, str(e)))
                answer = e.answer
            out = json.dumps(answer)
            span.set_attribute("pantry.tool.result", out)
            return out

    def attempt(self, number: int, job: Job, attempt: int) -> tuple[str, str, str, dict[str, Any]]:
        """One executor conversation for a job: (conclusion, output, note, last tool answer)."""
        block = render(job, self.outputs)
        with self.tracer.start_as_current_span(f"job {job.id} attempt {attempt}") as span:
            span.set_attributes(
                {"pantry.job": job.id, "pantry.job.attempt": attempt, "pantry.job.spec": block}
            )
            allowed = TOOLS.get(job.uses, ())
            # plain dicts, as Cohere's docs write messages and tools (the SDK's annotations name
            # its pydantic models; the instrumentor reads a tool's schema with .get)
            messages: list[Any] = [
                {"role": "system", "content": EXECUTOR},
                {"role": "user", "content": f"Job {number} (attempt {attempt}):\n{block}"},
            ]
            tools: list[Any] = [_schema(getattr(World, n)) for n in allowed]
            text: str | None = None
            last: dict[str, Any] = {}
            for _ in range(MAX_TURNS):
                message = self.client.chat(model=MODEL, messages=messages, tools=tools).message
                if not message.tool_calls:
                    text = "".join(getattr(p, "text", "") for p in message.content or [])
                    break
                calls = [
                    (c.id, c.function.name or "", c.function.arguments or "{}")
                    for c in message.tool_calls
                    if c.function
                ]
                turn = [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                    for i, n, a in calls
                ]
                messages.append(
                    {"role": "assistant", "tool_plan": message.tool_plan, "tool_calls": turn}
                )
                for call_id, name, arguments in calls:
                    answer = self.run_tool(name, json.loads(arguments), allowed)
                    last = json.loads(answer)
                    messages.append({"role": "tool", "tool_call_id": call_id, "content": answer})
            read = dict(re.findall(r"^(conclusion|output|note):[ \t]*(.*)$", text or "", re.M))
            if text is None:
                word, output, note = "timed_out", "", f"no conclusion in {MAX_TURNS} turns"
            elif read.get("conclusion") not in CONCLUSIONS:
                word, output, note = "failure", "", f"unreadable conclusion: {text}"
            else:
                word, output, note = (
                    read["conclusion"],
                    read.get("output", ""),
                    read.get("note", ""),
                )
            span.set_attributes({"pantry.job.conclusion": word, "pantry.job.output": output})
            if word != "success":
                span.set_status(Status(StatusCode.ERROR, f"{word}: {note}"))
            return word, output, note, last

    def arrange(self) -> None:
        """Plan, run each job (again, or after a new plan), check, watch; raises
        :class:`DistributionFailed`."""
        workflow = self.plan("")
        while True:
            order = workflow.order(set(self.outputs))
            open_jobs = [j for j in order if j.id not in self.outputs]
            if not open_jobs:
                break
            job = open_jobs[0]
            number = len(self.outputs) + 1
            for attempt in range(1, MAX_ATTEMPTS + 1):
                word, output, note, last = self.attempt(number, job, attempt)
                if word != "rerun":
                    break
            if word == "success":
                # a job's outputs: its last tool answer's fields, the executor's output as result
                fields = {k: str(v) for k, v in last.items() if isinstance(v, str | int)}
                self.outputs[job.id] = fields | {"result": output}
            elif word == "replan" and self.plans < MAX_PLANS:
                workflow = self.plan(f"job {job.id}: {note}")
            else:
                raise DistributionFailed(f"{job.id}: {word}: {note}")
        self.check()
        self.watch()

    def check(self) -> None:
        """The app's own check: the volunteers' shift is on the distribution day."""
        with self.tracer.start_as_current_span("check volunteer shift") as span:
            shift = self.world.shifts[-1]
            span.set_attributes({f"pantry.shift.{k}": v for k, v in shift.items()})
            if shift["day"] != SHEET["day"]:
                reason = (
                    f"{shift['shift']} is on {shift['day']}, the distribution is {SHEET['day']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise DistributionFailed(reason)

    def watch(self) -> None:
        """The app watches the donation until its collection (a few reads of the offer)."""
        offer = self.outputs["find_donation"]["result"]
        with self.tracer.start_as_current_span(f"watch donation {offer}") as span:
            for read in range(1, 4):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    reason = f"the donor of {offer} recalled the batch for a food-safety check"
                    span.add_event("offer withdrawn", {"read": read, "reason": reason})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise DistributionFailed(reason)
                span.add_event("offer read", {"read": read, "state": "ready"})

    def run(self) -> str:
        """The distribution under the app's root span; its trace id."""
        with self.tracer.start_as_current_span(
            f"distribution {SHEET['week']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attributes({"pantry.name": SHEET["pantry"], "pantry.run": self.label.run})
            try:
                self.arrange()
                root.set_attribute("pantry.outcome", "arranged")
            except DistributionFailed as e:
                root.set_attribute("pantry.outcome", "failed")
                root.record_exception(e)
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


@contextmanager
def _instrumented(provider: TracerProvider) -> Iterator[None]:
    """OpenLLMetry's Cohere instrumentor on ``provider`` while the block runs (its dependency
    check skipped: see the module's docstring)."""
    instrumentor = CohereInstrumentor()
    instrumentor.instrument(tracer_provider=provider, skip_dep_check=True)
    try:
        yield
    finally:
        instrumentor.uninstrument()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the pantry scenarios with OpenLLMetry's Cohere instrumentor and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    out = {}
    with _instrumented(provider), CohereServer(respond) as server:
        tracer = provider.get_tracer(APP_TRACER)
        client = cohere.ClientV2(api_key="fake-key", base_url=server.base_url)
        for label in labels:
            out[label.run] = Distribution(label, client, tracer, World(label)).run()
    return out
