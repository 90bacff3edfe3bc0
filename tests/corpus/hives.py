"""A hives agent: an almond grower's pollination contract, a real AutoGen AgentChat
``MagenticOneGroupChat`` (its orchestrator's task ledger, progress ledger and re-planning) with
two tool-using ``AssistantAgent``s as executors, traced by AutoGen's own OpenTelemetry tracing
(the ``SingleThreadedAgentRuntime(tracer_provider=...)``'s message spans; autogen-core's GenAI
``invoke_agent`` / ``execute_tool`` spans through the global tracer provider, relayed), against
a scripted model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``).
No planscope code.

Sealed-18 split only (see README.md). The task: rent bee colonies for the orchard's bloom; find
an apiary with enough colonies in the orchard's region (a registry read page by page), have its
hives inspected (the certificate comes later: polled), book the hive truck for the placement
day, charge the rental to the grower's account, send the grower the placement notice.

* the orchestrator's model answers Magentic-One's prompts: a fact sheet, then a **bullet plan**,
  one bullet a step, ``- <step> (<agent>): <goal> -- <tool>(<arg>=<literal>, <arg>=<step>)`` (a
  bare name: an earlier step's result), the team's progress ledger (JSON) per turn naming the
  next agent and its instruction ``Please do <step>: <tool>(<args filled in>)``; when an agent
  reports the step blocked the ledger says no progress: Magentic-One re-plans (fact sheet and
  plan again: ``Plan revision <n>``, the done steps as ``- <step>: done (<result>)`` bullets);
* an executor answers ``<step> finished: <value>``, ``<step> needs another try: <why>``,
  ``<step> is blocked: <why>``, ``<step> was refused: <why>``, ``<step> is stuck: <why>``;
* the services raise HRESULT-style errors ``HRESULT 0x80A1000n E_HIVE_<KIND>: text``: PENDING
  (call again in the same turn for a later slot), RETRY (asked again), CONFLICT (a re-plan, up
  to 4 plans), DENIED / NOTFOUND / ABORT (final).

The orchestrator trusts the grower's field notes over the order: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from warnings import catch_warnings, filterwarnings

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import ChatAgent
from autogen_agentchat.messages import TextMessage
from autogen_agentchat.teams import MagenticOneGroupChat
from autogen_core import SingleThreadedAgentRuntime
from autogen_core.models import ModelInfo
from autogen_ext.models.openai import OpenAIChatCompletionClient
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label
from ._relay import global_provider

ORDER: dict[str, Any] = {
    "orchard": "kern-almond-12",
    "region": "kern",
    "colonies": 400,
    "bloom_day": "2027-02-18",
    "account": "ACC-3307",
    "email": "m.okafor@example.org",
}
FEE_PER_COLONY = 210
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
HRESULT = re.compile(r"HRESULT 0x80A1000\d E_HIVE_([A-Z]+): (.*)$", re.DOTALL)
REPLY = re.compile(r"(\w+) (finished|needs another try|is blocked|was refused|is stuck): (.*)$")
BULLET = re.compile(r"^- (\w+) \((\w+)\): (.*?) -- (\w+\(.*\))$")
DONE = re.compile(r"^- (\w+): done \((.*)\)$")
PROMPTS = (
    "Here is the pre-survey",
    "rewrite the following fact sheet",
    "devise a short bullet-point plan",
    "come up with a new plan",
    "Please output an answer in pure JSON",
    "provide the final answer",
)
"""Magentic-One's orchestrator prompts (its ``_prompts.py``), each told by a phrase."""
CODES = {"PENDING": 1, "RETRY": 2, "CONFLICT": 3, "DENIED": 5, "NOTFOUND": 6, "ABORT": 7}


class HiveError(RuntimeError):
    """A service's error: ``HRESULT 0x80A1000n E_HIVE_{KIND}: {text}``."""

    def __init__(self, kind: str, text: str):
        super().__init__(f"HRESULT 0x80A1000{CODES[kind]} E_HIVE_{kind}: {text}")
        self.kind = kind


# --- the plan: Magentic-One's bullet list ----------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One bullet; an argument ``("from", step)`` is an earlier step's result."""

    id: str
    agent: str
    goal: str
    tool: str
    args: dict[str, tuple[str, Any]]


def parse_plan(text: str) -> tuple[list[Step], dict[str, str]]:
    """The steps of a bullet plan and the results its done bullets carry.

    >>> steps, done = parse_plan("Plan revision 2\\n- find_apiary: done (APY-1)\\n"
    ...     "- book_haul (haul_clerk): Book the truck -- haul_booking(apiary=find_apiary, day='x')")
    >>> done, steps[0].tool, steps[0].args
    ({'find_apiary': 'APY-1'}, 'haul_booking', {'apiary': ('from', 'find_apiary'), \
'day': ('value', 'x')})
    """
    steps, done = [], {}
    for line in text.splitlines():
        if m := DONE.match(line):
            done[m.group(1)] = m.group(2)
        elif m := BULLET.match(line):
            call = ast.parse(m.group(4), mode="eval").body
            assert isinstance(call, ast.Call)
            args = {
                str(k.arg): ("from", k.value.id)
                if isinstance(k.value, ast.Name)
                else ("value", ast.literal_eval(k.value))
                for k in call.keywords
            }
            steps.append(Step(m.group(1), m.group(2), m.group(3), m.group(4).split("(")[0], args))
    return steps, done


# --- the scripted model -----------------------------------------------------------------------
def _given(task: str) -> dict[str, Any]:
    """The order and the field notes trusted over it."""
    order = json.loads(re.search(r"Order: (\{.*?\})", task).group(1))  # type: ignore[union-attr]
    notes = re.search(r"Field notes: (\{.*?\})", task)
    return order | (json.loads(notes.group(1)) if notes else {})


def _plan(task: str, thread: str, rev: int) -> str:
    """The bullet plan: the done steps kept, a day or an account a blocked report named."""
    facts = _given(task)
    done = dict(re.findall(r"(\w+) finished: (\S+)", thread))
    done |= dict(re.findall(r"^- (\w+): done \((.*)\)$", thread, re.MULTILINE))
    days = re.findall(r"truck free on (\d{4}-\d\d-\d\d)", thread)
    accounts = re.findall(r"use (ACC-\d+)", thread)
    day = days[-1] if days else facts["bloom_day"]
    account = accounts[-1] if accounts else facts["account"]
    steps = [
        ("find_apiary", "apiary_scout", f"Find an apiary with {facts['colonies']} colonies in "
         f"{facts['region']}", f"apiary_registry(region={facts['region']!r}, "
         f"colonies={facts['colonies']})"),
        ("inspect_hives", "apiary_scout", "Have the apiary's hives inspected", "hive_inspection("
         f"apiary=find_apiary, colonies={facts['colonies']})"),
        ("book_haul", "haul_clerk", "Book the hive truck for the placement day", "haul_booking("
         f"apiary=find_apiary, certificate=inspect_hives, day={day!r})"),
        ("pay_rental", "haul_clerk", "Charge the rental to the grower's account", "rental_charge("
         f"haul=book_haul, account={account!r}, "
         f"colonies={facts['colonies']})"),
        ("notify_grower", "haul_clerk", "Send the grower the placement notice",
         f"placement_notice(haul=book_haul, payment=pay_rental, email={facts['email']!r})"),
    ]  # fmt: skip
    lines = [f"Plan revision {rev}"] + [
        f"- {sid}: done ({done[sid]})" if sid in done else f"- {sid} ({agent}): {goal} -- {call}"
        for sid, agent, goal, call in steps
    ]
    return "\n".join(lines)


def _ledger(task: str, thread: list[str]) -> dict[str, Any]:
    """The progress ledger: the first step not done, asked again after a retry report; no
    progress after a blocked report (Magentic-One re-plans); satisfied when all are done or
    one fails for good."""
    plan_text = thread[0].split("Here is the plan to follow as best as possible:", 1)[1]
    steps, done = parse_plan(plan_text)
    rev = int(re.search(r"Plan revision (\d+)", plan_text).group(1))  # type: ignore[union-attr]
    replies = [m for t in thread[1:] if (m := REPLY.match(t))]
    done |= {m.group(1): m.group(3) for m in replies if m.group(2) == "finished"}
    todo = [s for s in steps if s.id not in done]
    last = REPLY.match(thread[-1])  # the report the ledger answers, if any
    stop, progress = "", True
    if last and last.group(2) in ("was refused", "is stuck"):
        stop = f"{last.group(1)} cannot be done: {last.group(3)}"
    elif last and last.group(2) == "is blocked":
        progress = False
        if rev >= MAX_PLANS:
            stop = f"{last.group(1)} still blocked after {rev} plans: {last.group(3)}"
    elif last and last.group(2) == "needs another try":
        tries = sum(m.group(1) == last.group(1) for m in replies)
        if tries >= MAX_STEP_ATTEMPTS:
            stop = f"{last.group(1)} failed {tries} times: {last.group(3)}"
    if not todo:
        stop = "every step of the plan finished"
    step = todo[0] if todo else None
    argv = {
        k: done.get(v, v) if how == "from" else v
        for k, (how, v) in (step.args if step else {}).items()
    }
    call = f"{step.tool}({', '.join(f'{k}={v!r}' for k, v in argv.items())})" if step else ""
    return {
        "is_request_satisfied": {"reason": stop or "steps remain", "answer": bool(stop)},
        "is_in_loop": {"reason": "no repeated requests", "answer": False},
        "is_progress_being_made": {
            "reason": "recent reports add value" if progress else "the step is blocked",
            "answer": progress,
        },
        "next_speaker": {"reason": "owns the step", "answer": step.agent if step else ""},
        "instruction_or_question": {
            "reason": step.goal if step else "",
            "answer": f"Please do {step.id}: {call}" if step else "",
        },
    }


def _orchestrator(messages: list[dict[str, Any]]) -> str | None:
    """The orchestrator's answer to Magentic-One's prompt, None for an executor's turn."""
    prompt = str(messages[-1].get("content") or "")
    texts = [str(m.get("content") or "") for m in messages[:-1]]
    task = re.search(r"Order: .*", "\n".join([*texts, prompt]))
    if not task or not any(p in prompt for p in PROMPTS):
        return None
    if "Here is the pre-survey" in prompt or "rewrite the following fact sheet" in prompt:
        given = _given(task.group(0))
        verified = re.findall(r"(\w+) finished: (\S+)", "\n".join(texts))
        return (
            "1. GIVEN OR VERIFIED FACTS\n"
            + "\n".join(
                [f"- {k}: {v}" for k, v in given.items()] + [f"- {s} gave {v}" for s, v in verified]
            )
            + "\n2. FACTS TO LOOK UP\n- a free apiary, the truck's day\n3. FACTS TO DERIVE\n- the "
            "rental\n4. EDUCATED GUESSES\n- the field notes are newer than the order"
        )
    if "devise a short bullet-point plan" in prompt:
        return _plan(task.group(0), "", 1)
    if "come up with a new plan" in prompt:
        rev = int(re.findall(r"Plan revision (\d+)", "\n".join(texts))[-1]) + 1
        cause = [t for t in texts if " is blocked: " in t][-1]
        return f"Root cause: {cause}\n\n" + _plan(task.group(0), "\n".join(texts), rev)
    if "Please output an answer in pure JSON" in prompt:
        said = [t for t in texts if t.strip()]
        start = max(i for i, t in enumerate(said) if "Here is the plan to follow" in t)
        return json.dumps(_ledger(task.group(0), said[start:]))
    return "Summary for the grower: " + " ".join(t for t in texts if REPLY.match(t))


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{name}_{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _executor(messages: list[dict[str, Any]]) -> str | dict[str, Any]:
    """The executor's turn: call the instructed tool, call again for a later slot after
    PENDING, follow ``next_page``, poll an inspection until certified, then report."""
    at = max(i for i, m in enumerate(messages) if str(m.get("content")).startswith("Please do "))
    sid, call = str(messages[at]["content"]).removeprefix("Please do ").split(": ", 1)
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    name = node.func.id
    args = {str(k.arg): ast.literal_eval(k.value) for k in node.keywords}
    results = [str(m.get("content") or "") for m in messages[at:] if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    error = HRESULT.search(results[-1])
    if error:
        kind, text = error.groups()
        if kind == "PENDING":
            pending = sum("E_HIVE_PENDING" in r for r in results)
            return _call(n, name, args | {"slot": f"{5 + pending:02d}:30"})
        how = {"RETRY": "needs another try", "CONFLICT": "is blocked"}.get(kind, "was refused")
        return f"{sid} {how}: E_HIVE_{kind} {text}"
    seen = json.loads(results[-1])
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("state") == "SCHEDULED":
        checks = sum('"SCHEDULED"' in r for r in results) - 1
        if checks >= MAX_STATUS_CHECKS:
            return f"{sid} is stuck: inspection {seen['request']} still SCHEDULED after {checks}"
        return _call(n, "inspection_status", {"request": seen["request"]})
    return f"{sid} finished: {seen['value']}"


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the orchestrator's answer to a Magentic-One prompt,
    an executor's next tool call or report otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": "Please do s: f(a=1)"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    answer = _orchestrator(messages) or _executor(messages)
    if isinstance(answer, str):
        return completion(body, {"role": "assistant", "content": answer})
    return completion(body, answer)


# --- the world --------------------------------------------------------------------------------
@dataclass
class World:
    """The services: the apiary registry, the inspectors, the hive truck, the grower's account,
    the grower portal."""

    label: Label
    errors: list[str] = field(default_factory=list)
    apiaries: dict[str, str] = field(default_factory=dict)
    """Apiary -> its region."""
    inspections: dict[str, dict[str, Any]] = field(default_factory=dict)
    hauls: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {ORDER["account"]})
    free_day: str = ORDER["bloom_day"]
    """The day the truck is free."""
    payments: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.free_day = self.label.params.get("free_day", ORDER["bloom_day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, step: str) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise HiveError("ABORT", f"{text}; request withdrawn")
        how = self.params.get("raise")
        if how == "again":
            raise HiveError("PENDING", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"ACC-{3400 + 37 * len(self.errors)}"
            self.accounts.add(account)
            raise HiveError("CONFLICT", f"{text}; account frozen, use {account}")
        raise HiveError("RETRY", text)


def services(world: World) -> dict[str, list[Callable[..., Awaitable[Any]]]]:
    """Each executor's tools."""

    async def apiary_registry(region: str, colonies: int, page: int = 1, slot: str = "") -> str:
        world.fault("find_apiary")
        pages = int(world.params.get("pages", 1))
        if page < pages:
            return json.dumps({"apiaries": [f"APY-{page}{n}" for n in range(3)],
                               "full": True, "next_page": page + 1})  # fmt: skip
        apiary = f"APY-{region.upper()}-{pages}"
        world.apiaries[apiary] = region
        return json.dumps({"value": apiary, "region": region, "colonies": colonies})

    async def hive_inspection(apiary: str, colonies: int, slot: str = "") -> str:
        world.fault("inspect_hives")
        request = f"INS-{world.label.seed}-{len(world.inspections)}"
        world.inspections[request] = {"apiary": apiary, "colonies": colonies, "checks": 0}
        return json.dumps({"request": request, "state": "SCHEDULED"})

    async def inspection_status(request: str) -> str:
        entry = world.inspections[request]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return json.dumps({"request": request, "state": "SCHEDULED"})
        return json.dumps({"request": request, "state": "CERTIFIED", "value": request})

    async def haul_booking(apiary: str, certificate: str, day: str, slot: str = "") -> str:
        world.fault("book_haul")
        region = world.apiaries.get(apiary)
        if region != ORDER["region"]:
            raise HiveError(
                "DENIED", f"apiary {apiary} is in {region}; no haul to {ORDER['region']}"
            )
        if day != world.free_day and day == ORDER["bloom_day"]:
            raise HiveError("CONFLICT", f"no truck on {day}; truck free on {world.free_day}")
        haul = f"HAUL-{world.label.seed}-{len(world.hauls)}"
        world.hauls[haul] = {"day": day, "certificate": certificate}
        return json.dumps({"value": haul, "day": day})

    async def rental_charge(haul: str, account: str, colonies: int, slot: str = "") -> str:
        world.fault("pay_rental")
        if account not in world.accounts:
            raise HiveError("NOTFOUND", f"no account {account} for this grower")
        certified = world.inspections[world.hauls[haul]["certificate"]]["colonies"]
        if certified != ORDER["colonies"]:
            raise HiveError("DENIED", f"certificate covers {certified} colonies, contract "
                            f"{ORDER['colonies']}")  # fmt: skip
        world.payments[haul] = FEE_PER_COLONY * colonies
        return json.dumps({"value": f"PAY-{world.label.seed}", "amount": world.payments[haul]})

    async def placement_notice(haul: str, payment: str, email: str, slot: str = "") -> str:
        world.fault("notify_grower")
        if haul not in world.payments:
            raise HiveError("DENIED", f"haul {haul} has no rental paid")
        return json.dumps({"value": f"MSG-{world.label.seed}", "email": email})

    return {
        "apiary_scout": [apiary_registry, hive_inspection, inspection_status],
        "haul_clerk": [haul_booking, rental_charge, placement_notice],
    }


# --- the app ----------------------------------------------------------------------------------
class Failed(RuntimeError):
    """The colonies were not placed, paid and the grower told, or failed after (the reason)."""


async def run(label: Label, base_url: str, provider: TracerProvider, tracer: Tracer) -> str:
    """One contract as a Magentic-One team on a runtime traced to ``provider``; the trace id."""
    world = World(label)
    contract = f"PC-{label.seed % 9000 + 1000}"
    notes = {k: label.params[k] for k in ("region", "colonies", "bloom_day", "account")
             if k in label.params}  # fmt: skip
    info: ModelInfo = {"vision": False, "function_calling": True, "json_output": False,
            "family": "unknown", "structured_output": False}  # fmt: skip
    client = OpenAIChatCompletionClient(
        model=MODEL, base_url=base_url, api_key="test", model_info=info, max_retries=0
    )
    with tracer.start_as_current_span(f"pollination contract {contract}") as span:
        span.set_attributes({"contract.id": contract, "contract.orchard": ORDER["orchard"]})
        runtime = SingleThreadedAgentRuntime(tracer_provider=provider)
        runtime.start()
        try:
            agents: list[ChatAgent] = [
                AssistantAgent(
                    name,
                    client,
                    tools=list(tools),
                    max_tool_iterations=24,
                    description=f"the {name}: " + ", ".join(t.__name__ for t in tools),
                )
                for name, tools in services(world).items()
            ]
            team = MagenticOneGroupChat(agents, client, runtime=runtime, max_stalls=1)
            task = f"Order: {json.dumps({'contract': contract} | ORDER)}"
            if notes:
                task += f" Field notes: {json.dumps(notes)}"
            result = await team.run(task=task)
            final = result.messages[-1]
            assert isinstance(final, TextMessage), final
            if not world.payments or "notify_grower finished" not in final.content:
                raise Failed(result.stop_reason or final.content)
            with tracer.start_as_current_span("check placement") as check:
                day = next(iter(world.hauls.values()))["day"]
                check.set_attributes({"placement.day": day, "truck.free_day": world.free_day})
                if day != world.free_day:
                    raise Failed(f"the truck is booked for {day}, it is free on {world.free_day}")
                if label.scenario == "external_frost":
                    raise Failed("frost killed the bloom after placement; the grower cancels")
        except Failed as e:
            span.record_exception(e)
            span.set_status(Status(StatusCode.ERROR, str(e)))
        finally:
            await runtime.stop_when_idle()
            await client.close()
        return f"{span.get_span_context().trace_id:032x}"


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the hives scenarios under AutoGen's own tracing on ``provider``; run name -> trace
    id. autogen-core's GenAI spans go through the global tracer provider: a relay (set once, for
    good) passes them to ``provider`` while the play is under way."""
    if not labels:
        return {}
    with global_provider(provider), ModelServer(respond=respond) as server, catch_warnings():
        # the fake server's dated model name is not in autogen-ext's model map: a warning a call
        filterwarnings("ignore", "Resolved model mismatch", UserWarning)
        tracer = provider.get_tracer("hives-app")
        base = server.base_url("corpus-hives")
        return {lab.run: asyncio.run(run(lab, base, provider, tracer)) for lab in labels}
