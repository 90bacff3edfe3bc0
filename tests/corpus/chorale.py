"""A chamber choir's concert-tour desk on DSPy, traced by MLflow's DSPy autologging
(``mlflow.dspy.autolog()`` from the lightweight ``mlflow-tracing`` SDK) and the app's own
``mlflow.start_span`` spans: DSPy's own ``dspy.LM`` (through LiteLLM) against a scripted model on
the conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-67 split only (see README.md). The task: book one concert of the choir's spring tour;
find a hall with a rehearsal room in the concert city that seats the audience (a venue
directory read page by page), put a hold on it for the concert day (the venue's booking office
confirms later: polled), hire the coach for the singers from the coach depot, invoice the tour's
sponsor for the hall fee, tell the singers. As a DSPy user on a platform team that runs Argo
would write it:

* the app opens one MLflow ``AGENT`` span per concert (``tour booking {concert}``); a failed
  booking raises inside it, so MLflow records the exception and the ``ERROR`` status;
* a ``TourPlanner`` module (``dspy.ChainOfThought`` over a ``PlanTour`` signature) answers the
  plan as an **Argo Workflows DAG** (``kind: Workflow``, a ``dag`` template whose ``tasks`` each
  have a ``name``, a ``template`` naming the tool, ``dependencies`` and ``arguments.parameters``
  of ``name`` / ``value``; a value ``{{tasks.<name>.outputs.result}}`` or
  ``{{tasks.<name>.outputs.parameters.<field>}}`` is an earlier task's result or one of its
  outputs, filled in by the app). Asked again after a failure, it answers a new Workflow
  (annotation ``chorale/revision``) of the tasks still to do, references to done tasks kept;
* a ``TaskRunner`` module (``dspy.ReAct`` over a ``RunTask`` signature) run per task attempt,
  its input the task as YAML with the values filled in, its answer an Argo-like ``phase``
  (``Succeeded`` / ``Rerun`` / ``Replan`` / ``Failed`` / ``Stalled``), ``result``, ``outputs``
  (JSON) and ``message``; a tool's exception reaches the model as ReAct's ``Execution error in
  {tool}`` observation (with the traceback);
* the services raise **``«marking» text`` faults named after score markings**: ``«fermata»
  ...; hold until HH:MM`` (the model calls again in the same run ``after`` that time), ``«da
  capo»`` (the runner answers ``Rerun``, the app runs the task again, up to 8 attempts),
  ``«modulate» ... (use key=value)`` (``Replan``: a new Workflow, up to 5), ``«tacet»``
  (final);
* after the last task the app checks the venue hold against the tour itinerary (``check venue
  hold``, a ``GUARDRAIL`` span) and watches the concert's ticketing (``watch concert``, a span
  whose readings are span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider); DSPy autologging is turned off when the play returns. The planner
trusts the tour manager's notes over the itinerary: the scenario's wrong value comes from a
note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import mlflow
import mlflow.dspy
import yaml
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

# customs sets LiteLLM's local price list before importing dspy; its ChatAdapter field helpers
# are the ones this scripted model reads and writes
from .customs import _answer, _fields, _trajectory, dspy
from .museum import _mlflow_provider, _Relay

ITINERARY: dict[str, Any] = {
    "choir": "Cantilena Chamber Choir",
    "programme": "Bach motets and Part",
    "city": "Leipzig",
    "date": "2027-05-14",
    "audience": 420,
    "singers": 38,
    "depot": "Halle coach depot",
    "sponsor_account": "SPN-52817",
    "singers_list": "singers@cantilena.example",
}
CITIES = ("Leipzig", "Dresden", "Erfurt", "Magdeburg")
MAX_TASK_ATTEMPTS = 8
MAX_REVISIONS = 5
MAX_STATUS_CHECKS = 12
REACT_ITERS = 20
FAULT = re.compile(r"TourFault: «([a-z ]+)» (.*)$", re.MULTILINE)
REF = re.compile(r"^\{\{tasks\.([\w-]+)\.outputs\.(result|parameters\.(\w+))\}\}$")


class TourFault(RuntimeError):
    """A service's fault: ``«marking» text``."""

    def __init__(self, marking: str, text: str):
        super().__init__(f"«{marking}» {text}")


# --- the program's signatures and modules ---------------------------------------------------
class PlanTour(dspy.Signature):
    """Plan the booking of one tour concert as an Argo Workflows DAG (YAML): one task per
    service call, its template the tool, its arguments as parameters; refer to an earlier task's
    result as {{tasks.<name>.outputs.result}} or {{tasks.<name>.outputs.parameters.<field>}}.
    After a failure, answer a new Workflow of the tasks still to do."""

    itinerary: str = dspy.InputField(desc="the tour itinerary for this concert (JSON)")
    manager_notes: str = dspy.InputField(desc="the tour manager's notes (JSON)")
    done: str = dspy.InputField(desc="tasks already done and their outputs (JSON)")
    failure: str = dspy.InputField(desc="why the last task could not be done, if any")
    workflow: str = dspy.OutputField(desc="the Argo Workflow (YAML)")


class RunTask(dspy.Signature):
    """Run one task of the tour workflow with the tour services and report its phase."""

    task: str = dspy.InputField(desc="the task, its parameters filled in (YAML)")
    phase: Literal["Succeeded", "Rerun", "Replan", "Failed", "Stalled"] = dspy.OutputField()
    result: str = dspy.OutputField(desc="the task's result (an id) when it succeeded")
    outputs: str = dspy.OutputField(desc="the task's output parameters (JSON object)")
    message: str = dspy.OutputField(desc="what went wrong, if anything")


class TourPlanner(dspy.Module):
    """Writes the tour workflow, and a new one after a failure."""

    def __init__(self) -> None:
        super().__init__()
        self.plan = dspy.ChainOfThought(PlanTour)

    def forward(self, itinerary: str, manager_notes: str, done: str, failure: str) -> Any:
        return self.plan(
            itinerary=itinerary, manager_notes=manager_notes, done=done, failure=failure
        )


class TaskRunner(dspy.Module):
    """Runs one workflow task (one ReAct run per attempt)."""

    def __init__(self, tools: list[Any]) -> None:
        super().__init__()
        self.act = dspy.ReAct(RunTask, tools=tools, max_iters=REACT_ITERS)

    def forward(self, task: str) -> Any:
        return self.act(task=task)


# --- the plan: an Argo Workflows DAG ----------------------------------------------------------
def _task(name: str, template: str, after: list[str], params: dict[str, Any]) -> dict[str, Any]:
    task: dict[str, Any] = {"name": name, "template": template}
    if after:
        task["dependencies"] = after
    parameters = [{"name": k, "value": str(v)} for k, v in params.items()]
    task["arguments"] = {"parameters": parameters}
    return task


def workflow_tasks(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """The DAG's tasks for a concert's facts (the manager's notes trusted over the itinerary).

    >>> [t["name"] for t in workflow_tasks(ITINERARY)][:2]
    ['find-venue', 'hold-venue']
    """
    venue = "{{tasks.find-venue.outputs.result}}"
    hold = "{{tasks.hold-venue.outputs.result}}"
    return [
        _task("find-venue", "search_venues", [],
              {"city": facts["city"], "seats": facts["audience"], "needs": "rehearsal room"}),
        _task("hold-venue", "request_hold", ["find-venue"],
              {"venue": venue, "date": facts["date"]}),
        _task("book-coach", "book_coach", ["hold-venue"],
              {"venue": venue, "date": "{{tasks.hold-venue.outputs.parameters.date}}",
               "depot": facts["depot"], "seats": facts["singers"]}),
        _task("invoice-sponsor", "invoice_sponsor", ["hold-venue"],
              {"account": facts["sponsor_account"], "hold": hold,
               "amount": "{{tasks.hold-venue.outputs.parameters.fee}}"}),
        _task("notify-choir", "notify_choir", ["book-coach", "invoice-sponsor"],
              {"to": facts["singers_list"], "venue": venue,
               "coach": "{{tasks.book-coach.outputs.result}}"}),
    ]  # fmt: skip


def workflow(concert: str, revision: int, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """An Argo Workflow whose entrypoint is a DAG of ``tasks``."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {
            "generateName": f"{concert.lower()}-",
            "annotations": {"chorale/revision": str(revision)},
        },
        "spec": {
            "entrypoint": "concert",
            "templates": [{"name": "concert", "dag": {"tasks": tasks}}],
        },
    }


def dag_tasks(text: str) -> list[dict[str, Any]]:
    """The entrypoint DAG's tasks of a Workflow, in an order their dependencies allow (ties
    in the order written).

    >>> dag_tasks(yaml.safe_dump(workflow("C-1", 1, workflow_tasks(ITINERARY))))[-1]["name"]
    'notify-choir'
    """
    doc = yaml.safe_load(text)
    entry = doc["spec"]["entrypoint"]
    (template,) = [t for t in doc["spec"]["templates"] if t["name"] == entry]
    tasks: list[dict[str, Any]] = list(template["dag"]["tasks"])
    names = {t["name"] for t in tasks}
    ordered: list[dict[str, Any]] = []
    while tasks:
        placed = {t["name"] for t in ordered}
        ready = next(
            t
            for t in tasks
            if all(d in placed or d not in names for d in t.get("dependencies", []))
        )
        ordered.append(ready)
        tasks.remove(ready)
    return ordered


def parameters(task: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: str(p["value"]) for p in task.get("arguments", {}).get("parameters", [])}


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _planner(fields: dict[str, str]) -> dict[str, Any]:
    """A new Workflow: every task at first; after a failure the tasks not done, with the value
    the failure names (``(use key=value)``) in the open tasks that take that parameter."""
    facts = json.loads(fields["itinerary"]) | json.loads(fields.get("manager_notes") or "{}")
    done = json.loads(fields.get("done") or "{}")
    failure = fields.get("failure", "")
    use = re.search(r"\(use (\w+)=([^)]+)\)", failure)
    renamed = {"account": "sponsor_account"}
    if use:
        facts[renamed.get(use.group(1), use.group(1))] = use.group(2)
    tasks = [t for t in workflow_tasks(facts) if t["name"] not in done]
    for task in tasks:
        task["dependencies"] = [d for d in task.get("dependencies", []) if d not in done]
        if not task["dependencies"]:
            del task["dependencies"]
    revision = int(facts.get("revision", 1))
    why = (
        f"After {failure!r}: the {len(tasks)} tasks still to do."
        if failure
        else "Five tasks: the hall, its hold, the coach, the sponsor's invoice, the singers."
    )
    text = yaml.safe_dump(workflow(facts["concert"], revision, tasks), sort_keys=False, width=200)
    return _answer(reasoning=why, workflow=text)


def _fault(observation: str) -> tuple[str, str] | None:
    """The marking and text of a failed call's observation (the traceback's last line)."""
    if not observation.startswith("Execution error in "):
        return None
    found = FAULT.findall(observation)
    return found[-1] if found else ("tacet", observation.splitlines()[-1])


def _step(fields: dict[str, str], final: bool) -> dict[str, Any]:
    """The runner's turn: the next tool call (ReAct's next_* fields), or, when ``final``, its
    report (the extract's fields)."""
    task = yaml.safe_load(fields["task"])
    calls = [c for c in _trajectory(fields) if c[0] != "finish"]

    def call(thought: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return _answer(next_thought=thought, next_tool_name=name, next_tool_args=json.dumps(args))

    def finish(thought: str) -> dict[str, Any]:
        return call(thought, "finish", {})

    def report(phase: str, message: str, answer: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = answer or {}
        outputs = {k: v for k, v in answer.items() if k not in ("value", "status")}
        return _answer(
            reasoning=f"The task is {phase}.",
            phase=phase,
            result=str(answer.get("value", "")),
            outputs=json.dumps(outputs),
            message=message,
        )

    if not calls:
        return call(f"Start with {task['template']}.", task["template"], task["parameters"])
    name, args, seen = calls[-1]
    fault = _fault(seen)
    if fault:
        marking, text = fault
        if marking == "fermata" and not final:
            until = re.search(r"hold until (\d\d:\d\d)", text)
            return call("Held; calling again after the time named.", name,
                        args | {"after": until.group(1) if until else "later"})  # fmt: skip
        if final:
            phase = {"da capo": "Rerun", "modulate": "Replan"}.get(marking, "Failed")
            return report(phase, f"«{marking}» {text}")
        return finish(f"The service answered «{marking}»; reporting.")
    answer = json.loads(seen)
    if "next_page" in answer:
        return call("More halls.", name, args | {"page": answer["next_page"]})
    if answer.get("status") == "Pending":
        checks = sum(1 for c in calls if c[0] == "hold_status")
        if checks < MAX_STATUS_CHECKS:
            return call("The booking office has not confirmed yet.", "hold_status",
                        {"request": answer["request"]})  # fmt: skip
        if final:
            why = f"hold request {answer['request']} still Pending after {checks} status checks"
            return report("Stalled", why)
        return finish("The booking office is not answering; giving up.")
    if final:
        return report("Succeeded", "", answer)
    return finish("The task is done.")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one DSPy request: the planner's Workflow, the
    runner's next ReAct step, or the runner's report, told apart by the output fields the system
    message asks for.

    >>> task = yaml.safe_dump({"template": "f", "parameters": {"a": "1"}})
    >>> ask = {"messages": [{"role": "system", "content": "1. `next_tool_name` (str)"},
    ...                     {"role": "user", "content": f"[[ ## task ## ]]\\n{task}"}]}
    >>> respond(ask)["choices"][0]["message"]["content"].split("\\n")[4]
    'f'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
    user = next((str(m.get("content")) for m in messages[::-1] if m.get("role") == "user"), "")
    fields = _fields(user)
    if "`workflow`" in system:
        return completion(body, _planner(fields))
    return completion(body, _step(fields, final="`next_tool_name`" not in system))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The venue directory, the halls' booking offices, the coach depots, the sponsor's finance
    desk and the choir's mailing list."""

    label: Label
    concert: str
    faults: list[dict[str, str]] = field(default_factory=list)
    holds: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Hold request -> its venue, date, fee and status polls."""
    venues: dict[str, str] = field(default_factory=dict)
    """Venue id -> its city."""
    coaches: dict[str, dict[str, Any]] = field(default_factory=dict)
    invoices: dict[str, dict[str, Any]] = field(default_factory=dict)
    sent: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault when the call is to the tool it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        fault = self.faults.pop(0)
        kind, text = fault["kind"], fault["text"]
        if kind == "fermata":
            raise TourFault("fermata", f"{text}; hold until {fault['hint']}")
        if kind == "modulate":
            raise TourFault("modulate", f"{text} (use {fault['hint']})")
        raise TourFault(kind.replace("-", " "), text)


def make_tools(world: World) -> list[Any]:
    """The tour services, bound to one concert's world."""

    def search_venues(city: str, seats: str, needs: str = "", page: int = 1) -> str:
        """Search the venue directory for halls in a city, a page at a time.

        Args:
            city: the concert city
            seats: the audience the hall must seat
            needs: what else the hall must have
            page: the result page
        """
        world.fault("search_venues")
        pages = int(world.params.get("pages", 1))
        if int(page) < pages:
            small = [f"{city[:3].upper()}-{page}{n}" for n in range(3)]
            return json.dumps({"too_small": small, "next_page": int(page) + 1})
        venue = f"{city[:3].upper()}-H{world.label.seed % 97:02d}"
        world.venues[venue] = city
        return json.dumps({"value": venue, "city": city, "seats": int(seats) + 60})

    def request_hold(venue: str, date: str, after: str = "") -> str:
        """Ask a hall's booking office to hold it for the concert day.

        Args:
            venue: the hall's id
            date: the concert day (YYYY-MM-DD)
            after: call again after this time (HH:MM), when told to hold
        """
        world.fault("request_hold")
        request = f"HR-{world.label.seed}-{len(world.holds) + 1}"
        fee = 4200 if world.venues.get(venue) == ITINERARY["city"] else 3900
        world.holds[request] = {"venue": venue, "date": date, "fee": fee, "polls": 0}
        return json.dumps({"request": request, "status": "Pending"})

    def hold_status(request: str) -> str:
        """The state of a hold request; the hold once confirmed.

        Args:
            request: the hold request
        """
        hold = world.holds[request]
        hold["polls"] += 1
        if world.params.get("stuck") or hold["polls"] < int(world.params.get("polls", 1)):
            return json.dumps({"request": request, "status": "Pending"})
        return json.dumps(
            {"status": "Confirmed", "value": request.replace("HR-", "HOLD-"),
             "date": hold["date"], "fee": hold["fee"]}
        )  # fmt: skip

    def book_coach(venue: str, date: str, depot: str, seats: str, after: str = "") -> str:
        """Hire a coach from a depot to take the singers to the hall on the concert day.

        Args:
            venue: the hall's id
            date: the concert day (YYYY-MM-DD)
            depot: the coach depot
            seats: the seats needed
            after: call again after this time (HH:MM), when told to hold
        """
        world.fault("book_coach")
        city = world.venues.get(venue, "")
        if city != ITINERARY["city"]:
            raise TourFault(
                "tacet",
                f"the tour's coach contract covers the {ITINERARY['depot']} - "
                f"{ITINERARY['city']} route only; no coach to {venue} in {city}",
            )
        if world.params.get("depot_to") and depot != world.params["depot_to"]:
            raise TourFault(
                "modulate",
                f"all coaches at {depot} are out on {date} (use depot={world.params['depot_to']})",
            )
        booking = f"CO-{world.label.seed % 1000:03d}{len(world.coaches) + 1}"
        world.coaches[booking] = {"venue": venue, "date": date, "depot": depot}
        return json.dumps({"value": booking, "depot": depot, "departs": "15:30"})

    def invoice_sponsor(account: str, hold: str, amount: str, after: str = "") -> str:
        """Invoice the tour's sponsor for a hall's fee.

        Args:
            account: the sponsor's account
            hold: the hall's hold
            amount: the fee in EUR
            after: call again after this time (HH:MM), when told to hold
        """
        world.fault("invoice_sponsor")
        if account != ITINERARY["sponsor_account"] and account not in world.params.get(
            "accounts", ()
        ):
            raise TourFault("tacet", f"no sponsorship agreement on account {account}")
        invoice = f"INV-{world.label.seed}-{len(world.invoices) + 1}"
        world.invoices[invoice] = {"account": account, "hold": hold, "amount": amount}
        return json.dumps({"value": invoice, "amount": amount})

    def notify_choir(to: str, venue: str, coach: str, after: str = "") -> str:
        """Mail the singers the hall and the coach.

        Args:
            to: the singers' mailing list
            venue: the hall's id
            coach: the coach booking
            after: call again after this time (HH:MM), when told to hold
        """
        world.fault("notify_choir")
        world.sent.append(to)
        return json.dumps({"value": f"MSG-{world.label.seed}-{len(world.sent)}"})

    return [search_venues, request_hold, hold_status, book_coach, invoice_sponsor, notify_choir]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The concert was not booked and held (the reason is the message)."""


class TourDesk:
    """One concert, from the itinerary to the watched ticketing."""

    def __init__(self, label: Label):
        self.label = label
        self.concert = f"CC-{label.seed % 10000:04d}"
        self.world = World(label, concert=self.concert)
        self.planner = TourPlanner()
        self.runner = TaskRunner(make_tools(self.world))
        self.done: dict[str, dict[str, Any]] = {}
        """Task name -> its result and outputs."""

    def plan(self, revision: int, failure: str) -> list[dict[str, Any]]:
        notes = {
            k: self.label.params[k]
            for k in ("city", "date", "sponsor_account")
            if k in self.label.params
        }
        answer = self.planner(
            itinerary=json.dumps({"concert": self.concert, "revision": revision} | ITINERARY),
            manager_notes=json.dumps(notes),
            done=json.dumps(self.done),
            failure=failure,
        )
        return dag_tasks(answer.workflow)

    def filled(self, value: str) -> str:
        """A parameter value with an earlier task's result or output filled in."""
        ref = REF.match(value)
        if not ref:
            return value
        done = self.done[ref.group(1)]
        return str(done["result"] if ref.group(3) is None else done["outputs"][ref.group(3)])

    def attempt(self, task: dict[str, Any]) -> Any:
        """One runner run of a task, its references filled from done tasks."""
        args = {k: self.filled(v) for k, v in parameters(task).items()}
        shown = {"name": task["name"], "template": task["template"], "parameters": args}
        return self.runner(task=yaml.safe_dump(shown, sort_keys=False, width=200))

    def work(self) -> None:
        failure = ""
        for revision in range(1, MAX_REVISIONS + 1):
            tasks = self.plan(revision, failure)
            failure = ""
            for task in tasks:
                for attempt in range(1, MAX_TASK_ATTEMPTS + 1):
                    report = self.attempt(task)
                    if report.phase == "Succeeded":
                        outputs = json.loads(report.outputs or "{}")
                        self.done[task["name"]] = {"result": report.result, "outputs": outputs}
                        break
                    if report.phase == "Rerun" and attempt < MAX_TASK_ATTEMPTS:
                        continue
                    if report.phase == "Replan" and revision < MAX_REVISIONS:
                        failure = f"{task['name']}: {report.message}"
                        break
                    raise Failed(f"{task['name']}: {report.phase}: {report.message}")
                if failure:
                    break
            if not failure:
                return
        raise Failed(failure)

    def check(self) -> None:
        """The app's own checks once the singers are told: the hold against the itinerary,
        then the concert's ticketing up to the day."""
        hold = self.done["hold-venue"]
        with mlflow.start_span(name="check venue hold", span_type=SpanType.GUARDRAIL) as span:
            span.set_inputs({"hold": hold["result"], "itinerary_date": ITINERARY["date"]})
            span.set_outputs({"held_for": hold["outputs"].get("date")})
            if hold["outputs"].get("date") != ITINERARY["date"]:
                raise Failed(
                    f"hold {hold['result']} is for {hold['outputs'].get('date')}, the itinerary "
                    f"has the concert on {ITINERARY['date']} (coach "
                    f"{self.done['book-coach']['result']} booked)"
                )
        with mlflow.start_span(name="watch concert") as span:
            span.set_inputs({"hold": hold["result"]})
            sold = (120, 236, 318, 391, 412)
            for read, tickets in enumerate(sold, 1):
                if self.label.scenario == "external_power" and read > int(
                    self.label.params["reads"]
                ):
                    raise Failed(
                        f"{self.done['find-venue']['result']}: a power cut closes the hall; the "
                        "venue cancels the concert"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("ticketing", attributes={"read": read, "sold": tickets})  # type: ignore[abstract]
                )
            span.set_outputs({"sold": sold[-1]})

    def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"tour booking {self.concert}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ITINERARY | {"concert": self.concert})
                self.work()
                self.check()
                root.set_outputs({"outcome": "booked"})
        except Failed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the chorale scenarios under MLflow's DSPy autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = [logging.getLogger(n) for n in ("mlflow", "dspy.predict.react")]
    levels = [q.level for q in quiet]
    for q in quiet:  # ReAct warns on every failed tool call; the spans carry them
        q.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.dspy.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            lm = dspy.LM(
                f"openai/{MODEL}",
                api_base=server.base_url("corpus-chorale"),
                api_key="test",
                cache=False,
            )
            with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
                return {label.run: TourDesk(label).run() for label in labels}
    finally:
        mlflow.dspy.autolog(disable=True, silent=True)
        _Relay.target = None
        for q, level in zip(quiet, levels, strict=True):
            q.setLevel(level)
