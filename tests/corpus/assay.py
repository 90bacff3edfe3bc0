"""A mining company's geology team sending a batch of drill-core samples for assay, written by
hand on the **Google Gen AI SDK** (``google-genai``, no agent framework), traced by the **official
OpenTelemetry contrib instrumentation** ``opentelemetry-instrumentation-google-genai``
(``GoogleGenAiSdkInstrumentor().instrument(tracer_provider=...)``; message content on spans
through ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``, as its README tells)
plus the app's own plain OpenTelemetry spans (scope ``assay-app``: a root per batch, a span per
plan and per step attempt, a check and a watch). The model: a scripted model behind the
corpus's fake Gemini API (:mod:`tests.corpus._fake_gemini`). No planscope code.

Sealed-58 split only (see README.md). The job: find an accredited lab for the batch's method in
the lab registry of its region (read page by page), book the courier for the sample crates from
the camp's core yard to the lab, submit the assay and poll the lab's job until the certificate
is issued, pay the lab's invoice from the exploration budget, send the site geologist the
certificate. As a Gemini user writes it:

* the planner is one ``generate_content`` call answering a **bullet outline with ``after:``
  dependencies**: a top bullet a step, ``- <slug>: <goal> (after: <slug>, ...)``, its indented
  bullets the function (``- call: <function>``) and one ``- <param>: <value>`` an argument,
  ``{slug}`` an earlier step's result; the app runs the next step whose ``after:`` steps are
  done. After a ``REPLAN`` answer the planner is asked again with the steps done and every
  setback so far; it answers the outline again, the done steps as ``- <slug> [done]: <result>``;
* each step attempt is one ``client.models.generate_content`` call with the services' methods
  as Python-callable tools and the SDK's **automatic function calling on** (the SDK runs each
  call and sends the ``function_response`` back: ``{"result": ...}``, or ``{"error": <text>}``
  when the method raised, the SDK's ``Failed to invoke function ...`` text around the fault), as
  a team that wants the instrumentation's ``execute_tool`` spans writes it: its README says it
  traces the calls the SDK runs for ``generate_content``, and a chat (``chats.create``) runs its
  own loop whose calls it does not see. The model ends with an **outcome line**
  ``<DONE|RESUBMIT|REPLAN|VOID|STALLED> | <value> | <note>``;
* the services raise :class:`AssayFault` ``ASSAY-<KIND>: text``: ``HOLD ... retry after
  HH:MM`` (the model calls again ``after`` that time, in the same chat), ``RESUBMIT`` (the app
  runs the step again, up to eight attempts), ``REROUTE ... (use key=value)`` (the app asks for
  a new plan, up to five), ``VOID`` (final). The executor follows the registry's ``next_page``
  and polls a queued assay job, answering ``STALLED`` after :data:`MAX_POLLS` reads.

The planner trusts the site geologist's notes over the job card: a scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from google import genai
from google.genai import types
from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from ._fake_gemini import MODEL, GeminiServer, Parts, function_call, function_calls, texts
from ._labels import Label

TRACER = "assay-app"
JOB: dict[str, Any] = {
    "batch": "DH-KAL-0412",
    "prospect": "Kalgoorlie North",
    "region": "Goldfields",
    "method": "FA50-AAS",
    "crates": 14,
    "site": "Bulong camp core yard",
    "pickup_day": "2027-03-16",
    "budget": "EXP-2291-GF",
    "geologist": "r.okafor@ironbark-mining.example",
}
NOTED = ("region", "pickup_day", "budget")
"""The job-card fields the site geologist's notes may correct."""
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_POLLS = 12
"""Assay-job reads in one chat before the executor reports the job stalled."""
MAX_CALLS = 30
"""The SDK's ``maximum_remote_calls`` for one chat turn (its default, 10, is below a long poll)."""
CONTENT_ON_SPANS = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}
"""The instrumentation's documented setting: prompts, answers and tool arguments on the spans
(the team reads its traces, not log events); no events."""
PLANNER = (
    "You plan an ore-sample assay job. Answer a bullet outline: one top bullet per step, "
    "'- slug: goal (after: earlier slugs)', its indented bullets '- call: function' and one "
    "'- param: value' per argument; '{slug}' is an earlier step's result."
)
EXECUTOR = (
    "You are the geology team's assay clerk. Carry out the one step you are given with the "
    "functions, then answer one line: DONE | <result> | <note>, or RESUBMIT, REPLAN, VOID or "
    "STALLED | | <why>."
)
OUTCOMES = ("DONE", "RESUBMIT", "REPLAN", "VOID", "STALLED")


class AssayFault(RuntimeError):
    """A service's refusal, ``ASSAY-<KIND>: text``."""


class BatchFailed(RuntimeError):
    """The batch could not be assayed (or failed after it was)."""


@dataclass
class Step:
    """One step of the outline: its function, its arguments (``{slug}`` an earlier result) and
    the steps it comes after."""

    slug: str
    goal: str
    call: str
    args: dict[str, Any]
    after: list[str]


# --- the outline --------------------------------------------------------------------------
def _value(text: str) -> Any:
    return int(text) if text.isdigit() else text


def outline(steps: list[Step], done: dict[str, str], revision: int) -> str:
    """The planner's outline text.

    >>> print(outline([Step("courier", "Book it", "book_courier", {"lab": "{lab}"}, ["lab"])],
    ...     {"lab": "LAB-GOL-1"}, 2))
    Assay plan for batch DH-KAL-0412, revision 2
    - lab [done]: LAB-GOL-1
    - courier: Book it (after: lab)
      - call: book_courier
      - lab: {lab}
    """
    lines = [f"Assay plan for batch {JOB['batch']}, revision {revision}"]
    lines += [f"- {slug} [done]: {result}" for slug, result in done.items()]
    for s in steps:
        after = f" (after: {', '.join(s.after)})" if s.after else ""
        lines.append(f"- {s.slug}: {s.goal}{after}")
        lines.append(f"  - call: {s.call}")
        lines += [f"  - {k}: {v}" for k, v in s.args.items()]
    return "\n".join(lines)


def parse_outline(text: str) -> tuple[list[Step], dict[str, str]]:
    """The open steps and the done steps' results of an outline.

    >>> steps, done = parse_outline(
    ...     "- lab [done]: LAB-1\\n- courier: Book (after: lab)\\n  - call: book_courier\\n"
    ...     "  - lab: {lab}\\n  - crates: 14")
    >>> done, steps[0].call, steps[0].args, steps[0].after
    ({'lab': 'LAB-1'}, 'book_courier', {'lab': '{lab}', 'crates': 14}, ['lab'])
    """
    steps: list[Step] = []
    done: dict[str, str] = {}
    for line in text.splitlines():
        if top := re.match(r"^- (\w+) \[done\]: (.*)$", line):
            done[top[1]] = top[2].strip()
        elif top := re.match(r"^- (\w+): (.*?)(?: \(after: ([\w, ]+)\))?$", line):
            after = [a.strip() for a in (top[3] or "").split(",") if a.strip()]
            steps.append(Step(top[1], top[2], "", {}, after))
        elif (sub := re.match(r"^\s+- (\w+): (.*)$", line)) and steps:
            if sub[1] == "call":
                steps[-1].call = sub[2].strip()
            else:
                steps[-1].args[sub[1]] = _value(sub[2].strip())
    return steps, done


def resolve(args: dict[str, Any], done: dict[str, str]) -> dict[str, Any]:
    """A step's arguments with each ``{slug}`` replaced by that step's result.

    >>> resolve({"lab": "{lab}", "crates": 14}, {"lab": "LAB-GOL-1"})
    {'lab': 'LAB-GOL-1', 'crates': 14}
    """
    return {
        k: re.sub(r"\{(\w+)\}", lambda m: done.get(m[1], m[0]), v) if isinstance(v, str) else v
        for k, v in args.items()
    }


# --- the scripted model -------------------------------------------------------------------
def uses(setbacks: list[str]) -> dict[str, str]:
    """The values the setbacks say to use, the later over the earlier.

    >>> uses(["courier: ASSAY-REROUTE: track cut (use site=Kanowna core shed)"])
    {'site': 'Kanowna core shed'}
    """
    return {m[1]: m[2] for s in setbacks if (m := re.search(r"\(use (\w+)=([^)]+)\)", s))}


def _plan(brief: str) -> str:
    """The planner's outline: the job card's facts, the geologist's notes trusted over them,
    every value a setback says to use; the done steps listed with their results."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Job card"]) | json.loads(lines.get("Geologist's notes", "{}"))
    facts |= uses(re.findall(r"^Setback: (.*)$", brief, re.MULTILINE))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    revision = int(lines.get("Revision", "1"))
    steps = [
        Step("lab", f"find a lab accredited for {facts['method']} in the {facts['region']} "
             "registry", "find_lab", {"region": facts["region"], "method": facts["method"]}, []),
        Step("courier", f"book the courier for {facts['crates']} crates from {facts['site']} "
             f"on {facts['pickup_day']}", "book_courier",
             {"lab": "{lab}", "site": facts["site"], "day": facts["pickup_day"],
              "crates": facts["crates"]}, ["lab"]),
        Step("assay", f"submit the batch for {facts['method']} and wait for the certificate",
             "submit_assay", {"lab": "{lab}", "consignment": "{courier}",
                              "method": facts["method"]}, ["lab", "courier"]),
        Step("pay", f"pay the lab's invoice from budget {facts['budget']}", "pay_invoice",
             {"lab": "{lab}", "certificate": "{assay}", "budget": facts["budget"]},
             ["lab", "assay"]),
        Step("notify", "send the site geologist the certificate", "notify_geologist",
             {"email": facts["geologist"], "certificate": "{assay}", "lab": "{lab}"},
             ["assay", "pay"]),
    ]  # fmt: skip
    return outline([s for s in steps if s.slug not in done], done, revision)


def _answer(outcome: str, value: str = "", note: str = "") -> Parts:
    return [{"text": f"{outcome} | {value} | {note}"}]


def _executor(contents: list[dict[str, Any]]) -> Parts:
    """The clerk's next turn: make the step's call, call again ``after`` a hold, follow
    ``next_page``, read a queued assay job, answer the outcome line."""
    order = texts((contents[0] if contents else {}).get("parts") or [])
    found = re.search(r"^Call: (\w+) (\{.*\})$", order, re.MULTILINE)
    if not found:
        return _answer("VOID", note="no call in the order")
    calls = function_calls(contents)
    if not calls:
        return function_call(found[1], json.loads(found[2]))
    last = calls[-1]
    if "error" in last.response:
        error = str(last.response["error"])
        kind = re.search(r"ASSAY-(\w+):", error)  # the SDK wraps it: "Failed to invoke ..."
        if kind and kind[1] == "HOLD":
            after = re.search(r"retry after (\d\d:\d\d)", error)
            return function_call(last.name, last.args | {"after": after[1] if after else "later"})
        outcome = {"RESUBMIT": "RESUBMIT", "REROUTE": "REPLAN"}.get(kind[1] if kind else "", "VOID")
        return _answer(outcome, note=error)
    result = dict(last.response.get("result") or {})
    if result.get("next_page"):
        return function_call(last.name, last.args | {"page": result["next_page"]})
    if result.get("state") == "queued":
        reads = sum(c.name == "assay_status" for c in calls)
        if reads >= MAX_POLLS:
            return _answer("STALLED", note=f"assay job {result['job']} queued after {reads} reads")
        return function_call("assay_status", {"job": result["job"]})
    return _answer("DONE", str(result["ref"]), str(result.get("note", "")))


def respond(body: dict[str, Any]) -> Parts:
    """The scripted model's turn for one request body.

    >>> body = {"systemInstruction": {"parts": [{"text": PLANNER}]},
    ...     "contents": [{"role": "user", "parts": [{"text": "Job card: " + json.dumps(JOB)}]}]}
    >>> print(respond(body)[0]["text"].splitlines()[5])
    - courier: book the courier for 14 crates from Bulong camp core yard on 2027-03-16 (after: lab)
    """
    system = texts((body.get("systemInstruction") or {}).get("parts") or [])
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    if system.startswith("You plan"):
        return [{"text": _plan(texts((contents[0] if contents else {}).get("parts") or []))}]
    return _executor(contents)


# --- the services -------------------------------------------------------------------------
@dataclass
class Field:
    """The lab registry, the courier, the lab's LIMS, finance and the mail of one batch."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    labs: dict[str, str] = field(default_factory=dict)
    bookings: list[dict[str, Any]] = field(default_factory=list)
    jobs: dict[str, int] = field(default_factory=dict)
    payments: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, function: str) -> None:
        """Raise the scenario's next fault when ``function`` is the one it targets."""
        if not self.faults or function != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = f"ASSAY-{f['kind']}: {f['text']}"
        if f["kind"] == "HOLD":
            raise AssayFault(f"{text}; retry after {f['hint']}")
        if f["kind"] == "REROUTE":
            raise AssayFault(f"{text} (use {f['hint']})")
        raise AssayFault(text)

    def find_lab(self, region: str, method: str, page: int = 1) -> dict[str, Any]:
        """Labs in a region's registry accredited for an assay method, a page at a time."""
        self.fault("find_lab")
        if page < int(self.params.get("pages", 1)):
            full = [f"LAB-{region[:3].upper()}-{page}{n}" for n in (1, 2)]
            return {"labs": [], "at_capacity": full, "next_page": page + 1}
        lab = f"LAB-{region[:3].upper()}-{self.label.seed}"
        self.labs[lab] = region
        return {"ref": lab, "region": region, "method": method, "turnaround_days": 6}

    def book_courier(
        self, lab: str, site: str, day: str, crates: int, after: str = ""
    ) -> dict[str, Any]:
        """Book the courier to carry sample crates from a site to a lab on a day."""
        self.fault("book_courier")
        moved = self.params.get("site_to")
        if moved and site == JOB["site"]:
            raise AssayFault(
                f"ASSAY-REROUTE: the track into {site} is washed out (use site={moved})"
            )
        region = self.labs.get(lab, "")
        if region != JOB["region"]:
            raise AssayFault(
                f"ASSAY-VOID: the courier's {JOB['region']} network does not reach {lab} "
                f"({region or 'unknown'} region)"
            )
        consignment = f"CN-{self.label.seed}-{len(self.bookings) + 1}"
        self.bookings.append({"consignment": consignment, "lab": lab, "site": site, "day": day})
        return {"ref": consignment, "day": day, "pickup": after or "07:30", "crates": crates}

    def submit_assay(
        self, lab: str, consignment: str, method: str, after: str = ""
    ) -> dict[str, Any]:
        """Submit a consignment's samples to a lab for an assay method."""
        self.fault("submit_assay")
        job = f"AJ-{self.label.seed}-{len(self.jobs) + 1}"
        self.jobs[job] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"job": job, "state": "queued"}
        return {"ref": f"CERT-{self.label.seed}", "state": "certified", "job": job}

    def assay_status(self, job: str) -> dict[str, Any]:
        """Whether the lab has certified an assay job yet."""
        self.jobs[job] = self.jobs.get(job, 0) + 1
        if self.params.get("stuck") or self.jobs[job] < int(self.params.get("polls", 0)):
            return {"job": job, "state": "queued"}
        return {"ref": f"CERT-{self.label.seed}", "state": "certified", "job": job}

    def pay_invoice(
        self, lab: str, certificate: str, budget: str, after: str = ""
    ) -> dict[str, Any]:
        """Pay a lab's assay invoice from an exploration budget code."""
        self.fault("pay_invoice")
        if budget != JOB["budget"] and budget not in self.params.get("budgets", ()):
            raise AssayFault(f"ASSAY-VOID: finance holds no exploration budget {budget}")
        voucher = f"PV-{self.label.seed}-{len(self.payments) + 1}"
        self.payments.append({"voucher": voucher, "lab": lab, "budget": budget})
        return {"ref": voucher, "budget": budget, "amount": 3185.5}

    def notify_geologist(
        self, email: str, certificate: str, lab: str, after: str = ""
    ) -> dict[str, Any]:
        """Email the site geologist an assay certificate."""
        self.fault("notify_geologist")
        return {"ref": f"MSG-{certificate}", "to": email, "at": after or "now"}

    def tools(self) -> list[Any]:
        return [
            self.find_lab,
            self.book_courier,
            self.submit_assay,
            self.assay_status,
            self.pay_invoice,
            self.notify_geologist,
        ]


# --- the app ------------------------------------------------------------------------------
class Batch:
    """One batch: plans and step attempts under the app's root span, then its check and watch."""

    def __init__(self, label: Label, client: genai.Client, tracer: Tracer) -> None:
        self.label = label
        self.world = Field(label)
        self.client = client
        self.tracer = tracer
        self.revision = 0

    def brief(self, done: dict[str, str], setbacks: list[str]) -> str:
        notes = {k: self.label.params[k] for k in NOTED if k in self.label.params}
        lines = [
            f"Objective: assay batch {JOB['batch']} from {JOB['prospect']} (job "
            f"A-{self.label.seed}).",
            f"Job card: {json.dumps(JOB)}",
        ]
        if notes:
            lines.append(f"Geologist's notes: {json.dumps(notes)}")
        if self.revision:
            lines += [f"Revision: {self.revision + 1}", f"Done: {json.dumps(done)}"]
            lines += [f"Setback: {s}" for s in setbacks]
        return "\n".join(lines)

    def plan(self, done: dict[str, str], setbacks: list[str]) -> list[Step]:
        """Ask the planner for the outline (again, with the steps done and the setbacks)."""
        brief = self.brief(done, setbacks)
        self.revision += 1
        with self.tracer.start_as_current_span(f"plan revision {self.revision}") as span:
            span.set_attribute("assay.revision", self.revision)
            if setbacks:
                span.set_attribute("assay.setback", setbacks[-1])
            response = self.client.models.generate_content(
                model=MODEL,
                contents=brief,
                config=types.GenerateContentConfig(system_instruction=PLANNER),
            )
            steps, _ = parse_outline(response.text or "")
            span.set_attribute("assay.steps", [s.slug for s in steps])
            if not steps:
                raise BatchFailed(f"the planner answered no steps: {response.text}")
            return steps

    def attempt(self, step: Step, attempt: int, done: dict[str, str]) -> tuple[str, str]:
        """One chat for a step under the app's step span; its outcome and text."""
        args = resolve(step.args, done)
        order = (
            f"Step {step.slug} (attempt {attempt}): {step.goal}\n"
            f"Call: {step.call} {json.dumps(args)}"
        )
        config = types.GenerateContentConfig(
            system_instruction=EXECUTOR,
            tools=self.world.tools(),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(
                maximum_remote_calls=MAX_CALLS
            ),
        )
        with self.tracer.start_as_current_span(f"step {step.slug}") as span:
            span.set_attribute("assay.step", step.slug)
            span.set_attribute("assay.attempt", attempt)
            span.set_attribute("assay.call", f"{step.call} {json.dumps(args)}")
            response = self.client.models.generate_content(
                model=MODEL, contents=order, config=config
            )
            said = (response.text or "").strip()
            outcome, value, note = ([*(p.strip() for p in said.split("|")), "", ""])[:3]
            if outcome not in OUTCOMES:
                outcome, note = "STALLED", f"no outcome line: {said[:200]}"
            span.set_attribute("assay.outcome", outcome)
            if outcome != "DONE":
                span.set_status(Status(StatusCode.ERROR, f"{outcome}: {note}"))
            return outcome, value if outcome == "DONE" else note

    def carry_out(self) -> dict[str, str]:
        """Run the next step whose ``after:`` steps are done (again after ``RESUBMIT``), plan
        again after ``REPLAN``; the steps' results."""
        done: dict[str, str] = {}
        setbacks: list[str] = []
        steps = self.plan(done, setbacks)
        while steps:
            ready = [s for s in steps if all(a in done for a in s.after)]
            if not ready:
                raise BatchFailed(f"no step is ready: {[s.slug for s in steps]}")
            step = ready[0]
            for attempt in range(1, MAX_ATTEMPTS + 1):
                outcome, text = self.attempt(step, attempt, done)
                if outcome != "RESUBMIT":
                    break
            if outcome == "DONE":
                done[step.slug] = text
                steps = [s for s in steps if s.slug != step.slug]
            elif outcome == "REPLAN" and self.revision < MAX_PLANS:
                setbacks.append(f"{step.slug}: {text}")
                steps = self.plan(done, setbacks)
            else:
                raise BatchFailed(f"{step.slug}: {outcome}: {text}")
        return done

    def check(self) -> None:
        """The app's check: the courier collects on the job card's pickup day."""
        with self.tracer.start_as_current_span("check courier booking") as span:
            booking = self.world.bookings[-1]
            span.set_attribute("assay.consignment", booking["consignment"])
            span.set_attribute("assay.pickup_day", booking["day"])
            span.set_attribute("job.pickup_day", JOB["pickup_day"])
            if booking["day"] != JOB["pickup_day"]:
                span.set_status(Status(StatusCode.ERROR, "pickup day differs from the job card"))
                raise BatchFailed(
                    f"consignment {booking['consignment']} is collected on {booking['day']}, "
                    f"the job card's pickup day is {JOB['pickup_day']}"
                )

    def watch(self, certificate: str) -> None:
        """The app's watch of the certificate in the lab's portal: a read a day."""
        with self.tracer.start_as_current_span(f"watch certificate {certificate}") as span:
            reads = int(self.label.params.get("reads", 2))
            for read in range(1, reads + 2):
                if self.label.scenario.startswith("external_") and read > reads:
                    span.add_event("certificate", {"read": read, "state": "recalled"})
                    span.set_status(Status(StatusCode.ERROR, "certificate recalled"))
                    raise BatchFailed(
                        f"the lab recalled {certificate}: a certified reference standard in its "
                        "fire-assay run failed QC"
                    )
                span.add_event("certificate", {"read": read, "state": "issued"})

    def run(self) -> str:
        """Assay the batch under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"assay batch {JOB['batch']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attribute("assay.batch", JOB["batch"])
            root.set_attribute("assay.job", f"A-{self.label.seed}")
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                done = self.carry_out()
                self.check()
                self.watch(done["assay"])
            except BatchFailed as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("assay.outcome", "failed")
            else:
                root.set_attribute("assay.outcome", "certified")
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the assay scenarios with the instrumentation's and the app's spans on ``provider``;
    run name -> trace id. The environment the instrumentation reads (and the one it sets,
    ``OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT``) is put back afterwards."""
    if not labels:
        return {}
    keys = [*CONTENT_ON_SPANS, "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT"]
    before = {k: os.environ.get(k) for k in keys}
    os.environ.update(CONTENT_ON_SPANS)
    instrumentor = GoogleGenAiSdkInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with GeminiServer(respond) as server:
            client = genai.Client(
                api_key="test", http_options=types.HttpOptions(base_url=server.base_url)
            )
            return {label.run: Batch(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
