"""A ferry operator's freight desk on the real OpenAI Agents SDK, traced by Logfire
(``logfire.instrument_openai_agents()``: the SDK's traces and spans as Logfire spans, plus the
app's own ``logfire.span`` per booking), against a scripted model on the conformance suite's
fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-28 split only (see README.md). The task: a haulier's lorry lost its sailing to a
cancellation; rebook it. Find a sailing on the route and day in the timetable (read page by
page), hold freight deck space for the lorry on it (the loadmaster confirms later: polled),
lodge the freight manifest for that sailing, charge the fare difference to the haulier's
account, send the driver the boarding pass. Written as the SDK's examples write a
planner-executor app (``financial_research_agent``: a manager class running agents in code):

* one SDK ``trace("ferry rebooking")`` per booking, under the app's ``rebook freight
  {booking}`` Logfire span (which records the exception when the rebooking fails);
* a ``freight_planner`` agent whose ``output_type`` is a :class:`RebookingPlan` (``tasks`` of
  ``task_id``, ``instruction``, ``desk``, ``service``, ``inputs`` as name / value pairs; a value
  ``"=task_id"`` stands for an earlier task's result), asked again after a failure with what
  is done and what went wrong;
* a specialist agent per desk (``timetable_desk``, ``loadmaster``, ``customs_desk``,
  ``billing_desk``, ``driver_desk``), each with its ``function_tool`` services and a
  :class:`TaskReport` ``output_type`` (``status`` done / later / replan / refused / stalled);
  the manager runs the task's desk once per attempt (``Runner.run``);
* the services raise :class:`PortError` texts ``KIND: text``: ``STANDBY`` (the model calls
  again in the same run, asking for a later slot), ``DELAYED`` (the desk answers ``later``:
  the manager runs the task again, up to 8 attempts), ``REBOOK`` (``replan``: the planner is
  asked again, up to 5 plans; its text ends ``use X instead of Y``), ``REFUSED`` (final). The
  model reads them as the SDK's default ``failure_error_function`` hands them over;
* after the last task a ``loading_verifier`` agent (``output_type`` :class:`LoadingVerdict`)
  compares the held lane with the weighbridge ticket, and the app watches the sailing
  (``watch sailing {sailing}``, a ``logfire.info`` per state) until it departs.

The Logfire instance is local to this module (``logfire.configure(local=True,
send_to_logfire=False, console=False)``); its one additional span processor hands each span to
the play's provider's processors during a play, to nothing outside one. During a play the SDK
runs on a trace provider of its own with no processor (nothing goes to OpenAI's platform),
wrapped by ``instrument_openai_agents``; the previous trace provider is put back afterwards.

The planner trusts the dispatcher's notes over the booking: the scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import logfire
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    Runner,
    Tool,
    default_tool_error_function,
    function_tool,
    trace,
)
from agents.tracing import get_trace_provider, set_trace_provider
from agents.tracing.provider import DefaultTraceProvider
from openai import AsyncOpenAI
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import local_logfire

BOOKING: dict[str, Any] = {
    "booking": "FB-20418",
    "route": "Heysham-Warrenpoint",
    "date": "2027-03-14",
    "registration": "KX71 FRT",
    "length_m": 16.5,
    "cargo": "chilled dairy, 22 pallets",
    "account": "HAUL-7730",
    "fare_difference": 142.5,
    "driver_phone": "+44 7700 900418",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_STANDBY = 8
"""STANDBY answers in one desk run before the model stalls."""
MAX_POLLS = 12
"""PENDING hold states the loadmaster checks before it stalls."""
PLANNER = "You plan the rebooking of a freight booking on the ferry network. Answer the plan."
DESK = "You are the {desk} of the ferry operator's freight office. Do the task with your tools."
VERIFIER = "You verify a lorry's loading: compare the deck hold with the weighbridge ticket."
KINDS = ("STANDBY", "DELAYED", "REBOOK", "REFUSED")


# --- the plan, the reports ------------------------------------------------------------------
class TaskInput(BaseModel):
    name: str
    value: str


class PlannedTask(BaseModel):
    task_id: str
    instruction: str
    desk: str
    service: str
    inputs: list[TaskInput]


class RebookingPlan(BaseModel):
    reasoning: str
    tasks: list[PlannedTask]


class TaskReport(BaseModel):
    status: Literal["done", "later", "replan", "refused", "stalled"]
    result: str
    note: str


class LoadingVerdict(BaseModel):
    verified: bool
    issues: str


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


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the booking's facts, the dispatcher's notes trusted over them;
    after a ``use X instead of Y`` problem, every input that was Y (or an earlier result that
    was Y) is X; the tasks already done are left out."""
    fields = dict(re.findall(r"^([A-Z][\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(fields["Booking"]) | json.loads(fields.get("Dispatcher's notes", "{}"))
    done: dict[str, str] = json.loads(fields.get("Done", "{}"))
    swap = re.search(r"use (\S+) instead of (\S+?)\.?$", fields.get("Problem", ""))
    tasks = [
        ("find_sailing", f"Find a sailing on {facts['route']} on {facts['date']} with freight "
         "deck space.", "timetable_desk", "search_timetable",
         {"route": facts["route"], "date": facts["date"]}),
        ("hold_deck", f"Hold {facts['length_m']} m of freight deck for {facts['registration']} "
         "on that sailing.", "loadmaster", "request_deck_space",
         {"sailing": "=find_sailing", "registration": facts["registration"],
          "length_m": facts["length_m"]}),
        ("file_manifest", f"Lodge the freight manifest of {facts['registration']} for the "
         "sailing.", "customs_desk", "lodge_manifest",
         {"sailing": "=find_sailing", "registration": facts["registration"],
          "cargo": facts["cargo"]}),
        ("charge_fare", f"Charge the fare difference of {facts['fare_difference']} GBP to "
         f"account {facts['account']}.", "billing_desk", "charge_account",
         {"account": facts["account"], "amount": facts["fare_difference"],
          "reference": facts["booking"]}),
        ("send_boarding_pass", "Send the driver the boarding pass.", "driver_desk",
         "send_boarding_pass",
         {"phone": facts["driver_phone"], "sailing": "=find_sailing", "hold": "=hold_deck"}),
    ]  # fmt: skip
    out = []
    for task_id, instruction, desk, service, args in tasks:
        if task_id in done:
            continue
        inputs = []
        for name, value in args.items():
            value = str(value)
            if swap and swap.group(2) in (
                value,
                done.get(value[1:], "") if value[:1] == "=" else "",
            ):
                value = swap.group(1)
            inputs.append({"name": name, "value": value})
        out.append(
            {"task_id": task_id, "instruction": instruction, "desk": desk, "service": service,
             "inputs": inputs}
        )  # fmt: skip
    return {"reasoning": f"Rebook {facts['booking']} task by task.", "tasks": out}


def _number(value: str) -> Any:
    try:
        return float(value)
    except ValueError:
        return value


def _report(status: str, result: str = "", note: str = "") -> dict[str, Any]:
    return _say(json.dumps({"status": status, "result": result, "note": note}))


def _desk(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A desk's next turn: call the task's service with its inputs; after ``STANDBY`` call again
    for a later slot; follow ``next_page``; poll a pending hold; report the rest."""
    task = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    service = re.search(r"^Service: (\w+)$", task, re.MULTILINE)
    if not service:
        return _report("refused", note="no service to call")
    args = {k: _number(v) for k, v in re.findall(r"^- (\w+): (.*)$", task, re.MULTILINE)}
    results = [_text(m.get("content")) for m in messages if m.get("role") == "tool"]
    turn = len(messages)
    if not results:
        return _call(service.group(1), args, turn)
    last = results[-1]
    said = re.search(r"error\. (STANDBY|DELAYED|REBOOK|REFUSED): (.*)$", last, re.DOTALL)
    if said:
        kind, text = said.groups()
        if kind == "STANDBY":
            waits = sum("error. STANDBY:" in r for r in results)
            if waits >= MAX_STANDBY:
                return _report("stalled", note=f"still on standby after {waits} calls: {text}")
            slot = 18 * 60 + 30 * waits
            return _call(
                service.group(1), args | {"not_before": f"{slot // 60:02d}:{slot % 60:02d}"}, turn
            )
        status = {"DELAYED": "later", "REBOOK": "replan", "REFUSED": "refused"}[kind]
        return _report(status, note=text)
    if last.startswith("An error occurred"):
        return _report("refused", note=last)
    result = json.loads(last)
    if result.get("next_page"):
        return _call(service.group(1), args | {"page": result["next_page"]}, turn)
    if result.get("state") == "PENDING":
        polls = sum('"PENDING"' in r for r in results)
        if polls > MAX_POLLS:
            return _report(
                "stalled", note=f"hold {result['id']} still PENDING after {MAX_POLLS} checks"
            )
        return _call("deck_hold_status", {"hold": result["id"]}, turn)
    if "sailings" in result:
        free = [s["id"] for s in result["sailings"] if s["freight_lanes_free"] > 0]
        return _report("done", free[0]) if free else _report("refused", note="no sailing has space")
    return _report("done", str(result["id"]))


def _verify(prompt: str) -> dict[str, Any]:
    hold = json.loads(re.search(r"^Deck hold: (.*)$", prompt, re.MULTILINE).group(1))  # type: ignore[union-attr]
    ticket = json.loads(re.search(r"^Weighbridge ticket: (.*)$", prompt, re.MULTILINE).group(1))  # type: ignore[union-attr]
    if hold["lane_m"] < ticket["measured_m"]:
        issues = f"lane of {hold['lane_m']} m held, the lorry measures {ticket['measured_m']} m"
        return _say(json.dumps({"verified": False, "issues": issues}))
    return _say(json.dumps({"verified": True, "issues": ""}))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": DESK.format(desk="x")},
    ...     {"role": "user", "content": "Task t: x\\nService: lodge_manifest\\n- sailing: S"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"sailing": "S"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = _text(messages[0].get("content")) if messages else ""
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if system.startswith(PLANNER):
        message = _say(json.dumps(_plan(user)))
    elif system.startswith(VERIFIER):
        message = _verify(user)
    else:
        message = _desk(messages)
    return completion(body, message)


# --- the world ----------------------------------------------------------------------------
class PortError(RuntimeError):
    """A service's error answer: ``KIND: text`` (one of :data:`KINDS`)."""


def _service_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model reads when a service raised: the port's answer, which is written for the
    desks (the SDK's default hides every error's text); anything else as the SDK's default."""
    if isinstance(error, PortError):
        return f"The service answered an error. {error}"
    return default_tool_error_function(ctx, error)


class RebookingFailed(RuntimeError):
    """The booking could not be rebooked (or its sailing was lost after it was)."""


def _code(route: str) -> str:
    return "-".join(port[:3].upper() for port in route.split("-"))


@dataclass
class World:
    """The timetable, the decks, customs, the ledger and the sailings of one run."""

    label: Label
    task: str = ""
    errors: list[str] = field(default_factory=list)
    sailings: dict[str, str] = field(default_factory=dict)
    holds: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    @property
    def scenario(self) -> str:
        return self.label.scenario

    def fault(self, **carried: Any) -> None:
        """Raise the scenario's next error when this call is in the task it targets; a
        ``{old}`` in it is the account the call carried."""
        if self.errors and self.task == self.label.params.get("task"):
            raise PortError(self.errors.pop(0).format(old=carried.get("account", "")))

    def tools(self) -> dict[str, list[Tool]]:
        """Each desk's services, as ``function_tool``s bound to this run's world."""

        @function_tool(failure_error_function=_service_error)
        def search_timetable(route: str, date: str, page: int = 1) -> str:
            """Sailings on a route on a day, a page at a time.

            Args:
                route: the route, ``Port-Port``.
                date: the sailing day, ISO.
                page: the page of the timetable.
            """
            self.fault()
            pages = int(self.label.params.get("pages", 1))
            stamp = date[5:].replace("-", "")
            if page < pages:
                full = [{"id": f"SL-{_code(route)}-{stamp}-{h:02d}{page}5", "freight_lanes_free": 0}
                        for h in (6, 12)]  # fmt: skip
                return json.dumps({"sailings": full, "next_page": page + 1})
            sailing = f"SL-{_code(route)}-{stamp}-2130"
            self.sailings[sailing] = route
            return json.dumps({"sailings": [{"id": sailing, "freight_lanes_free": 3}]})

        @function_tool(failure_error_function=_service_error)
        def request_deck_space(
            sailing: str, registration: str, length_m: float, not_before: str = ""
        ) -> str:
            """Ask the loadmaster to hold freight deck space on a sailing.

            Args:
                sailing: the sailing's id.
                registration: the vehicle's registration.
                length_m: the lane length to hold, in metres.
                not_before: the earliest slot to be answered in, ``HH:MM``.
            """
            self.fault()
            swap = self.label.params.get("swap_to")
            if swap and sailing.endswith("-2130"):
                new = sailing.replace("-2130", f"-{swap}")
                self.sailings[new] = self.sailings.get(sailing, "")
                raise PortError(
                    f"REBOOK: vessel swap, the 21:30 sails with a smaller freight deck; "
                    f"use {new} instead of {sailing}"
                )
            if sailing not in self.sailings:
                raise PortError(f"REFUSED: no sailing {sailing} in the timetable")
            hold = f"DH-{self.label.seed}-{len(self.holds) + 1}"
            self.holds[hold] = {"sailing": sailing, "registration": registration,
                                "lane_m": length_m}  # fmt: skip
            self.polls[hold] = 0
            waits = "poll" in self.scenario
            state = "PENDING" if waits else "CONFIRMED"
            return json.dumps({"id": hold, "state": state} | ({} if waits else self.holds[hold]))

        @function_tool(failure_error_function=_service_error)
        def deck_hold_status(hold: str) -> str:
            """Whether the loadmaster has confirmed a deck hold.

            Args:
                hold: the hold's id.
            """
            self.polls[hold] += 1
            if self.scenario == "loop_poll_stuck" or self.polls[hold] < int(
                self.label.params.get("polls", 0)
            ):
                return json.dumps({"id": hold, "state": "PENDING"})
            return json.dumps({"id": hold, "state": "CONFIRMED"} | self.holds[hold])

        @function_tool(failure_error_function=_service_error)
        def lodge_manifest(
            sailing: str, registration: str, cargo: str, not_before: str = ""
        ) -> str:
            """Lodge a vehicle's freight manifest with customs for a sailing.

            Args:
                sailing: the sailing's id.
                registration: the vehicle's registration.
                cargo: what the vehicle carries.
                not_before: the earliest slot to be answered in, ``HH:MM``.
            """
            self.fault()
            route = self.sailings.get(sailing, "")
            if route != BOOKING["route"]:
                raise PortError(
                    f"REFUSED: export declaration EX-{self.label.seed} of {registration} is "
                    f"lodged for {BOOKING['route']}, not {route or sailing}"
                )
            return json.dumps({"id": f"MF-{self.label.seed}", "sailing": sailing})

        @function_tool(failure_error_function=_service_error)
        def charge_account(
            account: str, amount: float, reference: str, not_before: str = ""
        ) -> str:
            """Charge an amount to a haulier's account.

            Args:
                account: the haulier's account.
                amount: the amount, GBP.
                reference: the booking charged for.
                not_before: the earliest slot to be answered in, ``HH:MM``.
            """
            self.fault(account=account)
            if account != BOOKING["account"]:
                raise PortError(f"REFUSED: no haulier account {account} on the ledger")
            return json.dumps({"id": f"RC-{self.label.seed}", "amount": amount})

        @function_tool(failure_error_function=_service_error)
        def send_boarding_pass(phone: str, sailing: str, hold: str) -> str:
            """Text the driver the boarding pass for a sailing.

            Args:
                phone: the driver's phone.
                sailing: the sailing's id.
                hold: the deck hold's id.
            """
            self.fault()
            return json.dumps({"id": f"BP-{hold}", "sailing": sailing})

        return {
            "timetable_desk": [search_timetable],
            "loadmaster": [request_deck_space, deck_hold_status],
            "customs_desk": [lodge_manifest],
            "billing_desk": [charge_account],
            "driver_desk": [send_boarding_pass],
        }

    def sailing_states(self, sailing: str) -> list[str]:
        """What the watch sees of a sailing: boarding, then departed (or cancelled)."""
        boarding = ["BOARDING"] * int(self.label.params.get("polls", 1))
        lost = self.scenario.startswith("external_")
        return [*boarding, "CANCELLED" if lost else "DEPARTED"]


# --- the manager ----------------------------------------------------------------------------
class FreightDesk:
    """One booking rebooked: plan, a desk run per task attempt, re-plans, the loading check
    and the watch."""

    def __init__(self, label: Label, model: OpenAIChatCompletionsModel) -> None:
        self.label = label
        self.world = World(label)
        self.planner = Agent(
            name="freight_planner", instructions=PLANNER, model=model, output_type=RebookingPlan
        )
        self.desks = {
            name: Agent(
                name=name,
                instructions=DESK.format(desk=name.replace("_", " ")),
                model=model,
                tools=tools,
                output_type=TaskReport,
            )
            for name, tools in self.world.tools().items()
        }
        self.verifier = Agent(
            name="loading_verifier", instructions=VERIFIER, model=model, output_type=LoadingVerdict
        )

    def brief(self, done: dict[str, str], problem: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("route", "length_m", "account")
            if k in self.label.params
        }
        lines = [
            f"Rebook freight booking {BOOKING['booking']}: its sailing was cancelled.",
            f"Booking: {json.dumps(BOOKING)}",
        ]
        if notes:
            lines.append(f"Dispatcher's notes: {json.dumps(notes)}")
        if done:
            lines.append(f"Done: {json.dumps(done)}")
        if problem:
            lines.append(f"Problem: {problem}")
        return "\n".join(lines)

    async def attempt(self, task: PlannedTask, done: dict[str, str]) -> TaskReport:
        """One run of the task's desk, earlier results filled in."""
        self.world.task = task.task_id
        inputs = "\n".join(
            f"- {i.name}: {done.get(i.value[1:], i.value) if i.value.startswith('=') else i.value}"
            for i in task.inputs
        )
        message = f"Task {task.task_id}: {task.instruction}\nService: {task.service}\n{inputs}"
        result = await Runner.run(self.desks[task.desk], message, max_turns=MAX_POLLS + 10)
        return result.final_output_as(TaskReport)

    async def rebook(self) -> dict[str, str]:
        """Plan and run the tasks, re-planning after a ``replan``; the done tasks' results."""
        done: dict[str, str] = {}
        problem = ""
        for revision in range(1, MAX_PLANS + 1):
            planned = await Runner.run(self.planner, self.brief(done, problem))
            problem = ""
            for task in planned.final_output_as(RebookingPlan).tasks:
                for _ in range(MAX_ATTEMPTS):
                    report = await self.attempt(task, done)
                    if report.status != "later":
                        break
                if report.status == "done":
                    done[task.task_id] = report.result
                    continue
                if report.status == "replan" and revision < MAX_PLANS:
                    problem = f"{task.task_id}: {report.note}"
                    break
                raise RebookingFailed(f"{task.task_id} {report.status}: {report.note}")
            if not problem:
                return done
        raise RebookingFailed(f"no plan worked: {problem}")

    async def check(self, done: dict[str, str], lf: logfire.Logfire) -> None:
        """The loading check by the verifier agent, then the watch of the sailing."""
        hold = self.world.holds[done["hold_deck"]]
        ticket = {"registration": BOOKING["registration"], "measured_m": BOOKING["length_m"]}
        verdict = await Runner.run(
            self.verifier,
            f"Deck hold: {json.dumps(hold)}\nWeighbridge ticket: {json.dumps(ticket)}",
        )
        checked = verdict.final_output_as(LoadingVerdict)
        if not checked.verified:
            raise RebookingFailed(f"loading check failed: {checked.issues}")
        sailing = hold["sailing"]
        with lf.span("watch sailing {sailing}", sailing=sailing):
            for state in self.world.sailing_states(sailing):
                lf.info("sailing {sailing} is {state}", sailing=sailing, state=state)
                if state == "CANCELLED":
                    raise RebookingFailed(
                        f"sailing {sailing} cancelled: storm in the North Channel"
                    )

    async def run(self, lf: logfire.Logfire) -> str:
        """Rebook the booking under the app's span; the OTel trace id (the run's name for it)."""
        trace_id = ""
        try:
            with lf.span(
                "rebook freight {booking}", booking=BOOKING["booking"], route=BOOKING["route"]
            ) as root:
                trace_id = format(otel_trace.get_current_span().get_span_context().trace_id, "032x")
                with trace("ferry rebooking", group_id=BOOKING["booking"]):
                    done = await self.rebook()
                    await self.check(done, lf)
                root.set_attribute("outcome", "rebooked")
        except RebookingFailed:
            pass  # recorded on the booking's span by Logfire
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the ferry scenarios with Logfire's spans handed to ``provider``'s processors; run
    name -> trace id."""
    if not labels:
        return {}
    # The Agents SDK's trace provider is global and instrument_openai_agents wraps it for good:
    # the play runs on a fresh one (no processor: nothing exported to OpenAI's platform) and
    # puts the previous one back, so other agents' SDK runs never reach Logfire.
    previous = get_trace_provider()
    set_trace_provider(DefaultTraceProvider())
    try:
        with local_logfire("freight-desk", provider) as lf:
            lf.instrument_openai_agents()
            with ModelServer(respond=respond) as server:
                client = AsyncOpenAI(
                    base_url=server.base_url("corpus-ferry"), api_key="test", max_retries=0
                )
                model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)

                async def all_runs() -> dict[str, str]:
                    return {label.run: await FreightDesk(label, model).run(lf) for label in labels}

                return asyncio.run(all_runs())
    finally:
        set_trace_provider(previous)
