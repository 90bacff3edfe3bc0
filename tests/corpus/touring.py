"""A community theatre taking its show on tour, a hand-written planner-executor app calling the
model through **LiteLLM** (``litellm.completion`` with ``tools=[...]``, the model as
``openai/...`` at the fake server's ``api_base``) traced by **OpenInference's LiteLLM
instrumentor** (``LiteLLMInstrumentor().instrument(tracer_provider=...)``: an LLM span
``completion`` per call), plus the app's own plain OpenTelemetry spans where a LiteLLM user
adds them (scope ``touring-app``: the tour's root, a plan span per revision, a span per step
attempt, a span per tool function the app runs for the model, a check and a watch), against a
scripted model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``).
No planscope code.

Sealed-59 split only (see README.md). The task: the Harrowgate Players take *The Winter's Tale*
on tour; find a venue with a thrust stage in the tour's region (a venue listing read page by
page), get the performing-rights licence for the venue (an application, polled), book the
scenery truck for the get-in day, pay the venue's deposit from the touring budget, tell the
cast.

* the planner answers the plan as **a Python list of call expressions**, one call a step
  (``[find_venue(region="north", stage="thrust"), apply_licence(title="...", venue=find_venue),
  ...]``, keyword arguments only); a bare name of an earlier call stands for that call's
  result. The app parses it with :mod:`ast` (literals and those names only, nothing is
  evaluated). After a setback the planner answers the list of the calls still to do (the done
  ones as ``# done:`` comments), still naming done calls for their results;
* the executor is one LiteLLM conversation per step attempt, handed the call with the results
  filled in and the tools; the app runs the tool calls the model asks for itself and answers a
  **verdict line** ``<done|again|replan|failed|stalled> | <result> | <note>``;
* the tour's services raise stage-door errors the app hands the model as the tool's result,
  ``{"error": {"type": ..., "message": ...}}``: ``Intermission`` (call again ``after`` the
  ``resume_after`` time, in the same conversation), ``Rehearse`` (the app runs the step again,
  up to 8 attempts), ``Recast`` (``(use key=value)``: a new plan, up to 4 plans),
  ``FinalCurtain`` (final).

The planner trusts the tour manager's notes over the tour sheet: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import ast
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

# LiteLLM fetches a price list from the internet when imported unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm
from openinference.instrumentation.litellm import LiteLLMInstrumentor

TOUR: dict[str, Any] = {
    "company": "Harrowgate Players",
    "title": "The Winter's Tale",
    "region": "north",
    "stage": "thrust",
    "date": "2027-05-14",
    "size": "7.5t",
    "account": "TB-31207",
    "amount": 1200,
    "cast": "cast@harrowgateplayers.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 4
MAX_TURNS = 24
MAX_READS = 12
"""Licence-status reads in one conversation before the executor reports the licence stalled."""
APP_TRACER = "touring-app"
PLANNER = (
    "You plan a theatre tour. Answer a Python list of call expressions, one call per step, "
    "keyword arguments only; an earlier call's bare name stands for its result."
)
EXECUTOR = (
    "You run one step of the tour plan with your tools, then answer one line: "
    "<done|again|replan|failed|stalled> | <result> | <note>."
)
VERDICTS = ("done", "again", "replan", "failed", "stalled")


class StageDoorError(RuntimeError):
    """A tour service's refusal; its class name is the ``type`` the model is told."""

    resume_after = ""


class Intermission(StageDoorError):
    """Busy for now: call again after ``resume_after``."""

    def __init__(self, message: str, resume_after: str) -> None:
        super().__init__(message)
        self.resume_after = resume_after


class Rehearse(StageDoorError):
    """Not this time: the step should be run again."""


class Recast(StageDoorError):
    """The plan has to change: the message ends ``(use key=value)``."""


class FinalCurtain(StageDoorError):
    """Refused for good."""


class TourFailed(RuntimeError):
    """The tour date could not be booked, or went wrong after (the reason is the message)."""


# --- the plan's format --------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """One step: a call expression of the plan list."""

    tool: str
    args: dict[str, Any]
    """Literal values, or :class:`Ref` for an earlier call's result."""


@dataclass(frozen=True)
class Ref:
    step: str


def parse_plan(text: str) -> list[Call]:
    """The plan's calls, from the planner's answer (a fenced block or the bare list).

    >>> parse_plan('```python\\n[find_venue(region="north"), book_truck(venue=find_venue)]\\n```')
    [Call(tool='find_venue', args={'region': 'north'}), Call(tool='book_truck', args={'venue': Ref(step='find_venue')})]
    """  # noqa: E501
    fenced = re.search(r"```(?:python)?\n(.*?)```", text, re.DOTALL)
    tree = ast.parse((fenced.group(1) if fenced else text).strip(), mode="eval")
    if not isinstance(tree.body, ast.List):
        raise ValueError("the plan is not a list")
    calls = []
    for node in tree.body.elts:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            raise ValueError(f"not a keyword call: {ast.unparse(node)}")
        args: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise ValueError(f"no ** in a plan: {ast.unparse(node)}")
            # a bare name is an earlier call's result; everything else must be a literal
            args[kw.arg] = (
                Ref(kw.value.id) if isinstance(kw.value, ast.Name) else ast.literal_eval(kw.value)
            )
        calls.append(Call(node.func.id, args))
    return calls


def render(call: Call, results: dict[str, str] | None = None) -> str:
    """A call as Python source; with ``results``, the earlier calls' results filled in.

    >>> c = Call("book_truck", {"venue": Ref("find_venue"), "size": "7.5t"})
    >>> render(c)
    "book_truck(venue=find_venue, size='7.5t')"
    >>> render(c, {"find_venue": "V-NOR-7"})
    "book_truck(venue='V-NOR-7', size='7.5t')"
    """
    keywords = []
    for key, value in call.args.items():
        if isinstance(value, Ref):
            node: ast.expr = (
                ast.Constant(results[value.step])
                if results is not None and value.step in results
                else ast.Name(value.step)
            )
        else:
            node = ast.Constant(value)
        keywords.append(ast.keyword(key, node))
    return ast.unparse(ast.Call(ast.Name(call.tool), [], keywords))


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _plan_text(brief: str) -> str:
    """The planner's answer: the tour sheet, the tour manager's notes trusted over it; after a
    ``(use key=value)`` setback that value; the done calls left out (as comments)."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Tour sheet"]) | json.loads(lines.get("Tour manager's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    venue = Ref("find_venue")
    calls = [
        Call("find_venue", {"region": facts["region"], "stage": facts["stage"]}),
        Call("apply_licence", {"title": facts["title"], "venue": venue}),
        Call("book_truck", {"venue": venue, "date": facts["date"], "size": facts["size"]}),
        Call("pay_deposit",
             {"venue": venue, "account": facts["account"], "amount": facts["amount"]}),
        Call("notify_cast", {"cast": facts["cast"], "venue": venue, "date": facts["date"],
                             "truck": Ref("book_truck"), "licence": Ref("apply_licence")}),
    ]  # fmt: skip
    head = [f"# done: {step} -> {result}" for step, result in done.items()]
    body = [f"    {render(c)}," for c in calls if c.tool not in done]
    return "```python\n" + "\n".join([*head, "[", *body, "]"]) + "\n```"


def _tool_call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _executor(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The executor's next turn: make the call, call again ``after`` an intermission, follow
    ``next_page``, read a pending licence, answer the verdict line."""
    (line,) = re.findall(r"^Call: (.*)$", order, re.MULTILINE)
    (call,) = parse_plan(f"[{line}]")
    turn = len(messages)
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            asked[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in asked:
            calls.append((*asked.pop(m["tool_call_id"]), json.loads(_text(m.get("content")))))

    def verdict(word: str, result: str = "", note: str = "") -> dict[str, Any]:
        return {"role": "assistant", "content": f"{word} | {result} | {note}"}

    if not calls:
        return _tool_call(call.tool, call.args, turn)
    name, called, answer = calls[-1]
    error = answer.get("error")
    if error:
        if error["type"] == "Intermission":
            return _tool_call(name, called | {"after": error["resume_after"]}, turn)
        word = {"Rehearse": "again", "Recast": "replan"}.get(error["type"], "failed")
        return verdict(word, note=f"{error['type']}: {error['message']}")
    if answer.get("next_page"):
        return _tool_call(name, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "pending":
        reads = sum(c[0] == "licence_status" for c in calls)
        if reads >= MAX_READS:
            return verdict("stalled", note=f"licence {answer['application']} pending")
        return _tool_call("licence_status", {"application": answer["application"]}, turn)
    return verdict("done", str(answer["ref"]), str(answer.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Tour sheet: " + json.dumps(TOUR)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> [c.tool for c in parse_plan(msg["choices"][0]["message"]["content"])][:3]
    ['find_venue', 'apply_licence', 'book_truck']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, {"role": "assistant", "content": _plan_text(user)})
    return completion(body, _executor(messages, user))


# --- the tour's services ------------------------------------------------------------------
@dataclass
class World:
    """The venue listing, rights agency, truck hire, touring budget and cast list of one tour."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    venues: dict[str, str] = field(default_factory=dict)
    applications: dict[str, int] = field(default_factory=dict)
    trucks: list[dict[str, str]] = field(default_factory=list)
    deposits: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault when ``tool`` is the one it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["kind"] == "intermission":
            raise Intermission(f["text"], f["hint"])
        if f["kind"] == "rehearse":
            raise Rehearse(f["text"])
        if f["kind"] == "recast":
            raise Recast(f"{f['text']} (use {f['hint']})")
        raise FinalCurtain(f["text"])

    # the tools: keyword arguments as the model sends them; a dict back, or a StageDoorError
    def find_venue(self, region: str, stage: str, page: int = 1, after: str = "") -> dict[str, Any]:
        """Venues with a stage of the kind asked for in a touring region, a page at a time."""
        self.fault("find_venue")
        code = region[:3].upper()
        if page < int(self.params.get("pages", 1)):
            others = [f"V-{code}-{page * 10 + n} (proscenium)" for n in (1, 2)]
            return {"venues": [], "other_stages": others, "next_page": page + 1}
        venue = f"V-{code}-{self.label.seed}"
        self.venues[venue] = region
        return {"ref": venue, "region": region, "stage": stage, "seats": 180 + self.label.seed % 90}

    def apply_licence(self, title: str, venue: str, after: str = "") -> dict[str, Any]:
        """Apply to the rights agency for a performing licence at a venue."""
        self.fault("apply_licence")
        region = self.venues.get(venue, "")
        if region != TOUR["region"]:
            raise FinalCurtain(
                f"the rights to {title} are licensed for the {TOUR['region']} circuit only; "
                f"{venue} is in {region or 'no known'} region"
            )
        application = f"PRL-{self.label.seed}-{len(self.applications) + 1}"
        self.applications[application] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"application": application, "state": "pending"}
        return {"ref": application, "state": "granted"}

    def licence_status(self, application: str, after: str = "") -> dict[str, Any]:
        """Whether the rights agency has granted an application yet."""
        self.applications[application] += 1
        if self.params.get("stuck") or self.applications[application] < int(
            self.params.get("polls", 0)
        ):
            return {"application": application, "state": "pending"}
        return {"ref": application, "state": "granted"}

    def book_truck(self, venue: str, date: str, size: str, after: str = "") -> dict[str, Any]:
        """Book a scenery truck of a size to a venue's dock for the get-in day."""
        self.fault("book_truck")
        dock = self.params.get("size_to")
        if dock and size != dock:
            raise Recast(f"{venue}'s dock takes no {size} truck (use size={dock})")
        truck = f"TRK-{self.label.seed % 900 + 100}"
        self.trucks.append({"truck": truck, "venue": venue, "date": date, "size": size})
        return {"ref": truck, "date": date, "dock_slot": after or "08:30"}

    def pay_deposit(self, venue: str, account: str, amount: int, after: str = "") -> dict[str, Any]:
        """Pay a venue's deposit from a touring-budget account."""
        self.fault("pay_deposit")
        if account != TOUR["account"] and account not in self.params.get("accounts", ()):
            raise FinalCurtain(f"the touring budget holds no account {account}")
        receipt = f"DEP-{self.label.seed}-{len(self.deposits) + 1}"
        self.deposits.append({"venue": venue, "account": account, "amount": amount})
        return {"ref": receipt, "amount": amount}

    def notify_cast(
        self, cast: str, venue: str, date: str, truck: str, licence: str, after: str = ""
    ) -> dict[str, Any]:
        """E-mail the cast the tour date."""
        self.fault("notify_cast")
        return {"ref": f"MAIL-{venue}-{date[-2:]}", "to": cast}


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The tool's function schema from its signature (every argument a string but counts)."""
    names = fn.__code__.co_varnames[1 : fn.__code__.co_argcount]
    optional = {"page", "after"}
    props = {n: {"type": "integer" if n in ("page", "amount") else "string"} for n in names}
    return {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": (fn.__doc__ or "").strip(),
            "parameters": {
                "type": "object",
                "properties": props,
                "required": [n for n in names if n not in optional],
            },
        },
    }


TOOLS = {
    "find_venue": ("find_venue",),
    "apply_licence": ("apply_licence", "licence_status"),
    "book_truck": ("book_truck",),
    "pay_deposit": ("pay_deposit",),
    "notify_cast": ("notify_cast",),
}
"""The tools an executor gets for each kind of step."""


# --- the app ------------------------------------------------------------------------------
@dataclass
class Tour:
    """One tour date to book."""

    label: Label
    base_url: str
    tracer: Tracer
    world: World
    results: dict[str, str] = field(default_factory=dict)
    plans: int = 0

    def ask(self, messages: list[dict[str, Any]], **extra: Any) -> Any:
        return (
            litellm.completion(
                model=f"openai/{MODEL}",
                api_base=self.base_url,
                api_key="test",
                messages=messages,
                **extra,
            )
            .choices[0]
            .message
        )

    def brief(self, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("region", "date", "account") if k in self.label.params
        }
        lines = [
            f"Objective: book a date of {TOUR['title']} on tour.",
            f"Tour sheet: {json.dumps(TOUR)}",
        ]
        if notes:
            lines.append(f"Tour manager's notes: {json.dumps(notes)}")
        if self.plans:
            lines += [
                f"Revision: {self.plans + 1}",
                f"Done: {json.dumps(self.results)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, setback: str) -> list[Call]:
        with self.tracer.start_as_current_span(f"plan revision {self.plans + 1}") as span:
            span.set_attributes(
                {"tour.plan.revision": self.plans + 1, "tour.plan.setback": setback}
            )
            msg = self.ask(
                [
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": self.brief(setback)},
                ]
            )
            self.plans += 1
            calls = parse_plan(str(msg.content))
            span.set_attribute("tour.plan.steps", [c.tool for c in calls])
            return calls

    def run_tool(self, name: str, arguments: str, allowed: tuple[str, ...]) -> str:
        """Run one tool call the model asked for under the app's own span; its JSON answer."""
        with self.tracer.start_as_current_span(f"tool {name}") as span:
            span.set_attributes({"tour.tool": name, "tour.tool.arguments": arguments})
            try:
                if name not in allowed:
                    raise FinalCurtain(f"no tool {name} for this step")
                answer = getattr(self.world, name)(**json.loads(arguments or "{}"))
            except StageDoorError as e:
                # the model is told what went wrong; the span keeps the error
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, f"{type(e).__name__}: {e}"))
                error = {"type": type(e).__name__, "message": str(e)}
                if e.resume_after:
                    error["resume_after"] = e.resume_after
                answer = {"error": error}
            out = json.dumps(answer)
            span.set_attribute("tour.tool.result", out)
            return out

    def attempt(self, number: int, call: Call, attempt: int) -> tuple[str, str, str]:
        """One executor conversation for a step: (verdict, result, note)."""
        line = render(call, self.results)
        with self.tracer.start_as_current_span(f"step {call.tool} attempt {attempt}") as span:
            span.set_attributes(
                {"tour.step": call.tool, "tour.step.attempt": attempt, "tour.step.call": line}
            )
            allowed = TOOLS.get(call.tool, ())
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": EXECUTOR},
                {
                    "role": "user",
                    "content": f"Step {number}: {call.tool} (attempt {attempt})\nCall: {line}",
                },
            ]
            tools = [_schema(getattr(World, n)) for n in allowed]
            for _ in range(MAX_TURNS):
                msg = self.ask(messages, tools=tools)
                if not msg.tool_calls:
                    break
                messages.append(
                    {
                        "role": "assistant",
                        "content": msg.content,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "type": "function",
                                "function": {
                                    "name": c.function.name,
                                    "arguments": c.function.arguments,
                                },
                            }
                            for c in msg.tool_calls
                        ],
                    }
                )
                for c in msg.tool_calls:
                    content = self.run_tool(c.function.name, c.function.arguments, allowed)
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
            else:
                msg = None
            word, result, note = (
                [p.strip() for p in str(msg.content).split("|", 2)]
                if msg is not None and str(msg.content).count("|") >= 2
                else ["stalled", "", f"no verdict in {MAX_TURNS} turns"]
            )
            if word not in VERDICTS:
                word, note = "failed", f"unreadable verdict: {msg.content if msg else ''}"
            span.set_attributes({"tour.step.verdict": word, "tour.step.result": result})
            if word != "done":
                span.set_status(Status(StatusCode.ERROR, f"{word}: {note}"))
            return word, result, note

    def book(self) -> None:
        """Plan, run each step (again, or after a new plan), check, watch; raises
        :class:`TourFailed`."""
        calls = self.plan("")
        while True:
            open_calls = [c for c in calls if c.tool not in self.results]
            if not open_calls:
                break
            call = open_calls[0]
            number = list(TOOLS).index(call.tool) + 1 if call.tool in TOOLS else 0
            for attempt in range(1, MAX_ATTEMPTS + 1):
                word, result, note = self.attempt(number, call, attempt)
                if word != "again":
                    break
            if word == "done":
                self.results[call.tool] = result
            elif word == "replan" and self.plans < MAX_PLANS:
                calls = self.plan(f"step {number} {call.tool}: {note}")
            else:
                raise TourFailed(f"{call.tool}: {word}: {note}")
        self.check()
        self.watch()

    def check(self) -> None:
        """The app's own check: the truck gets in on the performance day."""
        with self.tracer.start_as_current_span("check truck booking") as span:
            booking = self.world.trucks[-1]
            span.set_attributes({f"tour.truck.{k}": v for k, v in booking.items()})
            if booking["date"] != TOUR["date"]:
                reason = (
                    f"{booking['truck']} gets in on {booking['date']}, the show is {TOUR['date']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise TourFailed(reason)

    def watch(self) -> None:
        """The app watches the venue until the get-in (a few reads of its status board)."""
        venue = self.results["find_venue"]
        with self.tracer.start_as_current_span(f"watch venue {venue}") as span:
            for read in range(1, 4):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    reason = f"the council's fire officer closed {venue} at read {read}"
                    span.add_event("venue closed", {"read": read, "reason": reason})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise TourFailed(reason)
                span.add_event("venue status", {"read": read, "state": "open"})

    def run(self) -> str:
        """The tour under the app's root span; its trace id."""
        with self.tracer.start_as_current_span(
            f"tour {TOUR['title']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attributes({"tour.company": TOUR["company"], "tour.run": self.label.run})
            try:
                self.book()
                root.set_attribute("tour.outcome", "booked")
            except TourFailed as e:
                root.set_attribute("tour.outcome", "failed")
                root.record_exception(e)
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


@contextmanager
def _instrumented(provider: TracerProvider) -> Iterator[None]:
    """OpenInference's LiteLLM instrumentor on ``provider`` while the block runs; LiteLLM's
    functions put back after, so no other agent's LiteLLM call (DSPy's, stocking's) is traced
    by it."""
    logger = logging.getLogger("LiteLLM")  # it warns that the proxy server is not installed
    level = logger.level
    logger.setLevel(logging.ERROR)
    instrumentor = LiteLLMInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()
        logger.setLevel(level)


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the touring scenarios with OpenInference's LiteLLM instrumentor and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    out = {}
    with _instrumented(provider), ModelServer(respond=respond) as server:
        tracer = provider.get_tracer(APP_TRACER)
        url = server.base_url("corpus-touring")
        for label in labels:
            out[label.run] = Tour(label, url, tracer, World(label)).run()
    return out
