"""A primary school's museum field trip, a hand-written planner-executor app on the **Groq
Python SDK** (``Groq(base_url=..., api_key=...)``, ``client.chat.completions.create(...,
tools=[...])``) traced by **OpenInference's Groq instrumentor**
(``GroqInstrumentor().instrument(tracer_provider=...)``: an LLM span per completion), plus the
app's own spans written as a Phoenix user writes them by hand (scope ``fieldtrip-app``;
``openinference.span.kind`` CHAIN for the trip, each plan, each task attempt, the check and the
watch, TOOL for each tool function the app runs for the model; ``input.value`` /
``output.value``), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``: Groq's API is OpenAI's under ``/openai/v1``, so the SDK's base
URL is the server's root and its client segment is ``openai``). No planscope code.

Sealed-62 split only (see README.md). The task: Year 4 of Hollins Lane Primary goes to a museum;
find a museum with a free group slot on the class's day in the city's paged museum listing, get
the trip's insurance certificate (an application, polled), book the coach for the day, pay the
deposit from the parents' association budget, tell the parents.

* the planner is forced to call a ``submit_plan`` tool (``tool_choice`` names it): its
  arguments are the plan, ``{"tasks": [{"task_id", "description", "function", "parameters",
  "depends_on"}]}``; a parameter string may hold a **Jinja-style reference**
  ``{{tasks.<task_id>.output.<field>}}`` to a field of an earlier task's output, filled in by
  the app before the task runs. After a setback the planner submits the tasks still to do
  (their ``depends_on`` may name done tasks, whose outputs the app keeps);
* the executor is one Groq conversation per task attempt, handed the task with its references
  filled in and the task's tools; the app runs the tool calls the model asks for and the model
  answers a JSON object (``response_format`` ``json_object``) ``{"status":
  "done|retry|replan|failed|stalled", "output": {...}, "note": "..."}``;
* the school's services raise :class:`ServiceError`\\ s the app hands the model as the tool's
  result, ``{"error": {"code": ..., "message": ...}}``: ``busy`` (with ``retry_at``: call again
  ``after`` that time, in the same conversation), ``transient`` (the app runs the task again,
  up to 8 attempts), ``conflict`` (with ``use``, ``key=value``: a new plan, up to 4 plans),
  ``rejected`` (final).

The planner trusts the class teacher's notes over the trip form: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from groq import Groq
from groq.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from openinference.instrumentation.groq import GroqInstrumentor
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from tests.conformance.fake_openai import ModelServer, completion

from ._labels import Label

TRIP: dict[str, Any] = {
    "school": "Hollins Lane Primary",
    "class": "Year 4 Kestrels",
    "city": "Leeds",
    "day": "2027-03-18",
    "group": 33,
    "pickup": "Hollins Lane Primary, LS6 4JB",
    "account": "PTA-58214",
    "deposit": 150,
    "parents": "year4-parents@hollinslane.example",
}
GROQ_MODEL = "llama-3.3-70b-versatile"
"""The model the app asks for (the fake server answers any; it echoes the name back)."""
MAX_ATTEMPTS = 8
MAX_PLANS = 4
MAX_TURNS = 24
MAX_READS = 12
"""Certificate-status reads in one conversation before the executor reports it stalled."""
APP_TRACER = "fieldtrip-app"
PLANNER = (
    "You plan a school field trip. Call submit_plan with the tasks; a parameter may refer to "
    "an earlier task's output as {{tasks.<task_id>.output.<field>}}."
)
EXECUTOR = (
    "You carry out one task of a school trip plan with your tools, then answer a JSON object "
    '{"status": "done|retry|replan|failed|stalled", "output": {...}, "note": "..."}.'
)
STATUSES = ("done", "retry", "replan", "failed", "stalled")
REF = re.compile(r"\{\{\s*tasks\.(\w+)\.output\.(\w+)\s*\}\}")
KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
CHAIN = OpenInferenceSpanKindValues.CHAIN.value
TOOL = OpenInferenceSpanKindValues.TOOL.value


class ServiceError(RuntimeError):
    """A school service's refusal; ``code`` is what the model is told."""

    code = "rejected"

    def __init__(self, message: str, **extra: str) -> None:
        super().__init__(message)
        self.extra = extra


class Busy(ServiceError):
    """Busy for now: call again after ``retry_at``."""

    code = "busy"


class Transient(ServiceError):
    """Not this time: the task should be run again."""

    code = "transient"


class Conflict(ServiceError):
    """The plan has to change: ``use`` names the value (``key=value``)."""

    code = "conflict"


class Rejected(ServiceError):
    """Refused for good."""


class TripFailed(RuntimeError):
    """The trip could not be arranged, or went wrong after (the reason is the message)."""


# --- the plan's format --------------------------------------------------------------------
PLAN_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Submit the trip plan: the tasks in order.",
        "parameters": {
            "type": "object",
            "properties": {
                "tasks": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "task_id": {"type": "string"},
                            "description": {"type": "string"},
                            "function": {"type": "string"},
                            "parameters": {"type": "object"},
                            "depends_on": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["task_id", "description", "function", "parameters"],
                    },
                }
            },
            "required": ["tasks"],
        },
    },
}


@dataclass(frozen=True)
class Task:
    task_id: str
    description: str
    function: str
    parameters: dict[str, Any]
    depends_on: tuple[str, ...] = ()


def parse_plan(arguments: str) -> list[Task]:
    """The plan's tasks, from the ``submit_plan`` call's arguments.

    >>> parse_plan('{"tasks": [{"task_id": "a", "description": "d", "function": "f",'
    ...     ' "parameters": {"x": 1}, "depends_on": []}]}')
    [Task(task_id='a', description='d', function='f', parameters={'x': 1}, depends_on=())]
    """
    tasks = json.loads(arguments)["tasks"]
    return [
        Task(
            str(t["task_id"]),
            str(t.get("description", "")),
            str(t["function"]),
            dict(t.get("parameters") or {}),
            tuple(t.get("depends_on") or ()),
        )
        for t in tasks
    ]


def fill(value: Any, outputs: dict[str, dict[str, Any]]) -> Any:
    """A parameter with its references filled in from earlier tasks' outputs; a string that is
    one reference only takes the field's value as it is.

    >>> out = {"find_museum": {"museum_id": "MUS-7", "slot": 10}}
    >>> fill("{{tasks.find_museum.output.museum_id}}", out)
    'MUS-7'
    >>> fill("slot {{ tasks.find_museum.output.slot }} at 9", out)
    'slot 10 at 9'
    """
    if not isinstance(value, str):
        return value
    whole = REF.fullmatch(value.strip())
    if whole:
        return outputs[whole[1]][whole[2]]
    return REF.sub(lambda m: str(outputs[m[1]][m[2]]), value)


def ref(task: str, name: str) -> str:
    return "{{tasks." + task + ".output." + name + "}}"


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _plan(brief: str) -> dict[str, Any]:
    """The planner's ``submit_plan`` arguments: the trip form, the class teacher's notes
    trusted over it; after a ``use key=value`` setback that value; the done tasks left out."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Trip form"]) | json.loads(lines.get("Teacher's notes", "{}"))
    done: dict[str, Any] = json.loads(lines.get("Done", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    museum = ref("find_museum", "museum_id")
    tasks = [
        ("find_museum", f"Find a museum in {facts['city']} with a group slot on the day.",
         "search_museums", {"city": facts["city"], "day": facts["day"], "group": facts["group"]},
         []),
        ("insure_trip", "Get the trip's insurance certificate for the visit.",
         "apply_insurance", {"museum_id": museum, "day": ref("find_museum", "visit_day"),
                             "group": facts["group"]}, ["find_museum"]),
        ("book_coach", "Book the coach from school to the museum.", "book_coach",
         {"museum_id": museum, "day": ref("find_museum", "visit_day"), "pickup": facts["pickup"],
          "seats": int(facts.get("seats", facts["group"]))}, ["find_museum"]),
        ("pay_deposit", "Pay the museum's deposit from the parents' association budget.",
         "pay_deposit", {"museum_id": museum, "account": facts["account"],
                         "amount": facts["deposit"]}, ["find_museum"]),
        ("notify_parents", "Tell the parents about the trip.", "notify_parents",
         {"to": facts["parents"], "museum_id": museum, "day": ref("find_museum", "visit_day"),
          "coach": ref("book_coach", "booking"),
          "certificate": ref("insure_trip", "certificate")},
         ["find_museum", "insure_trip", "book_coach", "pay_deposit"]),
    ]  # fmt: skip
    return {
        "tasks": [
            {
                "task_id": slug,
                "description": what,
                "function": fn,
                "parameters": params,
                "depends_on": after,
            }
            for slug, what, fn, params, after in tasks
            if slug not in done
        ]
    }


def _tool_call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _executor(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The executor's next turn: call the task's function, call again ``after`` a busy
    service, follow ``next_page``, read a pending certificate, answer the JSON report."""
    (line,) = re.findall(r"^Call: (.*)$", order, re.MULTILINE)
    task = json.loads(line)
    turn = len(messages)
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            asked[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in asked:
            calls.append((*asked.pop(m["tool_call_id"]), json.loads(_text(m.get("content")))))

    def report(status: str, output: dict[str, Any] | None = None, note: str = "") -> dict[str, Any]:
        body = {"status": status, "output": output or {}, "note": note}
        return {"role": "assistant", "content": json.dumps(body)}

    if not calls:
        return _tool_call(task["function"], task["parameters"], turn)
    name, called, answer = calls[-1]
    error = answer.get("error")
    if error:
        if error["code"] == "busy":
            return _tool_call(name, called | {"after": error["retry_at"]}, turn)
        status = {"transient": "retry", "conflict": "replan"}.get(error["code"], "failed")
        use = f" (use {error['use']})" if error.get("use") else ""
        return report(status, note=f"{error['code']}: {error['message']}{use}")
    if answer.get("next_page"):
        return _tool_call(name, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "pending":
        reads = sum(c[0] == "insurance_status" for c in calls)
        if reads >= MAX_READS:
            return report("stalled", note=f"application {answer['application']} still pending")
        return _tool_call("insurance_status", {"application": answer["application"]}, turn)
    return report("done", answer, str(answer.pop("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Trip form: " + json.dumps(TRIP)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}], "tools": [PLAN_TOOL]})
    >>> call = msg["choices"][0]["message"]["tool_calls"][0]["function"]
    >>> [t.task_id for t in parse_plan(call["arguments"])][:3]
    ['find_museum', 'insure_trip', 'book_coach']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, _tool_call("submit_plan", _plan(user), len(messages)))
    return completion(body, _executor(messages, user))


# --- the school's services ----------------------------------------------------------------
@dataclass
class World:
    """The museum listing, insurer, coach firm, parents' association budget and parent mail of
    one trip."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    museums: dict[str, str] = field(default_factory=dict)
    applications: dict[str, int] = field(default_factory=dict)
    coaches: list[dict[str, Any]] = field(default_factory=list)
    payments: list[dict[str, Any]] = field(default_factory=list)

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
        if f["kind"] == "busy":
            raise Busy(f["text"], retry_at=f["hint"])
        if f["kind"] == "transient":
            raise Transient(f["text"])
        if f["kind"] == "conflict":
            raise Conflict(f["text"], use=f["hint"])
        raise Rejected(f["text"])

    # the tools: keyword arguments as the model sends them; a dict back, or a ServiceError
    def search_museums(
        self, city: str, day: str, group: int, page: int = 1, after: str = ""
    ) -> dict[str, Any]:
        """Museums in a city with a free school-group slot on a day, a page at a time."""
        self.fault("search_museums")
        code = city[:3].upper()
        if page < int(self.params.get("pages", 1)):
            full = [f"MUS-{code}-{page * 10 + n} (no group slot)" for n in (1, 2)]
            return {"museums": [], "fully_booked": full, "next_page": page + 1}
        museum = f"MUS-{code}-{self.label.seed % 1000}"
        self.museums[museum] = city
        return {"museum_id": museum, "city": city, "visit_day": day, "slot": "10:00"}

    def apply_insurance(
        self, museum_id: str, day: str, group: int, after: str = ""
    ) -> dict[str, Any]:
        """Apply to the council's insurer for a trip certificate (school-term trips only)."""
        self.fault("apply_insurance")
        city = self.museums.get(museum_id, "")
        if city != TRIP["city"]:
            raise Rejected(
                f"the schools policy covers day trips within {TRIP['city']} only; "
                f"{museum_id} is in {city or 'an unknown city'}"
            )
        if day != TRIP["day"]:
            raise Rejected(f"{day} is outside the spring term; the policy covers term days only")
        application = f"INS-{self.label.seed}-{len(self.applications) + 1}"
        self.applications[application] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"application": application, "state": "pending"}
        return {"certificate": application, "state": "issued"}

    def insurance_status(self, application: str, after: str = "") -> dict[str, Any]:
        """Whether the insurer has issued a certificate yet."""
        self.applications[application] += 1
        if self.params.get("stuck") or self.applications[application] < int(
            self.params.get("polls", 0)
        ):
            return {"application": application, "state": "pending"}
        return {"certificate": application, "state": "issued"}

    def book_coach(
        self, museum_id: str, day: str, pickup: str, seats: int, after: str = ""
    ) -> dict[str, Any]:
        """Book a coach from a pickup address to a museum and back on a day."""
        self.fault("book_coach")
        bigger = self.params.get("seats_to")
        if bigger and int(seats) < int(bigger):
            raise Conflict(
                f"no {seats}-seat coach is free that day, a {bigger}-seater is",
                use=f"seats={bigger}",
            )
        booking = f"COACH-{self.label.seed % 900 + 100}"
        self.coaches.append({"booking": booking, "day": day, "pickup": pickup, "seats": int(seats)})
        return {"booking": booking, "day": day, "pickup": pickup, "depart": after or "09:00"}

    def pay_deposit(
        self, museum_id: str, account: str, amount: int, after: str = ""
    ) -> dict[str, Any]:
        """Pay a museum's deposit from a parents' association budget account."""
        self.fault("pay_deposit")
        if account != TRIP["account"] and account not in self.params.get("accounts", ()):
            raise Rejected(f"the parents' association has no budget account {account}")
        receipt = f"PAY-{self.label.seed}-{len(self.payments) + 1}"
        self.payments.append({"museum_id": museum_id, "account": account, "amount": amount})
        return {"receipt": receipt, "amount": amount}

    def notify_parents(
        self, to: str, museum_id: str, day: str, coach: str, certificate: str, after: str = ""
    ) -> dict[str, Any]:
        """E-mail the class's parents the trip letter."""
        self.fault("notify_parents")
        return {"message": f"LETTER-{museum_id}-{day[-2:]}", "to": to}


_INTEGERS = {"page", "group", "seats", "amount"}
_OPTIONAL = {"page", "after"}


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The tool's function schema from its signature (every argument a string but counts)."""
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
    "search_museums": ("search_museums",),
    "apply_insurance": ("apply_insurance", "insurance_status"),
    "book_coach": ("book_coach",),
    "pay_deposit": ("pay_deposit",),
    "notify_parents": ("notify_parents",),
}
"""The tools an executor gets for each kind of task."""


# --- the app ------------------------------------------------------------------------------
def _chain(span: Span, value: Any) -> None:
    span.set_attributes({KIND: CHAIN, SpanAttributes.INPUT_VALUE: _json(value)})
    span.set_attribute(SpanAttributes.INPUT_MIME_TYPE, "application/json")


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _output(span: Span, value: Any) -> None:
    span.set_attributes(
        {
            SpanAttributes.OUTPUT_VALUE: _json(value),
            SpanAttributes.OUTPUT_MIME_TYPE: "text/plain"
            if isinstance(value, str)
            else "application/json",
        }
    )


@dataclass
class Trip:
    """One field trip to arrange."""

    label: Label
    client: Groq
    tracer: Tracer
    world: World
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    plans: int = 0

    def brief(self, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("day", "pickup", "account") if k in self.label.params
        }
        lines = [
            f"Objective: arrange the museum trip of {TRIP['class']}.",
            f"Trip form: {json.dumps(TRIP)}",
        ]
        if notes:
            lines.append(f"Teacher's notes: {json.dumps(notes)}")
        if self.plans:
            lines += [
                f"Revision: {self.plans + 1}",
                f"Done: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, setback: str) -> list[Task]:
        with self.tracer.start_as_current_span("plan trip") as span:
            brief = self.brief(setback)
            _chain(span, {"revision": self.plans + 1, "setback": setback})
            response = self.client.chat.completions.create(
                model=GROQ_MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": brief},
                ],
                tools=cast("list[ChatCompletionToolParam]", [PLAN_TOOL]),
                tool_choice={"type": "function", "function": {"name": "submit_plan"}},
            )
            self.plans += 1
            (call,) = response.choices[0].message.tool_calls or []
            tasks = parse_plan(call.function.arguments)
            _output(span, json.loads(call.function.arguments))
            span.set_attribute("fieldtrip.plan.revision", self.plans)
            return tasks

    def run_tool(self, name: str, arguments: str, allowed: tuple[str, ...]) -> str:
        """Run one tool call the model asked for under the app's own TOOL span; its JSON."""
        with self.tracer.start_as_current_span(name) as span:
            span.set_attributes(
                {
                    KIND: TOOL,
                    SpanAttributes.TOOL_NAME: name,
                    SpanAttributes.INPUT_VALUE: arguments,
                    SpanAttributes.INPUT_MIME_TYPE: "application/json",
                }
            )
            try:
                if name not in allowed:
                    raise Rejected(f"no tool {name} for this task")
                answer = getattr(self.world, name)(**json.loads(arguments or "{}"))
            except ServiceError as e:
                # the model is told what went wrong; the span keeps the error
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, f"{e.code}: {e}"))
                answer = {"error": {"code": e.code, "message": str(e), **e.extra}}
            out = json.dumps(answer)
            _output(span, answer)
            return out

    def attempt(self, task: Task, attempt: int) -> tuple[str, dict[str, Any], str]:
        """One executor conversation for a task: (status, output, note)."""
        params = {k: fill(v, self.outputs) for k, v in task.parameters.items()}
        call = {"function": task.function, "parameters": params}
        with self.tracer.start_as_current_span(f"task {task.task_id}") as span:
            _chain(span, {"task_id": task.task_id, "attempt": attempt, **call})
            span.set_attributes({"fieldtrip.task_id": task.task_id, "fieldtrip.attempt": attempt})
            allowed = TOOLS.get(task.function, ())
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": EXECUTOR},
                {
                    "role": "user",
                    "content": f"Task {task.task_id} (attempt {attempt}): {task.description}\n"
                    f"Call: {json.dumps(call)}",
                },
            ]
            tools = [_schema(getattr(World, n)) for n in allowed]
            content = ""
            for _ in range(MAX_TURNS):
                msg = (
                    self.client.chat.completions.create(
                        model=GROQ_MODEL,
                        messages=cast("list[ChatCompletionMessageParam]", messages),
                        tools=cast("list[ChatCompletionToolParam]", tools),
                        response_format={"type": "json_object"},
                    )
                    .choices[0]
                    .message
                )
                if not msg.tool_calls:
                    content = str(msg.content or "")
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
                    result = self.run_tool(c.function.name, c.function.arguments, allowed)
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": result})
            try:
                report = json.loads(content) if content else {}
            except json.JSONDecodeError:
                report = {"status": "failed", "note": f"unreadable report: {content}"}
            if not content:
                report = {"status": "stalled", "note": f"no report in {MAX_TURNS} turns"}
            status = str(report.get("status", "failed"))
            if status not in STATUSES:
                status = "failed"
            output = dict(report.get("output") or {})
            note = str(report.get("note", ""))
            _output(span, report)
            span.set_attribute("fieldtrip.status", status)
            if status != "done":
                span.set_status(Status(StatusCode.ERROR, f"{status}: {note}"))
            return status, output, note

    def arrange(self) -> None:
        """Plan, run each task (again, or after a new plan), check, watch; raises
        :class:`TripFailed`."""
        tasks = self.plan("")
        while True:
            ready = [t for t in tasks if t.task_id not in self.outputs]
            if not ready:
                break
            task = ready[0]
            for attempt in range(1, MAX_ATTEMPTS + 1):
                status, output, note = self.attempt(task, attempt)
                if status != "retry":
                    break
            if status == "done":
                self.outputs[task.task_id] = output
            elif status == "replan" and self.plans < MAX_PLANS:
                tasks = self.plan(f"task {task.task_id}: {note}")
            else:
                raise TripFailed(f"{task.task_id}: {status}: {note}")
        self.check()
        self.watch()

    def check(self) -> None:
        """The app's own check: the coach collects the class at school on the trip day."""
        with self.tracer.start_as_current_span("check coach booking") as span:
            booking = self.world.coaches[-1]
            _chain(span, booking)
            wrong = [
                f"{k} {booking[k]!r}, the trip form says {TRIP[k]!r}"
                for k in ("day", "pickup")
                if booking[k] != TRIP[k]
            ]
            if wrong:
                reason = f"{booking['booking']}: " + "; ".join(wrong)
                _output(span, {"passed": False, "reason": reason})
                span.set_status(Status(StatusCode.ERROR, reason))
                raise TripFailed(reason)
            _output(span, {"passed": True})

    def watch(self) -> None:
        """The app watches the museum's visitor notices until the trip (a few reads)."""
        museum = self.outputs["find_museum"]["museum_id"]
        with self.tracer.start_as_current_span(f"watch museum {museum}") as span:
            _chain(span, {"museum_id": museum})
            for read in range(1, 4):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    reason = f"{museum} closed its galleries after a burst pipe (read {read})"
                    span.add_event("museum closed", {"read": read, "reason": reason})
                    _output(span, {"state": "closed", "read": read})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise TripFailed(reason)
                span.add_event("museum notice", {"read": read, "state": "open"})
            _output(span, {"state": "open"})

    def run(self) -> str:
        """The trip under the app's root span; its trace id."""
        with self.tracer.start_as_current_span(
            f"field trip {TRIP['class']}", record_exception=False, set_status_on_exception=False
        ) as root:
            _chain(root, {"school": TRIP["school"], "class": TRIP["class"], "day": TRIP["day"]})
            root.set_attribute("fieldtrip.run", self.label.run)
            try:
                self.arrange()
                _output(root, {"outcome": "arranged", "tasks": self.outputs})
            except TripFailed as e:
                _output(root, {"outcome": "failed", "reason": str(e)})
                root.record_exception(e)
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


@contextmanager
def _instrumented(provider: TracerProvider) -> Iterator[None]:
    """OpenInference's Groq instrumentor on ``provider`` while the block runs; the SDK's
    ``create`` put back after."""
    instrumentor = GroqInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the fieldtrip scenarios with OpenInference's Groq instrumentor and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    out = {}
    with _instrumented(provider), ModelServer(respond=respond) as server:
        tracer = provider.get_tracer(APP_TRACER)
        # Groq's routes are OpenAI's under /openai/v1: the server's root is the base URL
        root = server.base_url("openai").removesuffix("/openai/v1")
        client = Groq(base_url=root, api_key="test", max_retries=0)
        for label in labels:
            out[label.run] = Trip(label, client, tracer, World(label)).run()
    return out
