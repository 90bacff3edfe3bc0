"""A grant-funding agent traced by the Logfire SDK (``logfire.span`` and ``@logfire.instrument``
with message templates, ``logfire.instrument_openai`` for the model calls, ``logfire.info`` /
``warn`` / ``error`` logs), against a scripted model on the conformance suite's fake OpenAI
server (``ModelServer(respond=...)``). No planscope code.

Sealed-14 split only (see README.md). The task: a foundation's board approved a research
proposal; find a reviewer in the proposal's field for the grant's oversight (a registry read
page by page), get the project cleared by the ethics board (a decision given later: polled),
convene the award panel, disburse the first tranche to the institution's bank account, send
the grantee the award letter. As a Logfire user would write it:

* the app opens one span per grant (``fund grant {grant}``) and sets its ``outcome``; a failed
  grant raises through it (Logfire records the exception on the span);
* the planner is a span (``plan grant {grant} revision {revision}``) around one model call
  answering a **Makefile**: a target per step (``step: earlier steps  ## goal``) whose recipe
  line is the service call (``tool key=value ...``, ``$(step)`` for an earlier step's result).
  Asked again after a failure, it answers a new Makefile that opens with ``step := result``
  variables for the steps already done, then the targets not done;
* the executor is a span per step attempt (``run {step} attempt {attempt}``): its message the
  recipe line with the earlier results filled in, the services ``@logfire.instrument`` functions
  it calls when the model asks (a failed call's span records the exception; its text goes back
  to the model, logged with ``logfire.warn``), its final answer a **logfmt line**
  ``outcome=done|retry|replan|refused|stalled value=... note="..."``;
* the services answer errors as **SQLSTATE codes**: ``53300`` (too many connections: call again
  in the same run for a later ``not_before`` slot), ``40001`` (serialization failure:
  ``retry``, the app re-runs the step, up to 8 attempts), ``55000`` (object not in prerequisite
  state: ``replan``, the app asks for a new plan, up to 4 plans), ``42501`` / ``02000`` /
  ``57014`` (final);
* after the last step the app checks the clearance against the grant's start
  (``verify award {grant}``) and watches the grant's first quarter (``watch grant {grant}``, a
  ``logfire.info`` per state).

The Logfire instance is local to this module (``logfire.configure(local=True,
send_to_logfire=False, console=False)``): its one additional span processor hands each span to
the play's provider's processors during a play, and to nothing outside one; nothing is sent to
Logfire's service.

The planner trusts the program officer's notes over the proposal: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import logfire
from openai import OpenAI
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label
from ._relay import local_logfire

PROPOSAL: dict[str, Any] = {
    "proposal": "PRP-5521",
    "field": "ecology",
    "amount": 240000,
    "start": "2027-03-01",
    "institution": "INST-3817",
    "account": "IBAN-DE44-5021",
    "email": "h.okafor@example.edu",
}
TRANCHE = 0.25
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
ERROR = re.compile(r"SQLSTATE (\w{5}): (.*)$", re.DOTALL)
OUTCOMES = {"53300": "again", "40001": "retry", "55000": "replan"}
"""SQLSTATE -> what it asks for; every other code is final."""


class GrantError(RuntimeError):
    """A service's error answer: ``SQLSTATE {code}: {text}``."""

    def __init__(self, code: str, text: str):
        super().__init__(f"SQLSTATE {code}: {text}")


# --- the plan: a Makefile ---------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One target of the planner's Makefile; an argument ``("from", id)`` is an earlier step's
    result (``$(id)``)."""

    id: str
    goal: str
    tool: str
    args: dict[str, tuple[str, str]]


_TARGET = re.compile(r"^(\w+):(?!=)[ \w]*?(?:##\s*(.*))?$")
_KNOWN = re.compile(r"^(\w+) := (.*)$")
_FROM = re.compile(r"^\$\((\w+)\)$")


def parse_plan(text: str) -> tuple[list[Step], dict[str, str]]:
    """The steps of a Makefile plan and the results it already knows (``step := result``).

    >>> steps, done = parse_plan('find := RVW-1\\n\\nbook: find  ## Book it\\n'
    ...     '\\tpanel reviewer=$(find) room="Hall 2"\\n')
    >>> done, steps[0].tool, steps[0].goal
    ({'find': 'RVW-1'}, 'panel', 'Book it')
    >>> steps[0].args
    {'reviewer': ('from', 'find'), 'room': ('value', 'Hall 2')}
    """
    done: dict[str, str] = {}
    steps: list[Step] = []
    target: tuple[str, str] | None = None
    for line in text.splitlines():
        if line.startswith("\t") and target:
            tool, *pairs = shlex.split(line)
            args = {}
            for pair in pairs:
                key, value = pair.split("=", 1)
                m = _FROM.match(value)
                args[key] = ("from", m.group(1)) if m else ("value", value)
            steps.append(Step(target[0], target[1], tool, args))
            target = None
        elif m := _KNOWN.match(line):
            done[m.group(1)] = m.group(2)
        elif m := _TARGET.match(line):
            target = (m.group(1), (m.group(2) or "").strip())
    return steps, done


def _makefile(grant: str, revision: int, steps: list[tuple[str, str, str, dict[str, Any]]],
              done: dict[str, str]) -> str:  # fmt: skip
    lines = [f"# grant {grant}: funding plan, revision {revision}"]
    lines += [f"{sid} := {done[sid]}" for sid, *_ in steps if sid in done]
    for sid, goal, tool, args in steps:
        if sid in done:
            continue
        needs = [v[1:] for v in args.values() if isinstance(v, str) and v.startswith("@")]
        recipe = [tool] + [
            f"{k}=$({v[1:]})" if isinstance(v, str) and v.startswith("@") else
            f"{k}={shlex.quote(str(v))}"
            for k, v in args.items()
        ]  # fmt: skip
        lines += [
            "",
            f"{sid}: {' '.join(needs)}".rstrip() + f"  ## {goal}",
            "\t" + " ".join(recipe),
        ]
    return "\n".join(lines) + "\n"


def _logfmt(line: str) -> dict[str, str]:
    """The ``key=value`` pairs of a logfmt line (values may be double-quoted)."""
    return dict(pair.split("=", 1) for pair in shlex.split(line) if "=" in pair)


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _section(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's Makefile: the proposal, the notes trusted over it, the start or account a
    problem names, the done steps."""
    facts = json.loads(_section(brief, "Proposal")) | json.loads(_section(brief, "Notes") or "{}")
    done = json.loads(_section(brief, "Done") or "{}")
    problem = _section(brief, "Problem")
    revision = int(_section(brief, "Revision") or 1)
    start = re.search(r"earliest start is (\d{4}-\d\d-\d\d)", problem)
    account = re.search(r"pay (IBAN-[\w-]+) instead", problem)
    steps = [
        ("find_reviewer", f"Find an oversight reviewer in {facts['field']}", "reviewer_registry",
         {"field": facts["field"], "amount": facts["amount"]}),
        ("request_clearance", "Get the project cleared by the ethics board", "ethics_board",
         {"reviewer": "@find_reviewer", "proposal": facts["proposal"],
          "start": start.group(1) if start else facts["start"]}),
        ("convene_panel", f"Convene the award panel for {facts['institution']}",
         "panel_scheduler", {"reviewer": "@find_reviewer", "clearance": "@request_clearance",
                             "institution": facts["institution"]}),
        ("disburse_tranche", "Disburse the first tranche to the institution's bank account",
         "funds_transfer",
         {"award": "@convene_panel", "account": account.group(1) if account else facts["account"]}),
        ("notify_grantee", "Send the grantee the award letter", "award_letter",
         {"award": "@convene_panel", "email": facts["email"]}),
    ]  # fmt: skip
    return {"role": "assistant", "content": _makefile(facts["grant"], revision, steps, done)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(outcome: str, value: str = "", note: str = "") -> dict[str, Any]:
    line = f"outcome={outcome} value={value or '-'} note={shlex.quote(note or 'ok')}"
    return {"role": "assistant", "content": line}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: run the recipe line, call again after a ``53300`` error for a later
    slot, follow ``next_page``, poll a clearance until it is decided, answer the logfmt line."""
    recipe = task.splitlines()[-1]
    name, *pairs = shlex.split(recipe)
    args: dict[str, Any] = {
        k: int(v) if v.isdigit() else v for k, v in (p.split("=", 1) for p in pairs)
    }
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    error = ERROR.match(last)
    if error:
        outcome = OUTCOMES.get(error.group(1), "refused")
        if outcome == "again":
            busy = sum(r.startswith("SQLSTATE 53300:") for r in results)
            return _call(n, name, args | {"not_before": f"{9 + 2 * busy:02d}:00"})
        return _say(outcome, note=f"{error.group(1)} {error.group(2)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "PENDING":
        checks = sum(
            c["function"]["name"] == "clearance_status"
            for m in messages
            for c in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            return _say("stalled", note=f"clearance {seen['clearance']} PENDING after {checks}")
        return _call(n, "clearance_status", {"clearance": seen["clearance"]})
    return _say("done", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's Makefile for
    a grant, the executor's next tool call or logfmt line otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": "Run s:\\n\\tf a=1"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Proposal: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The services: the reviewer registry, the ethics board, the panel scheduler, the bank,
    the grantee portal."""

    label: Label
    grant: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    reviewers: dict[str, str] = field(default_factory=dict)
    """Reviewer -> their field."""
    clearances: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Clearance -> reviewer, start and status checks."""
    awards: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {PROPOSAL["account"]})
    """Bank accounts on file for the institution."""
    start: str = PROPOSAL["start"]
    """The earliest start the ethics board clears (the grant's start)."""
    transfers: dict[str, int] = field(default_factory=dict)
    letter: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.start = self.label.params.get("new_start", PROPOSAL["start"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise GrantError("57014", f"{text}; canceling statement due to user request")
        how = self.params.get("raise")
        if how == "again":
            raise GrantError("53300", f"{text}; too many connections for the grants ledger")
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"IBAN-DE44-{6100 + 37 * len(self.errors)}"
            self.accounts.add(account)
            raise GrantError("55000", f"{text}; account frozen for audit, pay {account} instead")
        raise GrantError("40001", f"{text}; could not serialize access, retry the transaction")


class Services:
    """The services, each an ``@logfire.instrument`` function bound to one grant's world;
    ``schemas`` are the OpenAI tool definitions the executor offers the model."""

    TEMPLATES = {
        "reviewer_registry": "reviewer_registry {field} page {page}",
        "ethics_board": "ethics_board {proposal} from {start}",
        "clearance_status": "clearance_status {clearance}",
        "panel_scheduler": "panel_scheduler {institution}",
        "funds_transfer": "funds_transfer {award} to {account}",
        "award_letter": "award_letter {award} to {email}",
    }

    def __init__(self, world: World, lf: logfire.Logfire):
        self.world = world
        self.tools: dict[str, Callable[..., str]] = {
            name: lf.instrument(template, record_return=True)(getattr(self, name))
            for name, template in self.TEMPLATES.items()
        }

    @staticmethod
    def schemas(names: Sequence[str]) -> list[dict[str, Any]]:
        """OpenAI function definitions (free-form arguments) for the named tools."""
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "parameters": {"type": "object", "additionalProperties": True},
                },
            }
            for name in names
        ]

    def reviewer_registry(
        self, field: str, amount: int, page: int = 1, not_before: str = "09:00"
    ) -> str:
        self.world.fault()
        pages = int(self.world.params.get("pages", 1))
        code = field[:3].upper()
        if page < pages:
            busy = [f"RVW-{code}-{page}{n}" for n in range(3)]
            return json.dumps({"reviewers": busy, "conflicted": True, "next_page": page + 1})
        reviewer = f"RVW-{code}-{pages}4"
        self.world.reviewers[reviewer] = field
        return json.dumps({"value": reviewer, "field": field, "limit": amount})

    def ethics_board(
        self, reviewer: str, proposal: str, start: str, not_before: str = "09:00"
    ) -> str:
        self.world.fault()
        if reviewer not in self.world.reviewers:
            raise GrantError("02000", f"no registered reviewer {reviewer}")
        if start != self.world.start and start == PROPOSAL["start"]:
            raise GrantError(
                "55000",
                f"the board does not sit before {start}; earliest start is {self.world.start}",
            )
        clearance = f"ETH-{self.world.label.seed}-{len(self.world.clearances)}"
        self.world.clearances[clearance] = {"reviewer": reviewer, "start": start, "checks": 0}
        return json.dumps({"clearance": clearance, "status": "PENDING"})

    def clearance_status(self, clearance: str) -> str:
        entry = self.world.clearances[clearance]
        entry["checks"] += 1
        if self.world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            self.world.params.get("polls", 1)
        ):
            return json.dumps({"clearance": clearance, "status": "PENDING"})
        return json.dumps({"clearance": clearance, "status": "CLEARED", "value": clearance})

    def panel_scheduler(
        self, reviewer: str, clearance: str, institution: str, not_before: str = "09:00"
    ) -> str:
        self.world.fault()
        expertise = self.world.reviewers.get(reviewer)
        if expertise != PROPOSAL["field"]:
            raise GrantError(
                "42501",
                f"{reviewer} reviews {expertise}; the proposal is in {PROPOSAL['field']} "
                "(outside the reviewer's remit)",
            )
        award = f"AWD-{self.world.label.seed}-{len(self.world.awards)}"
        self.world.awards[award] = {"clearance": clearance, "institution": institution}
        return json.dumps({"value": award, "panel": "Thursday"})

    def funds_transfer(self, award: str, account: str, not_before: str = "09:00") -> str:
        self.world.fault()
        if account not in self.world.accounts:
            raise GrantError("02000", f"no bank account {account} on file for the institution")
        entry = self.world.awards[award]
        if entry["institution"] != PROPOSAL["institution"]:
            raise GrantError(
                "42501", f"{entry['institution']} is not the institution on the proposal"
            )
        amount = int(PROPOSAL["amount"] * TRANCHE)
        self.world.transfers[award] = amount
        return json.dumps({"value": f"TRF-{self.world.label.seed}", "amount": amount})

    def award_letter(self, award: str, email: str, not_before: str = "09:00") -> str:
        self.world.fault()
        if award not in self.world.transfers:
            raise GrantError("42501", f"award {award} has no disbursed tranche")
        self.world.letter = f"LTR-{self.world.label.seed}"
        return json.dumps({"value": self.world.letter, "email": email})


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The grant was not cleared, awarded, paid and its grantee told, or failed after (the
    reason is the message)."""


class GrantOffice:
    """One grant, from the approved proposal to its first quarter."""

    def __init__(self, label: Label, lf: logfire.Logfire, client: OpenAI):
        self.label = label
        self.lf = lf
        self.client = client
        self.world = World(label, grant=f"GR-{label.seed % 9000 + 1000}")
        self.services = Services(self.world, lf)
        self.done: dict[str, str] = {}

    def _chat(self, messages: list[dict[str, Any]], tools: Sequence[str] = ()) -> Any:
        request: dict[str, Any] = {"model": MODEL, "messages": messages}
        if tools:
            request["tools"] = Services.schemas(tools)
        return self.client.chat.completions.create(**request).choices[0].message

    def plan(self, problem: str, revision: int) -> list[Step]:
        notes = {
            k: self.label.params[k]
            for k in ("field", "start", "institution", "account")
            if k in self.label.params
        }
        brief = (
            f"Proposal: {json.dumps({'grant': self.world.grant} | PROPOSAL)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(self.done)}\n"
            f"Problem: {problem}\nRevision: {revision}"
        )
        with self.lf.span(
            "plan grant {grant} revision {revision}",
            grant=self.world.grant,
            revision=revision,
            problem=problem,
        ) as span:
            messages = [
                {
                    "role": "system",
                    "content": "You plan grant funding as a Makefile: one target per step "
                    "('step: needs  ## goal'), its recipe the service call 'tool key=value', "
                    "$(step) for an earlier result; done steps as 'step := result'. Trust the "
                    "program officer's notes.",
                },
                {"role": "user", "content": brief},
            ]
            text = str(self._chat(messages).content)
            span.set_attribute("plan", text)
        steps, done = parse_plan(text)
        self.done.update(done)
        return steps

    def attempt(self, step: Step, attempt: int) -> dict[str, str]:
        """One executor run of a step, its ``$(step)`` arguments filled in from the done steps;
        the answer's logfmt fields."""
        recipe = shlex.join(
            [step.tool]
            + [f"{k}={self.done[v] if how == 'from' else v}" for k, (how, v) in step.args.items()]
        )
        task = f"Run {step.id} ({step.goal}):\n\t{recipe}"
        self.world.step = step.id
        with self.lf.span(
            "run {step} attempt {attempt}", step=step.id, attempt=attempt, recipe=recipe
        ) as span:
            messages: list[dict[str, Any]] = [
                {
                    "role": "system",
                    "content": "You run one target of a grant's Makefile with the services, "
                    "then answer one logfmt line: outcome=done|retry|replan|refused|stalled "
                    'value=... note="..."',
                },
                {"role": "user", "content": task},
            ]
            tools = [step.tool, "clearance_status"]
            while True:
                message = self._chat(messages, tools)
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for tc in message.tool_calls:
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": tc.id,
                            "content": self._run_tool(
                                tc.function.name, json.loads(tc.function.arguments)
                            ),
                        }
                    )
            answer = _logfmt(str(message.content))
            span.set_attribute("outcome", answer["outcome"])
            span.set_attribute("answer", str(message.content))
        return answer

    def _run_tool(self, name: str, args: dict[str, Any]) -> str:
        try:
            return self.services.tools[name](**args)
        except GrantError as e:  # recorded on the tool's span; the text goes back to the model
            self.lf.warn("{tool} failed: {error}", tool=name, error=str(e))
            return str(e)

    def work(self) -> None:
        problem = ""
        for revision in range(1, MAX_PLANS + 1):
            steps = self.plan(problem, revision)
            problem = ""
            for step in steps:
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    answer = self.attempt(step, attempt)
                    outcome, note = answer["outcome"], answer.get("note", "")
                    if outcome == "done":
                        self.done[step.id] = answer["value"]
                        break
                    if outcome == "retry" and attempt < MAX_STEP_ATTEMPTS:
                        self.lf.warn(
                            "retrying {step} after attempt {attempt}: {note}",
                            step=step.id,
                            attempt=attempt,
                            note=note,
                        )
                        continue
                    if outcome == "replan" and revision < MAX_PLANS:
                        problem = f"{step.id}: {note}"
                        self.lf.warn("re-planning after {step}: {note}", step=step.id, note=note)
                        break
                    self.lf.error(
                        "{step} {outcome} after {attempt} attempts: {note}",
                        step=step.id,
                        outcome=outcome,
                        attempt=attempt,
                        note=note,
                    )
                    raise Failed(f"{step.id}: {outcome}: {note}")
                if problem:
                    break
            if not problem:
                return
        raise Failed(problem)

    def check(self) -> None:
        """The app's own checks once the grantee is told: the clearance's start against the
        start the board clears, then the grant's first quarter."""
        clearance = self.world.clearances[self.done["request_clearance"]]
        with self.lf.span(
            "verify award {grant}",
            grant=self.world.grant,
            award=self.done["convene_panel"],
            clearance=self.done["request_clearance"],
        ) as span:
            span.set_attribute("cleared_start", clearance["start"])
            span.set_attribute("grant_start", self.world.start)
            if clearance["start"] != self.world.start:
                raise Failed(
                    f"the clearance {self.done['request_clearance']} is from "
                    f"{clearance['start']}, the grant starts {self.world.start} (tranche of "
                    f"{self.world.transfers[self.done['convene_panel']]} paid)"
                )
        with self.lf.span("watch grant {grant}", grant=self.world.grant) as span:
            states = ("LETTER_SIGNED", "FUNDS_RECEIVED", "KICKOFF_HELD", "FIRST_REPORT_FILED")
            for week, state in enumerate(states, 1):
                if self.label.scenario == "external_freeze" and week > int(
                    self.label.params["polls"]
                ):
                    raise Failed(
                        "the institution is under a federal funding freeze; grant suspended"
                    )
                self.lf.info("grant {grant} is {state}", grant=self.world.grant, state=state)
            span.set_attribute("state", states[-1])

    def run(self) -> str:
        try:
            with self.lf.span(
                "fund grant {grant}", grant=self.world.grant, proposal=PROPOSAL
            ) as root:
                trace_id = format(otel_trace.get_current_span().get_span_context().trace_id, "032x")
                try:
                    self.work()
                    self.check()
                except Failed:
                    root.set_attribute("outcome", "failed")
                    raise
                root.set_attribute("outcome", "funded")
        except Failed:
            pass  # recorded on the grant's span by Logfire
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the grant scenarios with Logfire's spans handed to ``provider``'s processors."""
    if not labels:
        return {}
    with local_logfire("grant-office", provider) as lf, ModelServer(respond=respond) as server:
        client = OpenAI(api_key="test", base_url=server.base_url("corpus-grants"), max_retries=0)
        try:
            with lf.instrument_openai(client):
                return {label.run: GrantOffice(label, lf, client).run() for label in labels}
        finally:
            client.close()
