"""A furniture re-upholstery workshop's job desk on LlamaIndex, traced by MLflow's LlamaIndex
autologging (``mlflow.llama_index.autolog()`` from the lightweight ``mlflow-tracing`` SDK) and
the app's own ``mlflow.start_span`` spans: a real ``FunctionAgent`` with ``FunctionTool``\\ s on
llama-index-llms-litellm's ``LiteLLM`` against a scripted model on the conformance suite's fake
OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-72 split only (see README.md). The task: re-cover a customer's wingback chair; find a
fabric in the swatch catalogue (read page by page) with enough metres on a bolt at the branch's
store, have the fabric's fire-safety (flammability) test run by the test house (polled), book a
frame-repair slot at the joiner's bench, book the collection/delivery van, take the customer's
deposit, tell the customer. The workshop's team already runs its stock jobs on Jenkins, so it
asks its model for the plan as a Jenkinsfile:

* the app opens one MLflow ``AGENT`` span per job (``upholster {job}``); a failed job raises
  inside it, so MLflow records the exception and the ``ERROR`` status;
* the planner is one plain ``llm.achat`` call (under the app's ``Jenkinsfile revision {n}``
  ``CHAIN`` span, a ``read Jenkinsfile`` ``PARSER`` span inside it) answering a **declarative
  Jenkins pipeline**: ``pipeline { agent any  stages { stage('pick_fabric') { steps {
  findFabric(pattern: 'herringbone', ...) } } ... } }``, one step call per stage, its arguments
  Groovy named parameters, ``"${results.pick_fabric.sku}"`` an earlier stage's result. The app
  reads it with a small hand-written reader (brace matching, regexes; no Jenkins) and runs the
  stages in order. Asked again after a setback, the planner answers a new Jenkinsfile whose
  ``environment { PICK_FABRIC_RESULT = '...' }`` block holds the settled stages' results
  (``"${env.PICK_FABRIC_RESULT}"`` in the stages still to do) and whose stages are the ones left;
* a ``workshop_hand`` ``FunctionAgent`` run per stage attempt (under the app's ``stage {name}
  attempt {n}`` span), its message the stage's call with the references filled in, consumed as
  LlamaIndex's docs show for streaming: ``handler = agent.run(user_msg=...)``, ``async for ev in
  handler.stream_events()`` (the app keeps the ``ToolCallResult``\\ s and the ``AgentStream``
  text), ``await handler``. Its last line is a Jenkins-like build result: ``RESULT: SUCCESS
  value=...``, ``UNSTABLE`` (the app runs the stage again, up to 8 attempts), ``ABORTED`` (a new
  Jenkinsfile, up to 5), ``FAILURE`` or ``NOT_BUILT`` (final);
* the services raise :class:`WorkshopFault`, ``<kind> (ref WS-nnnn): text`` that LlamaIndex
  hands the model as the tool's output: ``busy`` (``(again after HH:MM)``: the model calls again
  with ``after``, in the same run), ``retry`` (UNSTABLE), ``rework`` (``(use key=value)``:
  ABORTED), ``refused`` (FAILURE);
* after the last stage the app checks the van booking against the day agreed with the customer
  (``check van day``, a ``GUARDRAIL`` span) and watches the van's round (``watch van round``,
  readings as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider); LlamaIndex autologging (MLflow's span and event handlers on
LlamaIndex's root dispatcher) is turned off when the play returns. What it records on these
pins (llama-index-core 0.14.25, llama-index-workflows 2.26.1, mlflow-tracing 3.17.2): the
planner's ``LiteLLM.achat`` (``CHAT_MODEL``) and each hand run's ``FunctionAgent.run``
(``AGENT``: the message in, the final response out), but no span of the agent's workflow steps
nor of what runs inside them (its model calls, ``FunctionTool.acall``): MLflow fails to start a
step's span (serialising its ``Context`` argument raises "to_dict is only available from
handler code, not from within steps"), makes a no-op span instead, and the step's children
inherit it. The app keeps each ``ToolCallResult`` it reads from the event stream as a ``tool
result`` event on its stage-attempt span. The planner trusts the
foreman's notes over the job sheet: the scenario's wrong value comes from a note. This source
records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# litellm reads its model price map from the network at import unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import mlflow
import mlflow.llama_index
from llama_index.core.agent.workflow import AgentStream, FunctionAgent, ToolCallResult
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.llms.litellm import LiteLLM
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _call, _say, _text
from .museum import _mlflow_provider, _Relay

JOB: dict[str, Any] = {
    "piece": "wingback chair",
    "pattern": "herringbone",
    "colour": "moss",
    "width": 140,
    "metres": 7,
    "branch": "Leeds",
    "standard": "BS 5852 crib 5",
    "bench": "J2",
    "bench_day": "2027-03-09",
    "hours": 3,
    "depot": "Kirkstall depot",
    "day": "2027-03-16",
    "account": "CU-40917",
    "deposit": 180,
    "customer": "m.okafor@example.net",
}
BRANCHES = {"Leeds": "LDS", "Harrogate": "HGT", "York": "YRK", "Wakefield": "WKF"}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 10
"""Fire-test reads in one run before the hand reports the stage NOT_BUILT."""
MAX_HOLDS = 8
"""``busy`` answers of one call in one run before the hand gives up."""
PLANNER = (
    "You plan re-upholstery jobs for the workshop as a declarative Jenkinsfile: one stage per "
    "step, one workshop step call per stage with Groovy named parameters, "
    '"${results.<stage>.<field>}" for an earlier stage\'s result. Answer only the Jenkinsfile.'
)
HAND = (
    "You run one stage of a workshop job. Make the call you are given with the workshop's "
    "tools, follow the catalogue's next pages and poll a fire test until it ends, call again "
    "after the time a busy service names, then end with one line: RESULT: "
    "<SUCCESS|UNSTABLE|ABORTED|FAILURE|NOT_BUILT> value=<the stage's result> note=<why>."
)


class WorkshopFault(RuntimeError):
    """A service's refusal: ``<kind> (ref WS-nnnn): text``."""


# --- the plan: a declarative Jenkinsfile --------------------------------------------------
_STAGE = re.compile(r"stage\s*\(\s*'([\w-]+)'\s*\)\s*\{")
_CALL = re.compile(r"(\w+)\s*\((.*)\)\s*$", re.DOTALL)
_PARAM = re.compile(
    r"(\w+)\s*:\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?|true|false)"
)
_ENV = re.compile(r"^\s*(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")", re.MULTILINE)
_REF = re.compile(r"\$\{(?:results\.(\w+)\.\w+|env\.(\w+))\}")


@dataclass
class Stage:
    """One stage of the pipeline: a step of the plan."""

    name: str
    call: str
    args: dict[str, Any]


@dataclass
class Pipeline:
    env: dict[str, str]
    """The ``environment`` block: the settled stages' results on a re-plan."""
    stages: list[Stage]


def _block(text: str, open_at: int) -> str:
    """The text inside the braces opening at ``open_at`` (quotes skipped)."""
    depth, quote, i = 0, "", open_at
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i]
        i += 1
    raise ValueError("unbalanced braces in the Jenkinsfile")


def _named(body: str, keyword: str) -> str | None:
    """The block of the first ``keyword {`` in ``body`` (``None`` if there is none)."""
    found = re.search(rf"\b{keyword}\s*\{{", body)
    return _block(body, found.end() - 1) if found else None


def _groovy(literal: str) -> Any:
    if literal[0] == "'":
        return literal[1:-1].replace("\\'", "'")
    if literal[0] == '"':
        return literal[1:-1].replace('\\"', '"')
    if literal in ("true", "false"):
        return literal == "true"
    return float(literal) if "." in literal else int(literal)


def read_jenkinsfile(text: str) -> Pipeline:
    """The stages of the planner's Jenkinsfile, in order.

    >>> p = read_jenkinsfile('''pipeline {
    ...   agent any
    ...   environment { PICK_FABRIC_RESULT = 'HB-LDS-7' }
    ...   stages {
    ...     stage('fire_test') {
    ...       steps { requestFireTest(sku: "${env.PICK_FABRIC_RESULT}", standard: 'BS 5852') }
    ...     }
    ...   }
    ... }''')
    >>> p.env, p.stages[0].name, p.stages[0].call
    ({'PICK_FABRIC_RESULT': 'HB-LDS-7'}, 'fire_test', 'requestFireTest')
    >>> p.stages[0].args["sku"]
    '${env.PICK_FABRIC_RESULT}'
    """
    pipeline = _named(text, "pipeline")
    if pipeline is None:
        raise ValueError("no pipeline block in the plan")
    env = {k: _groovy(v) for k, v in _ENV.findall(_named(pipeline, "environment") or "")}
    stages_body = _named(pipeline, "stages") or ""
    stages: list[Stage] = []
    for found in _STAGE.finditer(stages_body):
        steps = _named(_block(stages_body, found.end() - 1), "steps") or ""
        call = _CALL.match(steps.strip())
        if not call:
            raise ValueError(f"stage {found[1]}: no step call")
        args = {k: _groovy(v) for k, v in _PARAM.findall(call[2])}
        stages.append(Stage(found[1], call[1], args))
    return Pipeline(env, stages)


def _env_key(stage: str) -> str:
    return f"{stage.upper()}_RESULT"


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"' if "${" in value else "'" + value.replace("'", "\\'") + "'"
    return json.dumps(value)


def write_jenkinsfile(header: list[str], env: dict[str, str], stages: list[Stage]) -> str:
    """A declarative Jenkinsfile (what the scripted planner answers)."""
    lines = [f"// {h}" for h in header] + ["pipeline {", "  agent any"]
    if env:
        lines.append("  environment {")
        lines += [f"    {k} = {_literal(v)}" for k, v in env.items()]
        lines.append("  }")
    lines.append("  stages {")
    for s in stages:
        args = ", ".join(f"{k}: {_literal(v)}" for k, v in s.args.items())
        lines += [
            f"    stage('{s.name}') {{",
            "      steps {",
            f"        {s.call}({args})",
            "      }",
            "    }",
        ]
    return "\n".join([*lines, "  }", "}"])


# --- the scripted model -------------------------------------------------------------------
def _plan(brief: str) -> str:
    """The planner's Jenkinsfile: the job sheet's facts, the foreman's notes trusted over them;
    after a setback with a ``use`` value that value; settled stages' results in the
    ``environment`` block and referred to there, the settled stages left out."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Job sheet"]) | json.loads(lines.get("Foreman's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use[1]] = use[2]

    def ref(stage: str, what: str) -> str:
        if stage in settled:
            return f"${{env.{_env_key(stage)}}}"
        return f"${{results.{stage}.{what}}}"

    sku, cert, slot, van = (
        ref("pick_fabric", "sku"),
        ref("fire_test", "certificate"),
        ref("book_bench", "slot"),
        ref("book_van", "booking"),
    )
    stages = [
        Stage("pick_fabric", "findFabric",
              {k: facts[k] for k in ("pattern", "colour", "width", "metres", "branch")}),
        Stage("fire_test", "requestFireTest", {"sku": sku, "standard": facts["standard"]}),
        Stage("book_bench", "bookBench",
              {"bench": facts["bench"], "day": facts["bench_day"], "hours": facts["hours"],
               "piece": facts["piece"]}),
        Stage("book_van", "bookVan",
              {"depot": facts["depot"], "day": facts["day"], "sku": sku, "slot": slot,
               "certificate": cert}),
        Stage("take_deposit", "chargeDeposit",
              {"account": facts["account"], "booking": van, "amount": facts["deposit"]}),
        Stage("notify_customer", "notifyCustomer",
              {"to": facts["customer"], "booking": van, "day": facts["day"]}),
    ]  # fmt: skip
    header = [f"job {lines.get('Job', '')}: {facts['piece']}"]
    if settled:
        header.append(f"revision {lines.get('Revision', '')}: {lines.get('Setback', '')}")
    env = {_env_key(k): v for k, v in settled.items()}
    return write_jenkinsfile(header, env, [s for s in stages if s.name not in settled])


def _result(status: str, value: str = "", note: str = "") -> dict[str, Any]:
    return _say(f"RESULT: {status} value={value} note={note}")


def _hand(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The hand's next turn: make the call, call again ``after`` a busy service, follow
    ``next_page``, poll a running fire test, answer the build result."""
    order = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    found = re.search(r"^Call: (\w+) (\{.*\})$", order, re.MULTILINE)
    if not found:
        return _result("FAILURE", note="no call in the stage")
    calls = [c["function"] for m in messages for c in m.get("tool_calls") or []]
    turn = len(calls)
    if not calls:
        return _call(found[1], json.loads(found[2]), turn)
    name, args = calls[-1]["name"], json.loads(calls[-1]["arguments"] or "{}")
    said = _text(messages[-1].get("content"))
    fault = re.match(r"(busy|retry|rework|refused) \(ref [\w-]+\): ", said)
    if fault and fault[1] == "busy":
        after = re.search(r"again after (\d\d:\d\d)", said)
        if sum(c["name"] == name for c in calls) > MAX_HOLDS:
            return _result("NOT_BUILT", note=said)
        return _call(name, args | {"after": after[1] if after else "later"}, turn)
    if fault:
        status = {"retry": "UNSTABLE", "rework": "ABORTED", "refused": "FAILURE"}[fault[1]]
        return _result(status, note=said)
    seen = json.loads(said)
    if seen.get("next_page"):
        return _call(name, args | {"page": seen["next_page"]}, turn)
    if seen.get("state") in ("QUEUED", "RUNNING"):
        reads = sum(c["name"] == "fireTestStatus" for c in calls)
        if reads >= MAX_READS:
            return _result("NOT_BUILT", note=f"fire test {seen['test']} still {seen['state']}")
        return _call("fireTestStatus", {"test": seen["test"]}, turn)
    return _result("SUCCESS", str(seen["result"]), str(seen.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Job: UP-1\\nJob sheet: " + json.dumps(JOB)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> [s.name for s in read_jenkinsfile(msg["choices"][0]["message"]["content"]).stages][:3]
    ['pick_fabric', 'fire_test', 'book_bench']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    if PLANNER in system:
        user = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
        return completion(body, _say(_plan(user)))
    return completion(body, _hand(messages))


# --- the workshop's services ----------------------------------------------------------------
@dataclass
class Workshop:
    """The swatch catalogue, test house, joiner's bench, van rota, till and customer mail of
    one job."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    bolts: dict[str, str] = field(default_factory=dict)
    """Fabric bolt -> the branch store holding it."""
    tests: dict[str, int] = field(default_factory=dict)
    vans: list[dict[str, str]] = field(default_factory=list)
    payments: list[str] = field(default_factory=list)
    refs: int = 0

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def refuse(self, kind: str, text: str) -> WorkshopFault:
        self.refs += 1
        return WorkshopFault(f"{kind} (ref WS-{self.label.seed % 9000 + self.refs}): {text}")

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault when ``tool`` is the service it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = f["text"]
        if f["kind"] == "busy":
            text += f" (again after {f['hint']})"
        elif f["kind"] == "rework":
            text += f" (use {f['hint']})"
        raise self.refuse(f["kind"], text)

    def find_fabric(
        self, pattern: str, colour: str, width: int, metres: int, branch: str, page: int = 1
    ) -> str:
        """Bolts in the swatch catalogue of a pattern and colour, of a width in cm, with at
        least some metres on them at a branch's store, a page at a time."""
        self.fault("findFabric")
        code = BRANCHES.get(branch, branch[:3].upper())
        if page < int(self.params.get("pages", 1)):
            short = [
                {"sku": f"{pattern[:2].upper()}-{code}-{page}{n}", "metres": metres - n - 1}
                for n in (1, 2, 3)
            ]
            return json.dumps({"bolts": short, "next_page": page + 1})
        sku = f"{pattern[:2].upper()}-{code}-{self.label.seed}"
        self.bolts[sku] = branch
        return json.dumps({"result": sku, "branch": branch, "metres": metres + 3})

    def request_fire_test(self, sku: str, standard: str) -> str:
        """Send a fabric's swatch to the test house for a flammability test to a standard."""
        self.fault("requestFireTest")
        test = f"FT-{self.label.seed}-{len(self.tests) + 1}"
        self.tests[test] = 0
        return json.dumps({"test": test, "sku": sku, "state": "QUEUED"})

    def fire_test_status(self, test: str) -> str:
        """A flammability test's state; its certificate once passed."""
        self.tests[test] += 1
        if self.params.get("stuck") or self.tests[test] < int(self.params.get("polls", 1)):
            return json.dumps({"test": test, "state": "RUNNING"})
        return json.dumps({"test": test, "state": "PASSED", "result": f"FC-{test[3:]}"})

    def book_bench(self, bench: str, day: str, hours: int, piece: str, after: str = "") -> str:
        """Book hours at a joiner's bench on a day to repair a piece's frame; ``after`` a time
        (HH:MM) to call again when the bench scheduler is busy."""
        self.fault("bookBench")
        moved = self.params.get("bench_to")
        if moved and bench == JOB["bench"]:
            raise self.refuse(
                "rework",
                f"bench {bench} is stripped down for a new vice that week (use bench={moved})",
            )
        return json.dumps({"result": f"{bench}-{day[5:7]}{day[8:]}-{hours}h", "piece": piece})

    def book_van(
        self, depot: str, day: str, sku: str, slot: str, certificate: str, after: str = ""
    ) -> str:
        """Book the van from a depot to collect the piece and the fabric and deliver the piece
        back on a day; ``after`` a time (HH:MM) to call again when the rota is busy."""
        self.fault("bookVan")
        if depot != JOB["depot"] and depot not in self.params.get("depots", ()):
            raise self.refuse("refused", f"no workshop van runs from {depot}")
        store = self.bolts.get(sku, "")
        if store != JOB["branch"]:
            raise self.refuse(
                "refused",
                f"bolt {sku} is held at the {store or 'unknown'} store, off the {depot} van's "
                f"round ({JOB['branch']} stores only)",
            )
        ref = f"VAN-{self.label.seed}-{len(self.vans) + 1}"
        self.vans.append({"ref": ref, "day": day, "depot": depot, "slot": slot})
        return json.dumps({"result": ref, "day": day, "certificate": certificate})

    def charge_deposit(self, account: str, booking: str, amount: int, after: str = "") -> str:
        """Take a customer's deposit from their account on file for a booking; ``after`` a
        time (HH:MM) to call again when the till is busy."""
        self.fault("chargeDeposit")
        if account != JOB["account"]:
            raise self.refuse("refused", f"the till has no customer account {account} on file")
        self.payments.append(booking)
        return json.dumps({"result": f"DEP-{self.label.seed}-{len(self.payments)}"})

    def notify_customer(self, to: str, booking: str, day: str, after: str = "") -> str:
        """Mail the customer the van booking and the day; ``after`` a time (HH:MM) to call
        again when the mail relay is busy."""
        self.fault("notifyCustomer")
        return json.dumps({"result": f"MSG-{booking}-{day[-2:]}", "to": to})

    def tools(self) -> list[FunctionTool]:
        named: dict[str, Callable[..., str]] = {
            "findFabric": self.find_fabric,
            "requestFireTest": self.request_fire_test,
            "fireTestStatus": self.fire_test_status,
            "bookBench": self.book_bench,
            "bookVan": self.book_van,
            "chargeDeposit": self.charge_deposit,
            "notifyCustomer": self.notify_customer,
        }
        # the Jenkinsfile's step names are the tools' names
        return [FunctionTool.from_defaults(fn, name=name) for name, fn in named.items()]


# --- the app --------------------------------------------------------------------------------
class JobFailed(Exception):
    """The chair was not re-covered and delivered (the reason is the message)."""


class JobDesk:
    """One re-upholstery job, from the job sheet to the watched van round."""

    def __init__(self, label: Label, llm: LiteLLM) -> None:
        self.label = label
        self.job = f"UP-{label.seed % 10000:04d}"
        self.workshop = Workshop(label)
        self.llm = llm
        self.hand = FunctionAgent(
            name="workshop_hand",
            description="runs one stage of a re-upholstery job",
            tools=self.workshop.tools(),
            llm=llm,
            system_prompt=HAND,
        )
        self.results: dict[str, str] = {}

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("branch", "day", "account") if k in self.label.params
        }
        lines = [f"Job: {self.job}", f"Job sheet: {json.dumps(JOB)}"]
        if notes:
            lines.append(f"Foreman's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.results)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    async def plan(self, revision: int, setback: str) -> Pipeline:
        with mlflow.start_span(
            name=f"Jenkinsfile revision {revision}", span_type=SpanType.CHAIN
        ) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            answer = await self.llm.achat(
                [
                    ChatMessage(role="system", content=PLANNER),
                    ChatMessage(role="user", content=brief),
                ]
            )
            text = answer.message.content or ""
            span.set_outputs({"jenkinsfile": text})
            with mlflow.start_span(name="read Jenkinsfile", span_type=SpanType.PARSER) as read:
                read.set_inputs({"jenkinsfile": text})
                pipeline = read_jenkinsfile(text)
                read.set_outputs({"stages": [s.name for s in pipeline.stages], "env": pipeline.env})
        return pipeline

    def fill(self, value: Any, env: dict[str, str]) -> Any:
        """``${results.<stage>.<field>}`` and ``${env.<KEY>}`` filled in from what is known."""
        if not isinstance(value, str):
            return value

        def sub(m: re.Match[str]) -> str:
            if m[1]:
                return self.results.get(m[1], m[0])
            return env.get(m[2], m[0])

        return _REF.sub(sub, value)

    async def attempt(self, stage: Stage, attempt: int, env: dict[str, str]) -> tuple[str, str]:
        """One hand run of a stage; its build result and the value or note."""
        args = {k: self.fill(v, env) for k, v in stage.args.items()}
        order = (
            f"Stage {stage.name} of job {self.job} (attempt {attempt})\n"
            f"Call: {stage.call} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"stage {stage.name} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"order": order})
            handler = self.hand.run(user_msg=order)
            text, errors = "", 0
            async for ev in handler.stream_events():
                if isinstance(ev, ToolCallResult):
                    errors += bool(ev.tool_output.is_error)
                    # the event stream is where the app sees each call and its result
                    span.add_event(
                        SpanEvent(  # type: ignore[abstract]
                            "tool result",
                            attributes={
                                "tool": ev.tool_name,
                                "kwargs": json.dumps(ev.tool_kwargs),
                                "error": bool(ev.tool_output.is_error),
                                "output": str(ev.tool_output.content)[:300],
                            },
                        )
                    )
                elif isinstance(ev, AgentStream):
                    text += ev.delta
            final = str(await handler).strip() or text
            found = re.search(r"RESULT: (\w+) value=(.*?) note=(.*)$", final, re.MULTILINE)
            status, value, note = found.groups() if found else ("FAILURE", "", final)
            span.set_outputs({"result": status, "value": value, "note": note})
            span.set_attribute("upholstery.tool_errors", errors)
            if status != "SUCCESS":
                span.set_status("ERROR")
        return status, value if status == "SUCCESS" else note

    async def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            pipeline = await self.plan(revision, setback)
            setback = ""
            for stage in pipeline.stages:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    status, said = await self.attempt(stage, attempt, pipeline.env)
                    if status == "SUCCESS":
                        self.results[stage.name] = said
                        break
                    if status == "ABORTED":
                        setback = f"{stage.name}: {said}"
                        break
                    if status != "UNSTABLE":
                        raise JobFailed(f"{stage.name}: {status} {said}")
                else:
                    raise JobFailed(f"{stage.name}: still UNSTABLE after {MAX_ATTEMPTS} attempts")
                if setback:
                    break
            if not setback:
                return
        raise JobFailed(f"no Jenkinsfile holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the customer is told: the van's day against the day agreed
        with the customer, then the van's round up to the day."""
        van = self.workshop.vans[-1]
        with mlflow.start_span(name="check van day", span_type=SpanType.GUARDRAIL) as span:
            span.set_inputs({"van": van["ref"], "agreed_day": JOB["day"]})
            span.set_outputs({"van_day": van["day"]})
            if van["day"] != JOB["day"]:
                raise JobFailed(
                    f"van {van['ref']} comes on {van['day']}; the customer agreed {JOB['day']} "
                    f"for the {JOB['piece']}"
                )
        with mlflow.start_span(name="watch van round") as span:
            span.set_inputs({"van": van["ref"], "depot": van["depot"]})
            for read, stops in enumerate((9, 8, 8, 7), 1):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    raise JobFailed(
                        f"van {van['ref']} broke down on the ring road; the customer cancels the "
                        "collection and asks for the deposit back"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("van round", attributes={"read": read, "stops": stops})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "on its round"})

    async def run(self) -> str:
        trace_id = ""
        try:
            with mlflow.start_span(name=f"upholster {self.job}", span_type=SpanType.AGENT) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(JOB | {"job": self.job})
                await self.work()
                self.check()
                root.set_outputs({"outcome": "booked", "results": self.results})
        except JobFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


async def _play(labels: list[Label], llm: LiteLLM) -> dict[str, str]:
    return {label.run: await JobDesk(label, llm).run() for label in labels}


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the upholstery scenarios under MLflow's LlamaIndex autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.llama_index.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            llm = LiteLLM(
                model=f"openai/{MODEL}",
                api_base=server.base_url("corpus-upholstery"),
                api_key="test",
            )
            return asyncio.run(_play(labels, llm))
    finally:
        mlflow.llama_index.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)
