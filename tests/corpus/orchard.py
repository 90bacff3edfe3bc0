"""A fruit orchard's harvest-to-cider-press run on Agno, traced by OpenLLMetry's Agno
instrumentor (``opentelemetry-instrumentation-agno``) and its OpenAI instrumentor for the model
calls Agno's ``OpenAIChat`` makes, against a scripted model on the conformance suite's fake
OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-54 split only (see README.md). The task: the estate's harvest sheet says which orchard
is picked and when the fruit is pressed; find a picking crew licensed for the orchard's county
in the labour agency's paged list, get the food-safety inspection of the picking (a booking
polled until it passes), book the mobile cider press for the pressing day, pay the crew's
advance from the estate's account, notify the cooperative. As an Agno user would write it:

* the app opens one OTel span per run (``harvest run {run}``) and records the outcome;
* a ``harvest_planner`` ``Agent`` answers the plan as an **Org-mode outline**: ``#+TITLE:`` and
  ``#+REVISION:`` lines, one ``* TODO {slug}`` heading per step with its goal as body text and
  a ``:PROPERTIES:`` drawer (``:TOOL:`` and one property per argument); ``[[result:slug]]``
  (an Org link) stands for that earlier step's result, substituted by the app; asked again
  after a failure, it keeps the steps done as ``* DONE {slug}`` headings with a ``:RESULT:``
  and writes TODO headings for the rest;
* a ``harvest_hand`` ``Agent`` run per step attempt, its input ``Step n (slug): goal`` and
  ``Call {tool} with {json}``, its answer one line: ``DONE <result>``, ``RETRY <why>``,
  ``REPLAN <why>`` or ``FAILED <why>``;
* the estate's services raise ``[kind] text`` faults the model reads: ``frost-hold`` (``try
  again after HH:MM``: the model calls again with ``after``), ``windfall`` (the hand answers
  RETRY, the app runs the step again, up to 8 attempts), ``regraft`` with ``(use k=v)``
  (REPLAN: the app asks the planner again, up to 4 revisions), ``blight`` (final);
* after the last step the app checks the press booking against the harvest sheet (``check
  press booking``) and watches the pressing day (``watch press day``), both plain OTel spans.

The planner trusts the foreman's notes over the harvest sheet: a scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.team import Team
from agno.tools import FunctionCall
from openai.resources.chat.completions import AsyncCompletions, Completions
from opentelemetry import trace as otel_trace
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

SHEET: dict[str, Any] = {
    "orchard": "Pear Tree Farm",
    "county": "Herefordshire",
    "pressing_day": "2027-10-14",
    "yard": "Old Dairy yard",
    "account": "EST-37102",
    "advance": 1800,
    "bins": 64,
}
NOTE_KEYS = {"county": "county", "day": "pressing_day", "account": "account"}
"""Label parameter -> the harvest-sheet field a foreman's note overrides."""
MAX_STEP_ATTEMPTS = 8
MAX_REVISIONS = 4
MAX_STATUS_READS = 12


class OrchardFault(RuntimeError):
    """An error answer of the estate's services: ``[kind] text``."""


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _org(
    title: str,
    revision: int,
    done: dict[str, str],
    todo: list[tuple[str, str, str, dict[str, Any]]],
) -> str:
    lines = [f"#+TITLE: {title}", f"#+REVISION: {revision}", ""]
    for slug, result in done.items():
        lines += [f"* DONE {slug}", "  :PROPERTIES:", f"  :RESULT: {result}", "  :END:"]
    for slug, goal, tool, args in todo:
        lines += [f"* TODO {slug}", f"  {goal}", "  :PROPERTIES:", f"  :TOOL: {tool}"]
        lines += [f"  :{k}: {v}" for k, v in args.items()]
        lines.append("  :END:")
    return "\n".join(lines)


def _planner(brief: str) -> dict[str, Any]:
    """The planner's outline: the sheet's facts, the foreman's notes trusted over them, the
    yard or account a failure names, the steps done kept as DONE headings."""
    fields = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(fields["Harvest sheet"]) | json.loads(fields.get("Foreman's notes", "{}"))
    done: dict[str, str] = json.loads(fields.get("Done", "{}"))
    use = dict(re.findall(r"use (\w+)=([^)]+)\)", fields.get("Failure", "")))
    steps = [
        ("find_crew", f"Find a picking crew licensed for {facts['county']}",
         "search_crews", {"county": facts["county"]}),
        ("book_inspection", "Get the food-safety inspection of the picking",
         "request_inspection", {"orchard": facts["orchard"], "crew": "[[result:find_crew]]"}),
        ("book_press", f"Book the mobile cider press for {facts['pressing_day']}",
         "reserve_press",
         {"day": facts["pressing_day"], "yard": use.get("yard", facts["yard"]),
          "certificate": "[[result:book_inspection]]"}),
        ("pay_crew", "Pay the crew's advance from the estate's account",
         "pay_advance",
         {"crew": "[[result:find_crew]]", "account": use.get("account", facts["account"]),
          "amount": facts["advance"]}),
        ("notify_coop", "Tell the cooperative when the fruit is pressed",
         "notify_cooperative", {"booking": "[[result:book_press]]", "bins": facts["bins"]}),
    ]  # fmt: skip
    title = fields["Objective"]
    revision = int(fields.get("Revision", "1"))
    return _say(_org(title, revision, done, [s for s in steps if s[0] not in done]))


def _hand(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The hand's turn: make the call the task names, call again after a frost hold, follow
    ``next_page``, read a queued inspection until it passes, answer one line."""
    run = re.search(r"^Call (\w+) with (.*)$", task, re.MULTILINE)
    assert run, task
    tool_name, call_args = run.group(1), json.loads(run.group(2))
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    if not results:
        return _call(0, tool_name, call_args)
    last = results[-1]
    fault = re.search(r"\[([a-z-]+)\] ", last)
    if fault:
        kind = fault.group(1)
        after = re.search(r"try again after (\d\d:\d\d)", last)
        if kind == "frost-hold" and after:
            return _call(len(results), tool_name, call_args | {"after": after.group(1)})
        word = {"windfall": "RETRY", "regraft": "REPLAN"}.get(kind, "FAILED")
        return _say(f"{word} {last[fault.start() :]}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(len(results), tool_name, call_args | {"page": seen["next_page"]})
    if seen.get("state") == "queued":
        reads = len(results) - 1
        if reads >= MAX_STATUS_READS:
            return _say(f"FAILED inspection {seen['request']} still queued after {reads} reads")
        return _call(len(results), "inspection_status", {"request": seen["request"]})
    return _say(f"DONE {seen['ref']}")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's outline for a
    brief, the hand's next tool call or answer line otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'Call f with {"a": 1}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    'f'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if "Harvest sheet: " in task:
        return completion(body, _planner(task))
    return completion(body, _hand(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The labour agency, the food-safety inspectorate, the press hire, the bank, the
    cooperative."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    crews: dict[str, str] = field(default_factory=dict)
    """Crew -> the county it is licensed for."""
    inspections: dict[str, int] = field(default_factory=dict)
    """Inspection request -> its status reads."""
    press: dict[str, str] = field(default_factory=dict)
    paid: int = 0
    notified: str = ""

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault when the call is to the tool it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = f"[{f['kind']}] {f['text']}"
        if f["kind"] == "frost-hold":
            text += f"; try again after {f['hint']}"
        elif f["kind"] == "regraft":
            text += f" (use {f['hint']})"
        raise OrchardFault(text)

    def ref(self, prefix: str) -> str:
        return f"{prefix}-{self.label.seed % 10000:04d}"


def make_tools(world: World) -> list[Any]:
    """The estate's services, bound to one run's world."""

    def search_crews(county: str, page: int = 1, after: str = "") -> str:
        """List the labour agency's picking crews licensed for a county, a page at a time.

        Args:
            county: the county the crew must be licensed for
            page: the list's page
            after: call no earlier than this time (HH:MM)
        """
        world.fault("search_crews")
        pages = int(world.params.get("pages", 1))
        if page < pages:
            booked = {"crew": f"CR-{page}{len(county)}", "available": False}
            return json.dumps({"crews": [booked], "next_page": page + 1})
        crew = f"CR-{county[:3].upper()}{pages}{world.label.seed % 100:02d}"
        world.crews[crew] = county
        return json.dumps({"crews": [{"crew": crew, "available": True}], "ref": crew})

    def request_inspection(orchard: str, crew: str, after: str = "") -> str:
        """Book the food-safety inspection of a picking.

        Args:
            orchard: the orchard picked
            crew: the picking crew
            after: call no earlier than this time (HH:MM)
        """
        world.fault("request_inspection")
        county = world.crews.get(crew, "")
        if county != SHEET["county"]:
            raise OrchardFault(
                f"[blight] crew {crew} is licensed for {county or 'no county'}; {orchard} lies "
                f"in {SHEET['county']}, the inspectorate cannot pass the picking"
            )
        request = world.ref(f"FSA{len(world.inspections)}")
        world.inspections[request] = 0
        return json.dumps({"request": request, "state": "queued"})

    def inspection_status(request: str) -> str:
        """The state of an inspection request; its certificate once passed.

        Args:
            request: the inspection request
        """
        world.inspections[request] += 1
        if world.params.get("stuck") or world.inspections[request] < int(
            world.params.get("polls", 1)
        ):
            return json.dumps({"request": request, "state": "queued"})
        return json.dumps({"request": request, "state": "passed", "ref": f"CERT-{request}"})

    def reserve_press(day: str, yard: str, certificate: str, after: str = "") -> str:
        """Book the mobile cider press for a pressing day at a yard.

        Args:
            day: the pressing day (YYYY-MM-DD)
            yard: where the press is set up
            certificate: the picking's food-safety certificate
            after: call no earlier than this time (HH:MM)
        """
        world.fault("reserve_press")
        moved = world.params.get("yard_to")
        if moved and yard != moved:
            raise OrchardFault(
                f"[regraft] the {yard} is waterlogged after the night's rain, the press lorry "
                f"cannot stand there (use yard={moved})"
            )
        world.press = {"day": day, "yard": yard, "certificate": certificate}
        return json.dumps({"ref": world.ref("PRESS"), "day": day, "yard": yard})

    def pay_advance(crew: str, account: str, amount: int, after: str = "") -> str:
        """Pay a crew's advance from an estate account.

        Args:
            crew: the picking crew
            account: the estate's account
            amount: the advance in pounds
            after: call no earlier than this time (HH:MM)
        """
        world.fault("pay_advance")
        if account not in {SHEET["account"], *world.params.get("accounts", ())}:
            raise OrchardFault(f"[blight] account {account} is not held by the estate's bank")
        world.paid = amount
        return json.dumps({"ref": world.ref("ADV"), "amount": amount})

    def notify_cooperative(booking: str, bins: int, after: str = "") -> str:
        """Tell the cider cooperative when and how much fruit is pressed.

        Args:
            booking: the press booking
            bins: the bins of fruit expected
            after: call no earlier than this time (HH:MM)
        """
        world.fault("notify_cooperative")
        world.notified = booking
        return json.dumps({"ref": world.ref("COOP"), "booking": booking})

    return [
        search_crews,
        request_inspection,
        inspection_status,
        reserve_press,
        pay_advance,
        notify_cooperative,
    ]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The run did not end with the press booked, checked and the day watched."""


class RetryStep(Exception):
    """The hand answered RETRY."""


class Replan(Exception):
    """The hand answered REPLAN."""


def parse_outline(text: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The Org outline's DONE results and TODO steps (slug, goal, tool, args).

    >>> done, todo = parse_outline(
    ...     "#+TITLE: t\\n* DONE a\\n  :PROPERTIES:\\n  :RESULT: R1\\n  :END:\\n"
    ...     "* TODO b\\n  do b\\n  :PROPERTIES:\\n  :TOOL: f\\n  :n: 3\\n  :x: [[result:a]]\\n"
    ...     "  :END:"
    ... )
    >>> done, todo[0]["args"]
    ({'a': 'R1'}, {'n': 3, 'x': '[[result:a]]'})
    """
    done: dict[str, str] = {}
    todo: list[dict[str, Any]] = []
    for block in re.split(r"^\* ", text, flags=re.MULTILINE)[1:]:
        head, *body = block.splitlines()
        state, slug = head.split(maxsplit=1)
        props = dict(re.findall(r"^\s*:(\w+): (.*)$", "\n".join(body), re.MULTILINE))
        if state == "DONE":
            done[slug] = props["RESULT"]
            continue
        goal = next((b.strip() for b in body if b.strip() and not b.strip().startswith(":")), "")
        args: dict[str, Any] = {
            k: int(v) if v.isdigit() else v for k, v in props.items() if k != "TOOL"
        }
        todo.append({"slug": slug, "goal": goal, "tool": props["TOOL"], "args": args})
    return done, todo


class HarvestDesk:
    """One harvest-to-press run, from the sheet to the watched pressing day."""

    def __init__(self, label: Label, model: OpenAIChat):
        self.label = label
        self.world = World(label)
        self.run_id = f"HR-{label.seed % 9000 + 1000}"
        self.planner = Agent(
            name="harvest_planner",
            model=model,
            instructions="Plan the harvest run as an Org-mode outline, one TODO heading a step.",
            telemetry=False,
        )
        self.hand = Agent(
            name="harvest_hand",
            model=model,
            tools=make_tools(self.world),
            instructions=(
                "Carry out the one step you are given, then answer one line: DONE <result>, "
                "RETRY <why>, REPLAN <why> or FAILED <why>."
            ),
            tool_call_limit=20,
            telemetry=False,
        )

    def brief(self, revision: int, done: dict[str, str], failure: str) -> str:
        notes = {NOTE_KEYS[k]: v for k, v in self.label.params.items() if k in NOTE_KEYS}
        lines = [
            f"Objective: Harvest run {self.run_id} from {SHEET['orchard']} to the press",
            f"Revision: {revision}",
            f"Harvest sheet: {json.dumps(SHEET)}",
        ]
        if notes:
            lines.append(f"Foreman's notes: {json.dumps(notes)}")
        if done:
            lines.append(f"Done: {json.dumps(done)}")
        if failure:
            lines.append(f"Failure: {failure}")
        return "\n".join(lines)

    def attempt(self, n: int, step: dict[str, Any], done: dict[str, str]) -> str:
        """One hand run of a step: its result, or its answer as an exception."""
        args = {
            k: re.sub(r"\[\[result:(\w+)\]\]", lambda m: done[m.group(1)], v)
            if isinstance(v, str)
            else v
            for k, v in step["args"].items()
        }
        task = (
            f"Step {n} ({step['slug']}): {step['goal']}\n"
            f"Call {step['tool']} with {json.dumps(args)}"
        )
        answer = str(self.hand.run(task).content or "")
        word, _, rest = answer.partition(" ")
        if word == "DONE":
            return rest
        if word == "RETRY":
            raise RetryStep(rest)
        if word == "REPLAN":
            raise Replan(rest)
        raise Failed(f"{step['slug']}: {rest or answer}")

    def work(self) -> None:
        done: dict[str, str] = {}
        failure = ""
        for revision in range(1, MAX_REVISIONS + 1):
            outline = str(self.planner.run(self.brief(revision, done, failure)).content or "")
            kept, todo = parse_outline(outline)
            done |= kept
            failure = ""
            for n, step in enumerate(todo, len(kept) + 1):
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    try:
                        done[step["slug"]] = self.attempt(n, step, done)
                        break
                    except RetryStep as e:
                        if attempt == MAX_STEP_ATTEMPTS:
                            raise Failed(f"{step['slug']}: {e}") from e
                    except Replan as e:
                        if revision == MAX_REVISIONS:
                            raise Failed(f"{step['slug']}: {e}") from e
                        failure = f"{step['slug']}: {e}"
                        break
                if failure:
                    break
            if not failure:
                return
        raise Failed(failure)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks after the cooperative is told: the booking, then the day."""
        with tracer.start_as_current_span("check press booking") as span:
            press = self.world.press
            span.set_attribute("orchard.press.day", press.get("day", ""))
            span.set_attribute("orchard.sheet.pressing_day", SHEET["pressing_day"])
            if press.get("day") != SHEET["pressing_day"]:
                reason = (
                    f"the press is booked for {press.get('day')}, the harvest sheet presses on "
                    f"{SHEET['pressing_day']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch press day") as span:
            for read, state in enumerate(("set up", "washing", "milling", "pressing"), 1):
                if self.label.scenario == "external_hail" and read > int(
                    self.label.params["reads"]
                ):
                    reason = "a hailstorm closed the press site: the lorry was ordered off the yard"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("press", {"read": read, "state": state})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"harvest run {self.run_id}") as root:
            root.set_attribute("orchard.run", self.run_id)
            try:
                self.work()
                self.check(tracer)
                root.set_attribute("orchard.outcome", "pressed")
            except Failed as e:
                root.set_attribute("orchard.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the orchard scenarios with OpenLLMetry's Agno and OpenAI instrumentors on
    ``provider``; run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from opentelemetry.instrumentation.agno import AgnoInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    agno_log = logging.getLogger("agno")
    agno = AgnoInstrumentor()
    llm = OpenAIInstrumentor()
    agno.instrument(tracer_provider=provider)
    llm.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            # Agno logs every failing tool call with its traceback (the spans carry them);
            # after uvicorn's logging set-up, which re-enables existing loggers
            agno_log.disabled = True
            model = OpenAIChat(id=MODEL, base_url=server.base_url("corpus-orchard"), api_key="test")
            tracer = provider.get_tracer("orchard-app")
            for label in labels:
                out[label.run] = HarvestDesk(label, model).run(tracer)
    finally:
        agno.uninstrument()
        llm.uninstrument()
        unwrap_classes()
        agno_log.disabled = False
    return out


def unwrap_classes() -> None:
    """Take OpenLLMetry's Agno and OpenAI wrappers off the classes they patched.

    0.62.4's uninstrument leaves its wrappers on the classes: it unwraps ("agno.agent",
    "Agent.run"), which unwrap reads as the attribute "Agent.run" of the module agno.agent
    (nothing there); left on, lease's next play would trace through them too (and harvest's
    play says the same of the OpenAI instrumentor's). Unwrapped on the classes instead (a class
    not wrapped is left as it is)."""
    for cls, names in (
        (Agent, ("run", "arun")),
        (Team, ("run", "arun")),
        (FunctionCall, ("execute", "aexecute")),
        (Completions, ("create",)),
        (AsyncCompletions, ("create",)),
    ):
        for name in names:
            unwrap(cls, name)
