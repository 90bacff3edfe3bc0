"""An animal shelter's transfer desk on the real OpenAI Agents SDK, traced by OpenLLMetry's
openai-agents instrumentor (``OpenAIAgentsInstrumentor().instrument(tracer_provider=...)``,
content captured as ``TRACELOOP_TRACE_CONTENT``'s default), plus the app's own plain OpenTelemetry
spans (a root per case, a check and a watch), against a scripted model on the conformance suite's
fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-57 split only (see README.md). The job: a dog leaves the shelter for a rescue partner.
Find a partner with room in the shelter network's directory for the case's region (read page by
page), get the vet's health certificate (a lab request, polled), book the transport van for the
transfer day, pay the transfer fee from the shelter's grant account, notify the adopter waiting
at the partner. Written as a team writes a planner-executor app on the SDK:

* a ``transfer_planner`` agent (one ``Runner.run`` per plan) answers the plan as **JSON Lines**:
  a header object (``revision``, ``because``, ``done``), then one object per step (``n``,
  ``id``, ``goal``, ``tool``, ``args``; ``{"$ref": "<id>"}`` in ``args`` is that earlier step's
  result); a re-plan leaves the done steps out and numbers its steps on;
* a ``kennel_runner`` agent (one ``Runner.run`` per step attempt) is handed the step's line as
  planned and the earlier results it refers to, calls its ``function_tool`` services and answers a
  :class:`StepReport` (``done`` / ``again`` / ``replan`` / ``refused`` / ``stalled``);
* the services raise :class:`Problem` errors; the tools' ``failure_error_function``
  (:func:`problem_for_model`) hands the model an RFC 9457-style problem object: ``hold`` (busy:
  the runner calls again with ``after`` the time named), ``again`` (the runner reports
  ``again``, the app runs the step again), ``redirect`` (``replan``: the detail ends ``(use
  key=value)``, the app asks for a new plan), ``denied`` (final);
* every SDK run of a case is in one SDK ``trace("dog transfer")``; after it the app checks the
  van booking against the partner's intake day (``check van booking``) and watches the transfer
  (``watch transfer {dog}``, an event per state).

During a play the SDK runs on a trace provider of its own with no processor but OpenLLMetry's
(nothing goes to OpenAI's platform; OpenLLMetry's ``uninstrument`` leaves its processor behind),
and the previous trace provider is put back afterwards.

The planner trusts the intake coordinator's notes over the case file: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    Runner,
    Tool,
    function_tool,
    trace,
)
from agents.exceptions import MaxTurnsExceeded
from agents.tracing import get_trace_provider, set_trace_provider
from agents.tracing.provider import DefaultTraceProvider
from openai import AsyncOpenAI
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel

from tests.conformance.fake_openai import ModelServer, completion

from ._labels import Label

TRACER = "kennel-app"
CASE: dict[str, Any] = {
    "case": "TR-2291",
    "dog": "A-40718",
    "name": "Biscuit",
    "size": "large",
    "region": "Weald",
    "day": "2027-03-14",
    "van": "V-1",
    "account": "GR-58214",
    "fee": 185.0,
    "adopter_email": "m.okafor@adopters.example",
}
NETWORK = ("Weald",)
"""The regions the shelter's vans drive to."""
MAX_TURNS = 40
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_HOLDS = 8
"""Hold answers in one runner run before the runner gives up."""
MAX_POLLS = 12
"""Pending certificate reads before the runner gives up."""
PLANNER = "You plan a dog's transfer to a rescue partner. Answer the plan as JSON Lines."
RUNNER = "You are the shelter's transfer runner. Do the plan step with your tools, then report."
PROBLEMS = {"hold": 429, "again": 503, "redirect": 409, "denied": 403}
"""Problem types and the HTTP status each carries."""


# --- the plan and the reports ---------------------------------------------------------------
class PlanStep(BaseModel):
    n: int
    id: str
    goal: str
    tool: str
    args: dict[str, Any]
    """A value ``{"$ref": "<id>"}`` stands for that earlier step's result."""


class StepReport(BaseModel):
    step: str
    status: Literal["done", "again", "replan", "refused", "stalled"]
    result: str
    note: str


def read_plan(text: str) -> list[PlanStep]:
    """The steps of a JSON Lines plan (the header line, which has no ``id``, left out).

    >>> read_plan('{"revision": 1}\\n{"n": 1, "id": "a", "goal": "g", "tool": "t", "args": {}}')
    [PlanStep(n=1, id='a', goal='g', tool='t', args={})]
    """
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [PlanStep(**row) for row in rows if "id" in row]


def filled(args: dict[str, Any], done: dict[str, str]) -> dict[str, Any]:
    """``args`` with every ``{"$ref": id}`` replaced by that step's result.

    >>> filled({"partner": {"$ref": "find"}, "day": "x"}, {"find": "P-1"})
    {'partner': 'P-1', 'day': 'x'}
    """
    return {
        k: done.get(v["$ref"], "") if isinstance(v, dict) and "$ref" in v else v
        for k, v in args.items()
    }


# --- the scripted model -----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _plan(brief: str) -> str:
    """The planner's answer: the case file's facts, the coordinator's notes trusted over them;
    after a ``(use key=value)`` problem that argument takes the value named; the steps done are
    left out and the rest numbered on."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Case file"]) | json.loads(lines.get("Coordinator's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Problem", ""))
    ref = {"$ref": "find_partner"}
    steps = [
        ("find_partner", f"Find a rescue partner in {facts['region']} with room for a "
         f"{facts['size']} dog.", "search_partners",
         {"region": facts["region"], "species": "dog", "size": facts["size"]}),
        ("vet_certificate", f"Get the vet's health certificate for {facts['dog']}.",
         "request_health_certificate", {"dog": facts["dog"], "partner": ref}),
        ("book_van", f"Book the van to the partner on {facts['day']}.", "book_transport",
         {"dog": facts["dog"], "partner": ref, "day": facts["day"], "van": facts["van"],
          "certificate": {"$ref": "vet_certificate"}}),
        ("pay_fee", f"Pay the {facts['fee']} transfer fee from the grant account.",
         "pay_transfer_fee",
         {"account": facts["account"], "amount": facts["fee"], "partner": ref,
          "case": facts["case"]}),
        ("notify_adopter", "Tell the adopter when the dog arrives.", "notify_adopter",
         {"email": facts["adopter_email"], "dog": facts["dog"], "partner": ref,
          "van": {"$ref": "book_van"}}),
    ]  # fmt: skip
    because = lines.get("Problem", f"transfer {facts['name']} ({facts['dog']}) out")
    out = [json.dumps({"revision": revision, "because": because, "done": sorted(done)})]
    for n, (step, goal, tool, args) in enumerate(steps, start=1):
        if step in done:
            continue
        if use and isinstance(args.get(use.group(1)), str):  # a reference stays one
            args[use.group(1)] = use.group(2)
        out.append(json.dumps({"n": n, "id": step, "goal": goal, "tool": tool, "args": args}))
    return "\n".join(out)


def _runner(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The runner's next turn for the step it was handed: call the tool, call again after the
    time a hold names, follow ``next_page``, poll a pending certificate, report."""
    _, line, earlier = order.splitlines()
    step = json.loads(line)
    step["args"] = filled(step["args"], json.loads(earlier.removeprefix("Earlier results: ")))
    turn = len(messages)
    results = [_text(m.get("content")) for m in messages if m.get("role") == "tool"]

    def report(status: str, result: str = "", note: str = "") -> dict[str, Any]:
        said = {"step": step["id"], "status": status, "result": result, "note": note}
        return _say(json.dumps(said))

    if not results:
        return _call(step["tool"], step["args"], turn)
    answer = json.loads(results[-1])
    kind = str(answer.get("type", "")).rsplit("/", 1)[-1]
    if kind == "hold":
        holds = sum('/problems/hold"' in r for r in results)
        if holds >= MAX_HOLDS:
            return report("stalled", note=f"on hold {holds} times: {answer['detail']}")
        return _call(step["tool"], step["args"] | {"after": answer["retry_after"]}, turn)
    if kind in ("again", "redirect", "denied"):
        status = {"again": "again", "redirect": "replan", "denied": "refused"}[kind]
        return report(status, note=str(answer["detail"]))
    if answer.get("next_page"):
        return _call(step["tool"], step["args"] | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "pending":
        reads = sum('"pending"' in r for r in results)
        if reads > MAX_POLLS:
            return report("stalled", note=f"{answer['request']} pending after {MAX_POLLS} reads")
        return _call("certificate_status", {"request": answer["request"]}, turn)
    if "partners" in answer:
        room = [p["id"] for p in answer["partners"] if p["room"] > 0]
        return report("done", room[0]) if room else report("refused", note="no partner has room")
    return report("done", str(answer["id"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Case file: " + json.dumps(CASE)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> [s.id for s in read_plan(msg["choices"][0]["message"]["content"])][:2]
    ['find_partner', 'vet_certificate']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = _text(messages[0].get("content")) if messages else ""
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if system.startswith(PLANNER):
        message = _say(_plan(user))
    elif system.startswith(RUNNER):
        message = _runner(messages, user)
    else:
        message = _say("I cannot help with that.")
    return completion(body, message)


# --- the world ----------------------------------------------------------------------------
class Problem(RuntimeError):
    """A shelter-network service's refusal: its problem ``kind`` (a key of :data:`PROBLEMS`),
    what it said and, for a hold, when to call again."""

    def __init__(self, kind: str, detail: str, retry_after: str = "") -> None:
        super().__init__(detail)
        self.kind = kind
        self.retry_after = retry_after


def problem_for_model(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model reads when a service raised: an RFC 9457-style problem object (the SDK's
    default hides every error's text).

    >>> said = problem_for_model(None, Problem("hold", "busy", "10:15"))  # type: ignore[arg-type]
    >>> json.loads(said)["type"], json.loads(said)["status"], json.loads(said)["retry_after"]
    ('https://shelternet.example/problems/hold', 429, '10:15')
    """
    kind = error.kind if isinstance(error, Problem) else "denied"
    said: dict[str, Any] = {"type": f"https://shelternet.example/problems/{kind}"}
    said |= {"status": PROBLEMS[kind], "detail": str(error)}
    if isinstance(error, Problem) and error.retry_after:
        said["retry_after"] = error.retry_after
    return json.dumps(said)


class TransferFailed(RuntimeError):
    """The dog could not be transferred (or its transfer was stopped after it was booked)."""


@dataclass
class World:
    """The partner directory, the vet lab, the van rota, the grant ledger and the mail of one
    case."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    partners: dict[str, str] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    vans: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def scenario(self) -> str:
        return self.label.scenario

    def fault(self, tool: str) -> None:
        """Raise the scenario's next problem when ``tool`` is the one it targets."""
        if self.faults and tool == self.label.params.get("tool"):
            f = self.faults.pop(0)
            detail = f"{f['text']} (use {f['hint']})" if f["kind"] == "redirect" else f["text"]
            raise Problem(f["kind"], detail, f.get("hint", "") if f["kind"] == "hold" else "")

    def tools(self) -> list[Tool]:
        """The runner's services, as ``function_tool``s bound to this case's world."""

        @function_tool(failure_error_function=problem_for_model)
        def search_partners(region: str, species: str, size: str, page: int = 1) -> str:
            """Rescue partners of the shelter network in a region, a directory page at a time.

            Args:
                region: the region the partner is in.
                species: the animal's species.
                size: the animal's size class.
                page: the directory page.
            """
            self.fault("search_partners")
            pages = int(self.label.params.get("pages", 1))
            if page < pages:
                full = [{"id": f"RP-{page}{n}", "region": region, "room": 0} for n in (1, 2)]
                return json.dumps({"partners": full, "next_page": page + 1})
            partner = f"RP-{self.label.seed % 1000}-{len(region)}"
            self.partners[partner] = region
            return json.dumps({"partners": [{"id": partner, "region": region, "room": 2}]})

        @function_tool(failure_error_function=problem_for_model)
        def request_health_certificate(dog: str, partner: str) -> str:
            """Ask the vet lab for a dog's transfer health certificate.

            Args:
                dog: the dog's shelter id.
                partner: the receiving partner's id.
            """
            self.fault("request_health_certificate")
            request = f"HC-{self.label.seed}-{len(self.requests) + 1}"
            self.requests[request] = 0
            return json.dumps({"request": request, "state": "pending"})

        @function_tool(failure_error_function=problem_for_model)
        def certificate_status(request: str) -> str:
            """Whether the vet lab has issued a requested health certificate.

            Args:
                request: the certificate request's id.
            """
            self.requests[request] = self.requests.get(request, 0) + 1
            if self.scenario == "loop_poll_stuck" or self.requests[request] < int(
                self.label.params.get("polls", 1)
            ):
                return json.dumps({"request": request, "state": "pending"})
            return json.dumps({"id": request.replace("HC-", "CERT-"), "state": "issued"})

        @function_tool(failure_error_function=problem_for_model)
        def book_transport(
            dog: str, partner: str, day: str, van: str, certificate: str, after: str = ""
        ) -> str:
            """Book the shelter's transport van to take a dog to a partner.

            Args:
                dog: the dog's shelter id.
                partner: the receiving partner's id.
                day: the transfer day, ISO.
                van: the van, ``V-1``...
                certificate: the health certificate's id.
                after: the time of day to book after, HH:MM (empty: the first free).
            """
            self.fault("book_transport")
            moved = self.label.params.get("van_to")
            if moved and van == CASE["van"]:
                raise Problem(
                    "redirect", f"van {van} is in the workshop on {day} (use van={moved})"
                )
            region = self.partners.get(partner)
            if region is None:
                raise Problem("denied", f"no partner {partner} in the network")
            if region not in NETWORK:
                raise Problem(
                    "denied",
                    f"partner {partner} is in {region}, outside the transport network "
                    f"({', '.join(NETWORK)})",
                )
            booking = f"VB-{van}-{day.replace('-', '')}"
            self.vans[booking] = {"dog": dog, "partner": partner, "day": day, "van": van}
            return json.dumps({"id": booking, "van": van, "day": day})

        @function_tool(failure_error_function=problem_for_model)
        def pay_transfer_fee(
            account: str, amount: float, partner: str, case: str, after: str = ""
        ) -> str:
            """Pay a partner the transfer fee from one of the shelter's grant accounts.

            Args:
                account: the grant account.
                amount: the fee, GBP.
                partner: the partner paid.
                case: the transfer case paid for.
                after: the time of day to pay after, HH:MM (empty: now).
            """
            self.fault("pay_transfer_fee")
            known = {CASE["account"], *self.label.params.get("accounts", ())}
            if account not in known:
                raise Problem("denied", f"the grant ledger holds no account {account}")
            return json.dumps({"id": f"FEE-{self.label.seed}", "amount": amount})

        @function_tool(failure_error_function=problem_for_model)
        def notify_adopter(email: str, dog: str, partner: str, van: str, after: str = "") -> str:
            """Email the adopter the transfer notice.

            Args:
                email: the adopter's address.
                dog: the dog's shelter id.
                partner: the receiving partner's id.
                van: the van booking's id.
                after: the time of day to send after, HH:MM (empty: now).
            """
            self.fault("notify_adopter")
            return json.dumps({"id": f"MSG-{dog}", "to": email})

        return [
            search_partners,
            request_health_certificate,
            certificate_status,
            book_transport,
            pay_transfer_fee,
            notify_adopter,
        ]

    def transfer_states(self) -> list[str]:
        """What the watch sees of the transfer: loaded, on the road, then arrived (or the
        partner's kennels quarantined)."""
        road = ["on the road"] * int(self.label.params.get("reads", 1))
        lost = self.scenario.startswith("external_")
        return ["loaded", *road, "quarantine" if lost else "arrived"]


# --- the app ------------------------------------------------------------------------------
class Transfer:
    """One case: the planner, the runner, the app's re-runs, re-plans, check and watch."""

    def __init__(self, label: Label, model: OpenAIChatCompletionsModel) -> None:
        self.label = label
        self.world = World(label)
        self.planner: Agent[Any] = Agent(name="transfer_planner", instructions=PLANNER,
                                         model=model)  # fmt: skip
        self.runner: Agent[Any] = Agent(
            name="kennel_runner",
            instructions=RUNNER,
            model=model,
            tools=self.world.tools(),
            output_type=StepReport,
        )

    def brief(self, revision: int, done: dict[str, str], problem: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("region", "day", "account") if k in self.label.params
        }
        lines = [f"Plan the transfer of case {CASE['case']}.", f"Case file: {json.dumps(CASE)}"]
        if notes:
            lines.append(f"Coordinator's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [f"Revision: {revision}", f"Done: {json.dumps(done)}", f"Problem: {problem}"]
        return "\n".join(lines)

    async def plan(self, revision: int, done: dict[str, str], problem: str) -> list[PlanStep]:
        result = await Runner.run(self.planner, self.brief(revision, done, problem))
        return read_plan(str(result.final_output))

    async def attempt(self, step: PlanStep, done: dict[str, str]) -> StepReport:
        # the step's line as planned, and the results it refers to
        earlier = {v["$ref"]: done[v["$ref"]] for v in step.args.values() if isinstance(v, dict)}
        order = "\n".join(
            [
                f"Run step {step.n} ({step.id}) of case {CASE['case']}:",
                step.model_dump_json(),
                f"Earlier results: {json.dumps(earlier)}",
            ]
        )
        result = await Runner.run(self.runner, order, max_turns=MAX_TURNS)
        return result.final_output_as(StepReport)

    async def work(self) -> None:
        """Plan, run each step (again after ``again``), re-plan after ``replan``."""
        done: dict[str, str] = {}
        revision = 1
        plan = await self.plan(revision, done, "")
        while left := [s for s in plan if s.id not in done]:
            step = left[0]
            for _ in range(MAX_ATTEMPTS):
                report = await self.attempt(step, done)
                if report.status != "again":
                    break
            if report.status == "done":
                done[step.id] = report.result
            elif report.status == "replan" and revision < MAX_PLANS:
                revision += 1
                plan = await self.plan(revision, done, f"{step.id}: {report.note}")
            elif report.status == "again":
                raise TransferFailed(f"{step.id}: still failing after {MAX_ATTEMPTS} attempts")
            else:
                raise TransferFailed(f"{step.id}: {report.note}")

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's check: the van takes the dog on the partner's intake day."""
        with tracer.start_as_current_span("check van booking") as span:
            (booking,) = self.world.vans.values()
            span.set_attribute("van.day", booking["day"])
            span.set_attribute("intake.day", CASE["day"])
            if booking["day"] != CASE["day"]:
                raise TransferFailed(
                    f"van goes on {booking['day']}, the partner takes the dog in on {CASE['day']}"
                )

    def watch(self, tracer: otel_trace.Tracer) -> None:
        (booking,) = self.world.vans.values()
        with tracer.start_as_current_span(f"watch transfer {CASE['dog']}") as span:
            for state in self.world.transfer_states():
                span.add_event("transfer", {"dog": CASE["dog"], "state": state})
                if state == "quarantine":
                    raise TransferFailed(
                        f"{booking['partner']} closed its kennels: kennel cough quarantine"
                    )

    async def run(self, tracer: otel_trace.Tracer) -> str:
        """Transfer the dog under the app's span; the OTel trace id."""
        with tracer.start_as_current_span(
            f"transfer {CASE['dog']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attribute("case", CASE["case"])
            root.set_attribute("dog", CASE["dog"])
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                with trace("dog transfer", group_id=CASE["case"]):
                    await self.work()
                self.check(tracer)
                self.watch(tracer)
            except (TransferFailed, MaxTurnsExceeded) as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("outcome", "failed")
            else:
                root.set_attribute("outcome", "transferred")
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the kennel scenarios with OpenLLMetry's spans and the app's on ``provider``; run
    name -> trace id."""
    if not labels:
        return {}
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    # The SDK's trace provider is global and OpenLLMetry adds its processor to it for good: the
    # play runs on a fresh one (no processor of the SDK's: nothing goes to OpenAI's platform)
    # and puts the previous one back, so other agents' SDK runs never reach OpenLLMetry.
    previous = get_trace_provider()
    set_trace_provider(DefaultTraceProvider())
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with ModelServer(respond=respond) as server:
            client = AsyncOpenAI(
                base_url=server.base_url("corpus-kennel"), api_key="test", max_retries=0
            )
            model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)

            async def all_runs() -> dict[str, str]:
                return {label.run: await Transfer(label, model).run(tracer) for label in labels}

            return asyncio.run(all_runs())
    finally:
        instrumentor.uninstrument()
        set_trace_provider(previous)
