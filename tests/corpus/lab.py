"""A clinical-lab sample-scheduling agent on smolagents, traced by OpenInference's smolagents
instrumentor (``openinference-instrumentation-smolagents``): smolagents' own
``OpenAIServerModel`` against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``; the instrumentor traces only smolagents' own model classes, so a
custom ``Model`` subclass would give no LLM spans). No planscope code.

Sealed-7 split only (see README.md). The task: a blood sample comes in with a clinician's
order; register it in the LIMS, find a free analyzer for the assay at the sample's site (a
catalogue read page by page), book it, run the assay (a job, polled until it has a result),
send the report to the clinician. As a smolagents user would write it:

* the app opens one OTel span per sample (``schedule {sample}``) and records the outcome;
* a ``lab_planner`` ``ToolCallingAgent`` (no tools of its own) answers the plan through
  ``final_answer`` as **arrow lines** ``n) slug -> tool {json args}``; an argument
  ``"$slug"`` stands for that earlier step's result, substituted by the app;
* a ``lab_executor`` ``ToolCallingAgent`` run per step attempt, its task ``Step n/N slug``,
  the goal and the call to make; tool errors reach the model as smolagents' ``Error:``
  messages, and their exception class says what they are: ``Transient`` (the model calls
  again with a longer timeout), ``Unavailable`` (the model answers ``FAILED``, the app re-runs
  the step), ``Rerouted`` (``REPLAN``: the app asks the planner again for the steps not done),
  ``Rejected`` (final);
* after the last step the app checks the report against the order (``verify report``) and
  watches it (``watch report``), both plain OTel spans.

The planner trusts the requisition notes over the order: the scenario's wrong value comes from
a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from smolagents import LogLevel, OpenAIServerModel, Tool, ToolCallingAgent, tool

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

ORDER: dict[str, Any] = {
    "patient": "MRN-220417",
    "assay": "CBC",
    "site": "central",
    "volume_ul": 50,
    "clinician": "dr.osei@stmarys.example",
}
SAMPLE_VOLUME_UL = 120
MAX_STEP_ATTEMPTS = 8
MAX_PLAN_VERSIONS = 4
MAX_STATUS_CHECKS = 12
RESULTS = {
    "CBC": "WBC 6.1 x10^9/L",
    "BMP": "Na 139 mmol/L",
    "LFT": "ALT 22 U/L",
    "TSH": "2.1 mIU/L",
}


class Transient(RuntimeError):
    """A passing error: the model calls the tool again."""


class Unavailable(RuntimeError):
    """A service is down for now: the executor run fails and the app re-runs the step."""


class Rerouted(RuntimeError):
    """The world changed under the plan: the app asks the planner again."""


class Rejected(RuntimeError):
    """A final error: the sample cannot go on."""


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _answer(text: str) -> dict[str, Any]:
    return _call("final_answer", {"answer": text})


def _plan(brief: str) -> str:
    """The planner's arrow lines: the order's facts, the requisition notes trusted over them."""
    fields = dict(re.findall(r"^(\w[\w ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(fields["Order"]) | json.loads(fields.get("Requisition notes", "{}"))
    done = set(json.loads(fields.get("Done", "[]")))
    moved = re.search(r"use analyzer (AN-\d+)", fields.get("Failure", ""))
    steps = [
        ("register_sample", "lims_register",
         {"sample_id": facts["sample"], "assay": facts["assay"], "patient": facts["patient"]}),
        ("find_analyzer", "analyzer_catalog", {"assay": facts["assay"], "site": facts["site"]}),
        ("book_slot", "book_analyzer",
         {"instrument": moved.group(1) if moved else "$find_analyzer",
          "accession": "$register_sample"}),
        ("run_assay", "start_assay", {"booking": "$book_slot", "volume_ul": facts["volume_ul"]}),
        ("send_report", "send_report",
         {"accession": "$register_sample", "result": "$run_assay",
          "clinician": facts["clinician"]}),
    ]  # fmt: skip
    lines = [f"Plan for sample {facts['sample']} ({facts['assay']}):"]
    todo = [s for s in steps if s[0] not in done]
    for n, (slug, tool_name, args) in enumerate(todo, 1):
        lines.append(f"{n}) {slug} -> {tool_name} {json.dumps(args)}")
    return "\n".join(lines)


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call the task names, call again after a transient error
    with a longer timeout, follow ``next_page``, poll a run until it is done, report."""
    call = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert call, task
    tool_name, call_args = call.group(1), json.loads(call.group(2))
    # smolagents merges consecutive user messages: the newest error or observation is the
    # last block of the last message
    last = _text(messages[-1].get("content"))
    error_at, seen_at = last.rfind("Error:\n"), last.rfind("Observation:\n")
    if error_at > seen_at:
        error = re.search(r"\b(Transient|Unavailable|Rerouted|Rejected): (.*)", last[error_at:])
        kind, text = (error.group(1), error.group(2)) if error else ("", last[error_at:])
        if kind == "Transient":
            retries = sum(_text(m.get("content")).count("Error:\n") for m in messages)
            return _call(tool_name, call_args | {"timeout_s": 30 * 2**retries})
        verdict = {"Unavailable": "FAILED", "Rerouted": "REPLAN"}.get(kind, "REJECTED")
        return _answer(f"{verdict}: {text}")
    if seen_at >= 0:
        seen, _ = json.JSONDecoder().raw_decode(last[seen_at:].removeprefix("Observation:").strip())
        if "next_page" in seen:
            return _call(tool_name, call_args | {"page": seen["next_page"]})
        if seen.get("status") in ("QUEUED", "RUNNING"):
            checks = sum(
                "assay_status" in json.dumps(m.get("tool_calls") or m.get("content"))
                for m in messages
                if m.get("role") == "assistant"
            )
            if checks >= MAX_STATUS_CHECKS:
                return _answer(
                    f"GIVING UP: run {seen['job']} still {seen['status']} after {checks} checks"
                )
            return _call("assay_status", {"job": seen["job"]})
        return _answer(f"RESULT: {json.dumps(seen.get('value'))}")
    return _call(tool_name, call_args)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: a plan for the planner's
    brief, the executor's next tool call otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'New task:\\nCall: f {"a": 1}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    'f'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if "Objective: " in task:
        return completion(body, _answer(_plan(task)))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The LIMS, analyzer catalogue, bookings, assay runs and report inbox of a run."""

    label: Label
    sample: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=dict)
    registered: dict[str, str] = field(default_factory=dict)
    """Accession -> assay registered."""
    analyzers: dict[str, str] = field(default_factory=dict)
    """Analyzer -> its site."""
    bookings: dict[str, str] = field(default_factory=dict)
    """Booking -> the accession's assay."""
    reported: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise Rejected(text)
        how = self.params.get("raise")
        if how == "retry":
            raise Transient(text)
        if how == "replans" and len(self.errors) % 2 == 0:
            raise Rerouted(
                f"{text}; analyzer pool rebalanced, use analyzer AN-{400 + len(self.errors)}"
            )
        raise Unavailable(text)


def make_tools(world: World) -> list[Tool]:
    """The LIMS and instrument tools, bound to one run's world."""

    @tool
    def lims_register(sample_id: str, assay: str, patient: str, timeout_s: int = 30) -> str:
        """Register a sample in the LIMS for an assay; its accession number.

        Args:
            sample_id: the tube's barcode
            assay: the assay code ordered
            patient: the patient's record number
            timeout_s: how long to wait for the LIMS
        """
        world.fault()
        accession = f"ACC-{world.label.seed}"
        world.registered[accession] = assay
        return json.dumps({"value": accession})

    @tool
    def analyzer_catalog(assay: str, site: str, page: int = 1, timeout_s: int = 30) -> str:
        """The analyzers at a site that run an assay, a page at a time.

        Args:
            assay: the assay code
            site: the lab site
            page: the catalogue page
            timeout_s: how long to wait for the catalogue
        """
        world.fault()
        pages = int(world.params.get("pages", 1))
        if page < pages:
            busy = {"analyzer": f"AN-{100 + page}", "site": site, "free": False}
            return json.dumps({"analyzers": [busy], "next_page": page + 1})
        name = f"AN-{100 + pages}" if site == ORDER["site"] else f"AN-{site[0].upper()}{pages}"
        world.analyzers[name] = site
        return json.dumps({"value": name})

    @tool
    def book_analyzer(instrument: str, accession: str, timeout_s: int = 30) -> str:
        """Book a run slot on an analyzer for a registered sample.

        Args:
            instrument: the analyzer
            accession: the sample's accession number
            timeout_s: how long to wait for the scheduler
        """
        world.fault()
        replacement = world.params.get("replacement")
        if replacement and instrument != replacement:
            raise Rerouted(
                f"analyzer {instrument} is down for maintenance; use analyzer {replacement}"
            )
        site = world.analyzers.get(instrument, ORDER["site"])
        if site != ORDER["site"]:
            raise Rejected(
                f"analyzer {instrument} is at {site}; sample {world.sample} is stored at "
                f"{ORDER['site']}"
            )
        booking = f"BK-{world.label.seed}-{len(world.bookings)}"
        world.bookings[booking] = world.registered.get(accession, "")
        return json.dumps({"value": booking})

    @tool
    def start_assay(booking: str, volume_ul: int, timeout_s: int = 30) -> str:
        """Start the assay run of a booking with an aliquot of the sample.

        Args:
            booking: the booking
            volume_ul: the aliquot in microlitres
            timeout_s: how long to wait for the analyzer
        """
        world.fault()
        if volume_ul > SAMPLE_VOLUME_UL:
            raise Rejected(
                f"run needs {volume_ul} ul but sample {world.sample} holds {SAMPLE_VOLUME_UL} ul"
            )
        job = f"RUN-{booking[3:]}"
        world.polls[job] = 0
        return json.dumps({"job": job, "status": "QUEUED", "assay": world.bookings[booking]})

    @tool
    def assay_status(job: str) -> str:
        """The state of an assay run; its result once done.

        Args:
            job: the run
        """
        world.polls[job] += 1
        if world.label.scenario == "loop_poll_stuck" or world.polls[job] < int(
            world.params.get("polls", 1)
        ):
            return json.dumps({"job": job, "status": "RUNNING"})
        assay = world.bookings[f"BK-{job[4:]}"]
        return json.dumps({"job": job, "status": "DONE", "value": RESULTS.get(assay, "")})

    @tool
    def send_report(accession: str, result: str, clinician: str, timeout_s: int = 30) -> str:
        """Send a sample's result to the ordering clinician.

        Args:
            accession: the sample's accession number
            result: the assay's result
            clinician: the clinician's address
            timeout_s: how long to wait for the mail gateway
        """
        world.fault()
        world.reported = world.registered.get(accession, "")
        return json.dumps({"value": f"RPT-{world.label.seed}"})

    return [lims_register, analyzer_catalog, book_analyzer, start_assay, assay_status, send_report]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The sample could not be reported (the reason is the message)."""


def _steps(plan: str) -> list[dict[str, Any]]:
    """The plan's arrow lines: ``n``, ``slug``, ``tool``, ``args``."""
    pattern = r"^(\d+)\) (\w+) -> (\w+) (\{.*\})$"
    return [
        {"n": int(n), "slug": slug, "tool": tool_name, "args": json.loads(args)}
        for n, slug, tool_name, args in re.findall(pattern, plan, re.MULTILINE)
    ]


class Scheduler:
    """One sample, from the order to the watched report."""

    def __init__(self, label: Label, model: OpenAIServerModel):
        self.label = label
        self.world = World(label, sample=f"S-{label.seed % 9000 + 1000}")
        quiet = LogLevel.OFF
        self.planner = ToolCallingAgent(
            tools=[], model=model, name="lab_planner", verbosity_level=quiet
        )
        self.executor = ToolCallingAgent(
            tools=make_tools(self.world),
            model=model,
            name="lab_executor",
            max_steps=20,
            verbosity_level=quiet,
        )

    def brief(self, done: dict[str, str], failure: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("site", "assay", "volume_ul")
            if k in self.label.params
        }
        lines = [
            f"Objective: Run the ordered assay on sample {self.world.sample} and report it.",
            f"Order: {json.dumps(ORDER | {'sample': self.world.sample})}",
        ]
        if notes:
            lines.append(f"Requisition notes: {json.dumps(notes)}")
        if done:
            lines.append(f"Done: {json.dumps(sorted(done))}")
        if failure:
            lines.append(f"Failure: {failure}")
        return "\n".join(lines)

    def attempt(self, step: dict[str, Any], total: int, done: dict[str, str]) -> str:
        """One executor run of a step: its result, or the model's verdict as an exception."""
        args = {
            k: done.get(v[1:], v) if isinstance(v, str) and v.startswith("$") else v
            for k, v in step["args"].items()
        }
        task = f"Step {step['n']}/{total} {step['slug']}\nCall: {step['tool']} {json.dumps(args)}"
        self.world.step = step["slug"]
        said = str(self.executor.run(task, reset=True))
        if said.startswith("RESULT: "):
            return str(json.loads(said.removeprefix("RESULT: ")))
        verdict, _, why = said.partition(": ")
        if verdict == "FAILED":
            raise Unavailable(why)
        if verdict == "REPLAN":
            raise Rerouted(why)
        raise Failed(f"{step['slug']}: {said}")

    def schedule(self) -> None:
        done: dict[str, str] = {}
        failure = ""
        for version in range(1, MAX_PLAN_VERSIONS + 1):
            plan = _steps(str(self.planner.run(self.brief(done, failure), reset=True)))
            failure = ""
            for step in plan:
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    try:
                        done[step["slug"]] = self.attempt(step, len(plan), done)
                        break
                    except Unavailable as e:
                        if attempt == MAX_STEP_ATTEMPTS:
                            raise Failed(f"{step['slug']}: {e}") from e
                    except Rerouted as e:
                        if version == MAX_PLAN_VERSIONS:
                            raise Failed(f"{step['slug']}: {e}") from e
                        failure = f"{step['slug']}: {e}"
                        break
                if failure:
                    break
            if not failure:
                return
        raise Failed(failure)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks after the report: its assay, then the report's fate."""
        with tracer.start_as_current_span("verify report") as span:
            span.set_attribute("lab.assay.ordered", ORDER["assay"])
            span.set_attribute("lab.assay.reported", self.world.reported)
            if self.world.reported != ORDER["assay"]:
                reason = (
                    f"report is for {self.world.reported}, the order asked for {ORDER['assay']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch report") as span:
            for poll in range(1, 5):
                if self.label.scenario == "external_recall" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = "report withdrawn: the run's reagent lot was recalled by its maker"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("report", {"poll": poll, "state": "ACKNOWLEDGED"})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"schedule {self.world.sample}") as root:
            root.set_attribute("lab.sample", self.world.sample)
            try:
                self.schedule()
                self.check(tracer)
                root.set_attribute("lab.outcome", "reported")
            except Failed as e:
                root.set_attribute("lab.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the lab scenarios with OpenInference's smolagents instrumentor on ``provider``."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            model = OpenAIServerModel(MODEL, api_base=server.base_url("corpus-lab"), api_key="test")
            tracer = provider.get_tracer("lab-app")
            for label in labels:
                out[label.run] = Scheduler(label, model).run(tracer)
    finally:
        instrumentor.uninstrument()
    return out
