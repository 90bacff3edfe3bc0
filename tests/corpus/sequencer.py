"""A genomics core facility's sequencing order on **Haystack** 3.x, traced by **MLflow's Haystack
autologging** (the ``mlflow-tracing`` package's ``HaystackSpanProcessor`` behind Haystack's
OpenTelemetry tracer, content tracing on) plus the app's own ``mlflow.start_span`` spans,
against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)`` behind Haystack's ``OpenAIChatGenerator``). No planscope code.

Sealed-71 split only (see README.md). The task: a lab group's sequencing order comes in; pull the
project's sample batch from the facility's intake queue (read page by page), run the library QC
(a Bioanalyzer job, polled until it passes), book a flow-cell lane on a sequencer for the run
date, send the leftover samples to the biobank with the cold-chain courier, charge the run to
the group's grant account, tell the group. As a bioinformatics team writes it:

* the planner is a Haystack ``Pipeline``: a ``ChatPromptBuilder`` into an
  ``OpenAIChatGenerator`` into the app's own ``WorkflowReader`` component, which reads the
  model's **Snakemake workflow**: ``rule <name>:`` blocks with ``input:`` naming earlier rules'
  outputs (``batch=rules.pull_samples.output.batch``), ``params:`` the call's literal arguments
  (``lane=2, date="2027-03-09"``), ``output:`` what the rule yields and a ``run:`` line naming
  the LIMS call (``lims.book_lane(**input, **params)``), then ``rule all:``. Asked again after
  trouble, the workflow opens with ``# revision n`` / ``# because: ...`` comments and a
  ``# settled <rule>: <result>`` comment per rule done, then only the rules not done;
* the app runs the rules in dependency order (a small regex parser and a topological order;
  no Snakemake), one executor ``Agent`` run per rule attempt (its ``user_prompt`` rendered
  with the call, its inputs filled in), its tools ``@tool`` functions over the facility's
  services, tool failures handed to the model (``raise_on_tool_invocation_failure=False``:
  Haystack's ``Failed to invoke Tool ...`` text); the model ends its run with a JSON verdict
  ``{"status": "done|requeue|amend|reject|stalled", "value": ..., "note": ...}``;
* the LIMS raises ``[lims:<kind>] text``: ``hold`` ending ``; retry at HH:MM`` (the model calls
  again with ``not_before``), ``requeue`` (the app runs the rule again, up to 8 attempts),
  ``amend`` ending ``(use key=value)`` (the app asks for a new workflow, up to 5), ``reject``
  (final);
* after the last rule the app checks the lane booking against the order form (``check lane
  booking``) and watches the run on the instrument (``watch run {booking}``).

The planner trusts the PI's note over the order form: the scenario's wrong value comes from the
note. This source records the executor's prompt (no starvation scenario: no starvation label).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

import mlflow
from mlflow.entities import SpanEvent, SpanStatus, SpanStatusCode, SpanType
from mlflow.haystack.autolog import HaystackSpanProcessor
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider, _Relay

# Haystack sends usage statistics when imported unless told not to
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
from haystack import Pipeline, component, tracing
from haystack.components.agents import Agent
from haystack.components.builders import ChatPromptBuilder
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool, tool
from haystack.utils import Secret
from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer

ORDER: dict[str, Any] = {
    "order": "SEQ-2027-0412",
    "group": "Okafor lab",
    "project": "P-0412-RNA",
    "samples": 24,
    "site": "Babraham",
    "kit": "TruSeq-mRNA",
    "instrument": "NovaSeq-A",
    "lane": 2,
    "date": "2027-03-09",
    "depot": "Biobank store 3",
    "account": "GR-52318",
    "amount": 1840,
    "email": "okafor-lab@facility.example",
}
MAX_ATTEMPTS = 8
MAX_WORKFLOWS = 5
MAX_QC_READS = 12
MAX_AGENT_STEPS = 30
HOLD, REQUEUE, AMEND, REJECT = "hold", "requeue", "amend", "reject"


class LimsFault(RuntimeError):
    """A facility service's refusal: ``[lims:<kind>] text``."""

    def __init__(self, kind: str, text: str):
        super().__init__(f"[lims:{kind}] {text}")


# --- the workflow: a Snakefile ---------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """One ``rule`` block: its LIMS call, literal arguments and inputs from earlier rules."""

    name: str
    tool: str
    params: dict[str, Any]
    inputs: dict[str, str]
    """Argument -> the earlier rule whose output it takes."""
    output: str


_ARG = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|rules\.(\w+)\.output\.\w+|-?\d+)')


def _pairs(text: str) -> dict[str, Any]:
    """``key=value`` pairs of a directive (strings, whole numbers, ``rules.x.output.y``).

    >>> _pairs('lane=2, date="2027-03-09", qc=rules.library_qc.output.qc')
    {'lane': 2, 'date': '2027-03-09', 'qc': 'rules.library_qc.output.qc'}
    """
    out: dict[str, Any] = {}
    for key, value, _ in _ARG.findall(text):
        out[key] = json.loads(value) if value[:1] in '"-0123456789' else value
    return out


def parse_workflow(text: str) -> tuple[dict[str, Any], list[Rule]]:
    """The workflow's header comments and its rules (``rule all`` left out).

    >>> head, rules = parse_workflow('''# revision 2
    ... # settled pull_samples: "SB-1"
    ... rule library_qc:
    ...     input: batch=rules.pull_samples.output.batch
    ...     output: qc="qc/library_qc.json"
    ...     params: kit="K"
    ...     run: lims.library_qc(**input, **params)
    ... ''')
    >>> head["revision"], head["settled"], rules[0].inputs, rules[0].params
    (2, {'pull_samples': 'SB-1'}, {'batch': 'pull_samples'}, {'kit': 'K'})
    """
    head: dict[str, Any] = {"revision": 1, "because": "", "settled": {}}
    for m in re.finditer(r"^# (revision|because|settled (\w+)):? (.*)$", text, re.MULTILINE):
        if m.group(2):
            head["settled"][m.group(2)] = json.loads(m.group(3))
        elif m.group(1) == "revision":
            head["revision"] = int(m.group(3))
        else:
            head["because"] = m.group(3)
    rules = []
    for m in re.finditer(r"^rule (\w+):\n((?:[ \t]+.*\n?)*)", text, re.MULTILINE):
        name, body = m.group(1), m.group(2)
        directives = dict(re.findall(r"^\s+(\w+):\s*(.*)$", body, re.MULTILINE))
        if name == "all":
            continue
        call = re.search(r"lims\.(\w+)\(", directives.get("run", ""))
        inputs = {k: v.split(".")[1] for k, v in _pairs(directives.get("input", "")).items()}
        output = next(iter(_pairs(directives.get("output", ""))), "")
        params = _pairs(directives.get("params", ""))
        rules.append(Rule(name, call.group(1) if call else "", params, inputs, output))
    return head, rules


def in_order(rules: list[Rule], settled: dict[str, Any]) -> list[Rule]:
    """The rules in dependency order (a rule after those it takes inputs from; file order
    otherwise), as Snakemake would schedule them on one core.

    >>> a, b = Rule("a", "t", {}, {"x": "b"}, "x"), Rule("b", "t", {}, {}, "y")
    >>> [r.name for r in in_order([a, b], {})]
    ['b', 'a']
    """
    done = set(settled)
    left, out = list(rules), []
    while left:
        ready = next((r for r in left if set(r.inputs.values()) <= done), None)
        if ready is None:
            raise ValueError(f"the workflow's rules wait on one another: {[r.name for r in left]}")
        left.remove(ready)
        out.append(ready)
        done.add(ready.name)
    return out


def call_line(tool_name: str, args: dict[str, Any]) -> str:
    """A LIMS call as the executor is told it.

    >>> call_line("book_lane", {"qc": "QC-1", "lane": 2})
    'book_lane {"qc": "QC-1", "lane": 2}'
    """
    return f"{tool_name} {json.dumps(args)}"


@component
class WorkflowReader:
    """Read the planner's reply as a Snakemake workflow: its rules and its header."""

    @component.output_types(rules=list, header=dict)
    def run(self, replies: list[ChatMessage]) -> dict[str, Any]:
        text = replies[0].text or ""
        fenced = re.search(r"```(?:snakemake|python)?\n(.*?)```", text, re.DOTALL)
        head, rules = parse_workflow(fenced.group(1) if fenced else text)
        return {"rules": [vars(r) for r in rules], "header": head}


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _line(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _q(value: Any) -> str:
    return str(value) if isinstance(value, int) else json.dumps(value)


def _snakefile(
    revision: int, because: str, settled: dict[str, Any], rules: list[tuple[Any, ...]]
) -> str:
    lines = [f"# revision {revision}"]
    if because:
        lines.append(f"# because: {because}")
    lines += [f"# settled {name}: {json.dumps(value)}" for name, value in settled.items()]
    last = []
    for name, output, tool_name, inputs, params in rules:
        lines += ["", f"rule {name}:"]
        if inputs:
            refs = ", ".join(f"{k}=rules.{r}.output.{o}" for k, (r, o) in inputs.items())
            lines.append(f"    input: {refs}")
        lines.append(f'    output: {output}="results/{name}.{output}"')
        if params:
            lines.append("    params: " + ", ".join(f"{k}={_q(v)}" for k, v in params.items()))
        lines.append(f"    run: lims.{tool_name}(**input, **params)")
        last.append(f"rules.{name}.output.{output}")
    lines += ["", "rule all:", "    input: " + ", ".join(last[-2:])]
    return "\n".join(lines) + "\n"


def _planner(brief: str) -> dict[str, Any]:
    """The workflow: the order form's facts with the PI's note trusted over them, the amendment
    of the trouble taken, only the rules not settled."""
    facts = json.loads(_line(brief, "Order form")) | json.loads(_line(brief, "PI's note") or "{}")
    settled = json.loads(_line(brief, "Settled") or "{}")
    trouble = _line(brief, "Trouble")
    use = re.search(r"\(use (\w+)=([^)]+)\)", trouble)
    if use:
        facts[use.group(1)] = use.group(2).strip()
    rules = [
        ("pull_samples", "batch", "intake_batch", {},
         {"project": facts["project"], "site": facts["site"], "samples": facts["samples"]}),
        ("library_qc", "qc", "library_qc", {"batch": ("pull_samples", "batch")},
         {"kit": facts["kit"]}),
        ("book_lane", "booking", "book_lane", {"qc": ("library_qc", "qc")},
         {"instrument": facts["instrument"], "lane": facts["lane"], "date": facts["date"]}),
        ("ship_leftovers", "waybill", "ship_leftovers", {"batch": ("pull_samples", "batch")},
         {"depot": facts["depot"], "temperature": "-80C"}),
        ("charge_grant", "charge", "charge_grant", {"booking": ("book_lane", "booking")},
         {"account": facts["account"], "amount": facts["amount"]}),
        ("notify_group", "notice", "notify_group",
         {"booking": ("book_lane", "booking"), "waybill": ("ship_leftovers", "waybill")},
         {"email": facts["email"], "date": facts["date"]}),
    ]  # fmt: skip
    todo = [r for r in rules if r[0] not in settled]
    revision = int(_line(brief, "Revision") or 1)
    text = "```snakemake\n" + _snakefile(revision, trouble, settled, todo) + "```"
    return {"role": "assistant", "content": text}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{n}_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _verdict(status: str, value: str = "", note: str = "") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": json.dumps({"status": status, "value": value, "note": note}),
    }


VERDICT = {HOLD: REQUEUE, REQUEUE: REQUEUE, AMEND: AMEND, REJECT: REJECT}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call the rule names, call again at the time a ``hold``
    gives, turn the queue's pages, read the QC job until it passes, answer a verdict."""
    name, _, args_text = _line(task, "Call").partition(" ")
    args = json.loads(args_text)
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    fault = re.search(r"Error: \[lims:(\w+)\] (.*)$", last, re.DOTALL)
    if fault:
        kind, text = fault.group(1), fault.group(2)
        at = re.search(r"; retry at (\d\d:\d\d)$", text)
        if kind == HOLD and at:
            return _call(n, name, args | {"not_before": at.group(1)})
        return _verdict(VERDICT.get(kind, REJECT), note=f"[lims:{kind}] {text}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "running":
        reads = sum('"status": "running"' in r for r in results) - 1
        if reads >= MAX_QC_READS:
            return _verdict(
                "stalled", note=f"QC job {seen['job']} still running after {reads} reads"
            )
        return _call(n, "qc_status", {"job": seen["job"]})
    return _verdict("done", str(seen["value"]), str(seen.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the workflow for an order,
    the executor's next move otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'Call: f {"a": 1, "b": "x"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1, "b": "x"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Order: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the facility ---------------------------------------------------------------------------
@dataclass
class Facility:
    """The core facility's services: intake, QC lab, sequencers, courier, finance, mail."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    batches: dict[str, str] = field(default_factory=dict)
    """Sample batch -> the campus whose freezer holds it."""
    qc_jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    lanes: list[dict[str, Any]] = field(default_factory=list)
    accounts: set[str] = field(default_factory=lambda: {ORDER["account"]})
    charged: str = ""

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]
        self.accounts |= set(self.label.params.get("accounts", ()))

    def fault(self, tool_name: str) -> None:
        """Raise the scenario's next fault when the call is the service it targets."""
        if not self.faults or tool_name != self.label.params.get("tool"):
            return
        f = self.faults.pop(0)
        tail = {HOLD: f"; retry at {f.get('hint')}", AMEND: f" (use {f.get('hint')})"}
        raise LimsFault(f["kind"], f["text"] + tail.get(f["kind"], ""))


def make_tools(lab: Facility) -> list[Tool]:
    """The facility's services as ``@tool`` functions bound to one order's facility."""
    seed = lab.label.seed
    params = lab.label.params

    @tool
    def intake_batch(
        project: Annotated[str, "the project code"],
        site: Annotated[str, "the campus whose intake queue to read"],
        samples: Annotated[int, "how many samples the order sequences"],
        page: Annotated[int, "the queue page"] = 1,
    ) -> str:
        """Read the facility's intake queue at a campus for a project's sample batch."""
        lab.fault("intake_batch")
        code = "".join(w[0] for w in site.split()).upper()
        if page < int(params.get("pages", 1)):
            others = [f"SB-{code}-{page}{n:02d}" for n in range(5)]
            return json.dumps({"batches": others, "project_match": False, "next_page": page + 1})
        batch = f"SB-{code}-{seed % 1000}"
        lab.batches[batch] = site
        return json.dumps({"value": batch, "site": site, "samples": samples})

    @tool
    def library_qc(
        batch: Annotated[str, "the sample batch"], kit: Annotated[str, "the library prep kit"]
    ) -> str:
        """Start the library QC (Bioanalyzer and qPCR) of a sample batch."""
        lab.fault("library_qc")
        where = lab.batches.get(batch, "")
        if where != ORDER["site"]:
            raise LimsFault(
                REJECT,
                f"batch {batch} sits in the -80 freezer at {where or 'no'} campus; the QC lab "
                f"at {ORDER['site']} cannot prep it",
            )
        job = f"QC-{seed}-{len(lab.qc_jobs) + 1}"
        lab.qc_jobs[job] = {"batch": batch, "reads": 0}
        if params.get("stuck") or "polls" in params:
            return json.dumps({"job": job, "status": "running", "stage": "library prep"})
        return json.dumps({"value": job, "status": "passed", "note": "RIN 8.9"})

    @tool
    def qc_status(job: Annotated[str, "the QC job"]) -> str:
        """Read a library QC job's state; its result once it passed."""
        entry = lab.qc_jobs[job]
        entry["reads"] += 1
        if params.get("stuck") or entry["reads"] < int(params.get("polls", 0)):
            return json.dumps({"job": job, "status": "running", "stage": "qPCR"})
        return json.dumps({"value": job, "status": "passed", "note": "RIN 8.7"})

    @tool
    def book_lane(
        qc: Annotated[str, "the passed QC job"],
        instrument: Annotated[str, "the sequencer"],
        lane: Annotated[int, "the flow-cell lane"],
        date: Annotated[str, "the run date (ISO date)"],
        not_before: Annotated[str, "the time to call again at after a hold (HH:MM)"] = "",
    ) -> str:
        """Book a flow-cell lane on a sequencer for a run date."""
        lab.fault("book_lane")
        moved = params.get("instrument_to")
        if moved and instrument == ORDER["instrument"]:
            raise LimsFault(
                AMEND, f"{instrument} is down for a fluidics service (use instrument={moved})"
            )
        booking = f"LB-{seed}-{instrument}-L{lane}"
        lab.lanes.append({"booking": booking, "instrument": instrument, "date": date, "qc": qc})
        return json.dumps({"value": booking, "date": date, "note": f"flow cell FC{seed % 97}"})

    @tool
    def ship_leftovers(
        batch: Annotated[str, "the sample batch"],
        depot: Annotated[str, "the biobank store"],
        temperature: Annotated[str, "the cold chain (e.g. -80C)"],
        not_before: Annotated[str, "the time to call again at after a hold (HH:MM)"] = "",
    ) -> str:
        """Book the cold-chain courier to take a batch's leftover samples to the biobank."""
        lab.fault("ship_leftovers")
        return json.dumps({"value": f"CC-{seed}-{batch[-3:]}", "depot": depot})

    @tool
    def charge_grant(
        booking: Annotated[str, "the lane booking"],
        account: Annotated[str, "the lab group's grant account"],
        amount: Annotated[int, "the charge in GBP"],
        not_before: Annotated[str, "the time to call again at after a hold (HH:MM)"] = "",
    ) -> str:
        """Charge a sequencing run to a grant account."""
        lab.fault("charge_grant")
        if account not in lab.accounts:
            raise LimsFault(
                REJECT, f"finance holds no grant account {account} for the {ORDER['group']}"
            )
        lab.charged = f"JV-{seed}-{amount}"
        return json.dumps({"value": lab.charged, "account": account})

    @tool
    def notify_group(
        email: Annotated[str, "the lab group's address"],
        booking: Annotated[str, "the lane booking"],
        waybill: Annotated[str, "the courier waybill"],
        date: Annotated[str, "the run date"],
        not_before: Annotated[str, "the time to call again at after a hold (HH:MM)"] = "",
    ) -> str:
        """Email the lab group their run's booking and the leftovers' waybill."""
        lab.fault("notify_group")
        return json.dumps({"value": f"MSG-{booking[-2:]}-{date[-2:]}", "to": email})

    return [intake_batch, library_qc, qc_status, book_lane, ship_leftovers, charge_grant,
            notify_group]  # fmt: skip


# --- the app --------------------------------------------------------------------------------
class OrderFailed(Exception):
    """The order was not sequenced, charged and announced (the reason is the message)."""


PLANNER_PROMPT = [
    ChatMessage.from_system(
        "You plan a genomics core facility's sequencing order as a Snakemake workflow: one "
        "`rule <name>:` per LIMS call with `input:` naming earlier rules' outputs "
        "(rules.<rule>.output.<name>), `output:`, `params:` for the call's other arguments and "
        "`run: lims.<call>(**input, **params)`, then `rule all:`. Start with `# revision n`; "
        "when asked again, add `# because: ...` and `# settled <rule>: <result>` for the rules "
        "done and write only the rules left. The PI's note overrides the order form."
    ),
    ChatMessage.from_user(
        "Order: {{ order }}\nOrder form: {{ form }}\nPI's note: {{ note }}\n"
        "Settled: {{ settled }}\nTrouble: {{ trouble }}\nRevision: {{ revision }}"
    ),
]
EXECUTOR_PROMPT = """{% message role="user" %}
Rule {{ rule }} (attempt {{ attempt }}): run the LIMS call below with your tools.
Call: {{ call }}
{% endmessage %}"""


class CoreFacility:
    """One sequencing order, from the order form to the watched run."""

    def __init__(self, label: Label, base_url: str):
        self.label = label
        self.lab = Facility(label)
        self.planner = Pipeline()
        self.planner.add_component(
            "prompt",
            ChatPromptBuilder(
                template=PLANNER_PROMPT,
                required_variables=["order", "form", "note", "settled", "trouble", "revision"],
            ),
        )
        self.planner.add_component("llm", self._model(base_url))
        self.planner.add_component("workflow", WorkflowReader())
        self.planner.connect("prompt.prompt", "llm.messages")
        self.planner.connect("llm.replies", "workflow.replies")
        self.runner = Agent(
            chat_generator=self._model(base_url),
            tools=make_tools(self.lab),
            system_prompt="You run one rule of a sequencing workflow with the facility's LIMS "
            'tools, then answer one JSON verdict: {"status": "done|requeue|amend|reject|'
            'stalled", "value": "...", "note": "..."}.',
            user_prompt=EXECUTOR_PROMPT,
            required_variables=["rule", "attempt", "call"],
            max_agent_steps=MAX_AGENT_STEPS,
            raise_on_tool_invocation_failure=False,
        )
        self.results: dict[str, Any] = {}

    @staticmethod
    def _model(base_url: str) -> OpenAIChatGenerator:
        return OpenAIChatGenerator(
            api_key=Secret.from_token("test"), model=MODEL, api_base_url=base_url, max_retries=0
        )

    def plan(self, trouble: str, revision: int) -> list[Rule]:
        note = {
            k: self.label.params[k] for k in ("site", "date", "account") if k in self.label.params
        }
        out = self.planner.run(
            {
                "prompt": {
                    "order": ORDER["order"],
                    "form": json.dumps(ORDER),
                    "note": json.dumps(note),
                    "settled": json.dumps(self.results),
                    "trouble": trouble,
                    "revision": revision,
                }
            }
        )
        return in_order([Rule(**r) for r in out["workflow"]["rules"]], self.results)

    def attempt(self, rule: Rule, attempt: int) -> dict[str, str]:
        """One executor run of a rule under the app's span, its inputs filled in; its verdict."""
        args = {k: self.results[r] for k, r in rule.inputs.items()} | rule.params
        call = call_line(rule.tool, args)
        with mlflow.start_span(name=f"rule {rule.name}", span_type=SpanType.AGENT) as span:
            span.set_attributes({"sequencer.rule": rule.name, "sequencer.attempt": attempt})
            span.set_inputs({"rule": rule.name, "attempt": attempt, "call": call})
            out = self.runner.run(messages=[], rule=rule.name, attempt=attempt, call=call)
            verdict: dict[str, str] = json.loads(out["last_message"].text or "{}")
            span.set_outputs(verdict)
            if verdict.get("status") != "done":
                # a SpanStatus (code and description), as set_status's docstring allows
                status = SpanStatus(SpanStatusCode.ERROR, str(verdict.get("note", "")))
                span.set_status(status)  # type: ignore[arg-type]
        return verdict

    def work(self) -> None:
        trouble = ""
        for revision in range(1, MAX_WORKFLOWS + 1):
            rules = self.plan(trouble, revision)
            trouble = ""
            for rule in rules:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    verdict = self.attempt(rule, attempt)
                    status, note = verdict.get("status", ""), verdict.get("note", "")
                    if status == "done":
                        self.results[rule.name] = verdict["value"]
                        break
                    if status == REQUEUE and attempt < MAX_ATTEMPTS:
                        continue
                    if status == AMEND and revision < MAX_WORKFLOWS:
                        trouble = f"{rule.name}: {note}"
                        break
                    raise OrderFailed(f"{rule.name} {status}: {note}")
                if trouble:
                    break
            if not trouble:
                return
        raise OrderFailed(trouble)

    def check(self) -> None:
        """The app's own checks once the group is told: the lane booking against the order
        form, then the run watched on the instrument."""
        booked = self.lab.lanes[-1]
        with mlflow.start_span(name="check lane booking", span_type=SpanType.GUARDRAIL) as span:
            span.set_inputs({"order": ORDER["order"], "date": ORDER["date"]})
            span.set_outputs(booked)
            if booked["date"] != ORDER["date"]:
                raise OrderFailed(
                    f"{booked['booking']} runs on {booked['date']}; the order form's run date is "
                    f"{ORDER['date']} (grant already charged: {self.lab.charged})"
                )
        with mlflow.start_span(name=f"watch run {booked['booking']}") as span:
            states = ("clustering", "sequencing", "basecalling", "demultiplexed")
            for read, state in enumerate(states, 1):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    span.add_event(_run_state({"read": read, "state": "aborted"}))
                    raise OrderFailed(
                        f"flow cell FC{self.label.seed % 97} on {booked['instrument']} failed "
                        f"its cluster-density check at read {read}: the instrument aborted the run"
                    )
                span.add_event(_run_state({"read": read, "state": state}))
            span.set_outputs({"state": "demultiplexed"})

    def run(self) -> str:
        """The order, under the app's root span; its trace id."""
        try:
            with mlflow.start_span(
                name=f"sequencing order {ORDER['order']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ORDER)
                root.set_attributes({"sequencer.run": self.label.run})
                self.work()
                self.check()
                root.set_outputs({"outcome": "sequenced"})
        except OrderFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def _run_state(attributes: dict[str, Any]) -> SpanEvent:
    return SpanEvent("run state", attributes=attributes)  # type: ignore[abstract]


@contextlib.contextmanager
def _haystack_autolog() -> Iterator[None]:
    """MLflow's Haystack autologging for the play: Haystack's OpenTelemetry tracer on a provider
    whose one processor is MLflow's ``HaystackSpanProcessor`` (it hands each span to MLflow's
    own provider), content tracing on; Haystack's tracer put back after.

    ``mlflow.haystack.autolog()`` itself adds that processor to the process's *global* tracer
    provider (or sets one globally): the corpus's global provider is the relay other plays need
    (``_relay.global_provider``), so the play gives the processor a provider of its own."""
    before = (tracing.tracer.actual_tracer, tracing.tracer.is_content_tracing_enabled)
    # MLflow keeps its active span out of the global OpenTelemetry context unless asked; Haystack's
    # tracer nests by that context, so without this every Haystack run is a trace of its own
    propagate = os.environ.get(_PROPAGATE)
    os.environ[_PROPAGATE] = "true"
    provider = TracerProvider()
    provider.add_span_processor(HaystackSpanProcessor())
    tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer("mlflow.haystack.autolog")))
    tracing.tracer.is_content_tracing_enabled = True
    try:
        yield
    finally:
        tracing.enable_tracing(before[0])
        tracing.tracer.is_content_tracing_enabled = before[1]
        if propagate is None:
            os.environ.pop(_PROPAGATE, None)
        else:
            os.environ[_PROPAGATE] = propagate


_PROPAGATE = "MLFLOW_TRACE_PROPAGATE_TO_OTEL_CONTEXT"


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the sequencer scenarios under MLflow's Haystack autologging, its spans relayed to
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    # the agent logs an error for every failed tool call; the tool spans carry them
    tool_log = logging.getLogger("haystack.components.agents.tool_calling")
    tool_level = tool_log.level
    tool_log.setLevel(logging.CRITICAL)
    _Relay.target = provider
    try:
        with _haystack_autolog(), ModelServer(respond=respond) as server:
            base_url = server.base_url("corpus-sequencer")
            return {label.run: CoreFacility(label, base_url).run() for label in labels}
    finally:
        _Relay.target = None
        quiet.setLevel(level)
        tool_log.setLevel(tool_level)
