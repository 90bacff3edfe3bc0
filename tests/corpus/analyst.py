"""A data-analysis agent on the real OpenAI Agents SDK, traced by OpenInference's openai-agents
instrumentor, against a scripted model on the conformance suite's fake OpenAI-compatible
server (``tests/conformance/fake_openai.py``, on a loopback port). No planscope code.

Sealed-3 split only (see README.md). The task: report the year-over-year change in weekly
active users of one product, region and month, and publish it to a wiki space. The agent is
written as an Agents SDK user would write one:

* one SDK ``trace`` per report; a ``planner`` agent whose output type is a plan object
  (``{"objective", "steps": [{"id", "goal", "tool", "args"}]}``; an argument ``"{step}"``
  stands for an earlier step's result), built from the request and the team's notes;
* an ``executor`` agent run per step attempt, with the five tools, prompted ``Step {id}:
  {goal}`` and the call to make; an output guardrail trips when the model gives up (the SDK
  marks that agent span failed); the app re-runs a step the model gave up on "(retry later)",
  and asks the planner again, for the steps not done yet, when it gave up with "(replan)";
* an ``auditor`` agent whose output guardrail compares the published figure with the
  warehouse's audited one; then a ``watcher`` agent that checks the page until it is indexed.

The model (:func:`respond`) is a pure function of the request: the planner copies the
request's facts into the plan, trusting the team's notes over them (the scenario's wrong value
comes from a stale note); the executor calls the tool it is told to, calls it again with a new
timeout after a transient error (giving up after :data:`MAX_TOOL_FAILURES`), follows
``next_page`` tokens, and polls a running query job (giving up after :data:`MAX_POLLS`
unchanged states). The scenario (``_labels.py``) decides what the world does. This source
records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents import (
    Agent,
    AgentOutputSchema,
    GuardrailFunctionOutput,
    OpenAIChatCompletionsModel,
    OutputGuardrailTripwireTriggered,
    RunContextWrapper,
    Runner,
    Tool,
    function_tool,
    output_guardrail,
    trace,
)
from openai import AsyncOpenAI
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

PRODUCT, REGION, MONTH, BASELINE, SPACE = "Atlas", "EU", "2026-10", "2025-10", "ANALYTICS"
DATASET = "atlas_wau_daily"
REGIONS = ("EU", "NA", "APAC")
MAX_TOOL_FAILURES = 8
"""Failed calls of one tool in an executor run before the model gives up."""
MAX_POLLS = 12
"""Unchanged job states the model polls before it gives up."""
MAX_STEP_ATTEMPTS = 8
MAX_PLAN_VERSIONS = 4
PLANNER = "You are the planner of a data analyst. Answer the plan as JSON."
EXECUTOR = "You are the executor of a data analyst. Do the step with your tools."
AUDITOR = "You are the auditor. Restate the figure the report publishes."
WATCHER = "You are the watcher. Check the published page with page_status until it is indexed."


# --- the scripted model ----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the request's facts, the team's notes trusted over them."""
    fields = dict(re.findall(r"^(\w[\w ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(fields["Facts"]) | json.loads(fields.get("Team notes", "{}"))
    done = set(json.loads(fields.get("Completed", "[]")))
    moved = re.search(r"use space ([A-Z0-9-]+)", fields.get("Failure", ""))
    if moved:
        facts["space"] = moved.group(1)
    product, region, month = facts["product"], facts["region"], facts["month"]
    baseline = facts.get("baseline") or f"{int(month[:4]) - 1}{month[4:]}"
    query = {"dataset": "{locate_source}", "metric": "wau", "region": region}
    steps = [
        ("locate_source", f"Find the dataset of {product}'s weekly active users", "search_catalog",
         {"query": f"weekly active users {product} by region"}),
        ("pull_current", f"Weekly active users in {region}, {month}", "run_query",
         query | {"month": month}),
        ("pull_baseline", f"Weekly active users in {region}, {baseline}", "run_query",
         query | {"month": baseline}),
        ("compute_change", "Year-over-year change in percent", "calculate",
         {"expression": "({pull_current} - {pull_baseline}) / {pull_baseline} * 100"}),
        ("publish_report", f"Publish the report to {facts['space']}", "publish_page",
         {"space": facts["space"], "title": f"{product} WAU {region} {month}",
          "body": f"{product} WAU {region} {month}: {{pull_current}} vs {{pull_baseline}} "
                  f"in {baseline} ({{compute_change}}% YoY)"}),
    ]  # fmt: skip
    return {
        "objective": fields.get("Objective", ""),
        "steps": [
            {"id": i, "goal": g, "tool": t, "args": a} for i, g, t, a in steps if i not in done
        ],
    }


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _executor(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The executor's next turn (see the module docstring)."""
    prompt = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    found = re.search(r"Call (\w+) with (\{.*\})", prompt, re.DOTALL)
    if not found:
        return _say("giving up: no call to make")
    tool, args = found.group(1), json.loads(found.group(2))
    results = [_text(m.get("content")) for m in messages if m.get("role") == "tool"]
    turn = len(messages)
    if not results:
        return _call(tool, args, turn)
    last = results[-1]
    if last.startswith("error:"):
        for kind in ("retry later", "replan", "permanent"):
            if f"({kind})" in last:
                return _say(f"giving up ({kind}): {last}")
        failed = sum(r.startswith("error:") for r in results)
        if failed >= MAX_TOOL_FAILURES:
            return _say(f"giving up: {tool} failed {failed} times")
        return _call(tool, args | {"timeout_s": 30 * (failed + 1)}, turn)
    result = json.loads(last)
    if result.get("next_page"):
        return _call(tool, args | {"page": result["next_page"]}, turn)
    if result.get("state") == "RUNNING":
        polls = sum('"RUNNING"' in r for r in results)
        if polls > MAX_POLLS:
            return _say(f"giving up: job {result['job_id']} still RUNNING after {MAX_POLLS} checks")
        return _call("job_status", {"job_id": result["job_id"]}, turn)
    if result.get("state") == "PENDING_INDEX":
        return _call("page_status", {"url": result["url"]}, turn)
    return _say("done: " + last)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": EXECUTOR},
    ...     {"role": "user", "content": 'Step s: x\\nCall calculate with {"expression": "1"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    'calculate'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = _text(messages[0].get("content")) if messages else ""
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if system.startswith(PLANNER):
        message = _say(json.dumps(_plan(user)))
    elif system.startswith(AUDITOR):
        figure = re.search(r"\(([-0-9.]+)% YoY\)", user)
        message = _say(f"audited figure: {figure.group(1) if figure else '?'}% YoY")
    else:
        message = _executor(messages)
    return completion(body, message)


# --- the world ----------------------------------------------------------------------------
class Failed(RuntimeError):
    """A tool error (its text ends with what kind of error it is, see ``_labels.py``)."""


@dataclass
class World:
    """The warehouse, the catalog and the wiki of one run, and the scenario's faults."""

    label: Label
    step: str = ""
    errors: list[str] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=dict)
    published: dict[str, str] = field(default_factory=dict)
    queries: dict[str, tuple[str, str]] = field(default_factory=dict)
    trace_id: str = ""
    """The OTel trace the tools ran in (read off the current span: the run's name for it)."""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        rng = random.Random(f"analyst-world/{self.label.seed}")
        self.base = rng.randint(20_000, 90_000)
        self.growth = rng.choice([-0.12, -0.04, 0.03, 0.08, 0.15, 0.27])

    @property
    def scenario(self) -> str:
        return self.label.scenario

    def value(self, region: str, month: str) -> int:
        """Weekly active users (0 for a region the warehouse does not have)."""
        if region not in REGIONS:
            return 0
        year, mon = int(month[:4]), int(month[5:7])
        weight = {"EU": 1.0, "NA": 1.4, "APAC": 0.7}[region]
        yearly = (1 + self.growth) ** (year - 2025)
        return round(self.base * weight * yearly * (1 + 0.01 * (mon - 10)))

    def truth(self) -> float:
        """The audited year-over-year change, in percent."""
        now, then = self.value(REGION, MONTH), self.value(REGION, BASELINE)
        return round((now - then) / then * 100, 2)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next error when this call is one it targets."""
        if not self.trace_id:
            self.trace_id = format(
                otel_trace.get_current_span().get_span_context().trace_id, "032x"
            )
        target = self.label.params.get("step", "publish_report")
        if self.errors and self.step == target and not tool.endswith("_status"):
            raise Failed("error: " + self.errors.pop(0))

    def tools(self) -> dict[str, Callable[..., str]]:
        def search_catalog(query: str, page: str = "", timeout_s: int = 30) -> str:
            """Search the data catalog; results come a page at a time."""
            self.fault("search_catalog")
            pages = int(self.label.params.get("pages", 1))
            at = int(page[1:]) if page else 1
            if at < pages:
                return json.dumps({"matches": [], "next_page": f"p{at + 1}"})
            product = query.removeprefix("weekly active users ").removesuffix(" by region")
            slug = product.lower().replace(" ", "_")
            return json.dumps({"matches": [DATASET if slug == "atlas" else f"{slug}_events"]})

        def run_query(
            dataset: str, metric: str, region: str, month: str, timeout_s: int = 30
        ) -> str:
            """Run a query job on the warehouse."""
            self.fault("run_query")
            if dataset != DATASET:
                raise Failed(f"error: dataset {dataset} has no column 'region' (permanent)")
            job = f"q-{self.label.seed}-{self.step}"
            self.polls[job] = 0
            self.queries[job] = (region, month)
            result = {"state": "DONE", "value": self.value(region, month), "job_id": job}
            if self.step == self.label.params.get("step") and "poll" in self.scenario:
                return json.dumps({"job_id": job, "state": "RUNNING"})
            return json.dumps(result)

        def job_status(job_id: str) -> str:
            """The state of a query job."""
            self.polls[job_id] += 1
            if self.scenario == "loop_poll_stuck" or self.polls[job_id] < int(
                self.label.params.get("polls", 0)
            ):
                return json.dumps({"job_id": job_id, "state": "RUNNING"})
            region, month = self.queries[job_id]
            return json.dumps({"state": "DONE", "value": self.value(region, month)})

        def calculate(expression: str) -> str:
            """Evaluate an arithmetic expression."""
            self.fault("calculate")
            if not re.fullmatch(r"[-0-9.() /*+]+", expression):
                raise Failed(f"error: not an arithmetic expression: {expression} (permanent)")
            try:
                return json.dumps(
                    {"value": round(eval(expression), 2)}
                )  # the pattern above: digits and + - * / ( ) only
            except ZeroDivisionError:
                raise Failed(f"error: division by zero in {expression} (permanent)") from None

        def publish_page(space: str, title: str, body: str, timeout_s: int = 30) -> str:
            """Publish a page to a wiki space."""
            self.fault("publish_page")
            moved = self.label.params.get("moved_to")
            if moved and space == SPACE:
                raise Failed(f"error: space {SPACE} is archived, use space {moved} (replan)")
            if space not in (SPACE, moved):
                raise Failed(f"error: analyst-bot may not write to space {space} (permanent)")
            url = f"https://wiki.example/{space}/{title.replace(' ', '-')}"
            self.published[url] = body
            return json.dumps({"url": url})

        def page_status(url: str) -> str:
            """Whether a published page is live and indexed."""
            self.polls[url] = self.polls.get(url, 0) + 1
            removed = self.scenario == "external_removed"
            if self.polls[url] <= (int(self.label.params["polls"]) if removed else 1):
                return json.dumps({"url": url, "state": "PENDING_INDEX"})
            if removed:
                raise Failed(f"error: {url} was removed by the wiki's retention bot (permanent)")
            return json.dumps({"url": url, "state": "INDEXED"})

        return {
            f.__name__: f
            for f in (search_catalog, run_query, job_status, calculate, publish_page, page_status)
        }


# --- the agent -------------------------------------------------------------------------------
class Step(BaseModel):
    id: str
    goal: str
    tool: str
    args: dict[str, Any]


class Plan(BaseModel):
    objective: str
    steps: list[Step]


def _tool_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model reads when a tool raised: the tool's own error text."""
    return str(error) if str(error).startswith("error:") else f"error: {error}"


@output_guardrail
def step_completed(
    ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any
) -> GuardrailFunctionOutput:
    """Trips when the executor gave up on its step."""
    gave_up = str(output).startswith("giving up")
    return GuardrailFunctionOutput(output_info=str(output), tripwire_triggered=gave_up)


class Analyst:
    """One report, from the request to the watched page."""

    def __init__(self, label: Label, model: OpenAIChatCompletionsModel) -> None:
        self.label = label
        self.world = World(label)
        tools = self.world.tools()
        fn = {
            name: function_tool(f, failure_error_function=_tool_error) for name, f in tools.items()
        }
        self.planner = Agent(
            name="planner",
            instructions=PLANNER,
            model=model,
            output_type=AgentOutputSchema(Plan, strict_json_schema=False),
        )
        executor_tools: list[Tool] = [fn[n] for n in tools if n != "page_status"]
        self.executor = Agent(
            name="executor",
            instructions=EXECUTOR,
            model=model,
            tools=executor_tools,
            output_guardrails=[step_completed],
        )
        self.auditor = Agent(
            name="auditor",
            instructions=AUDITOR,
            model=model,
            output_guardrails=[output_guardrail(name="matches_audited_figure")(self._audit)],
        )
        self.watcher = Agent(
            name="watcher",
            instructions=WATCHER,
            model=model,
            tools=[fn["page_status"]],
            output_guardrails=[step_completed],
        )

    def _audit(
        self, ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        figure = re.search(r"([-0-9.]+)% YoY", str(output))
        ok = bool(figure) and abs(float(figure.group(1)) - self.world.truth()) < 0.01  # type: ignore[union-attr]
        return GuardrailFunctionOutput(output_info=self.world.truth(), tripwire_triggered=not ok)

    def brief(self, done: dict[str, str], failure: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("product", "region", "baseline", "space")
            if k in self.label.params
        }
        request = {"product": PRODUCT, "region": REGION, "month": MONTH, "space": SPACE}
        lines = [
            f"Objective: Report the year-over-year change in weekly active users of {PRODUCT} "
            f"in region {REGION} for {MONTH}; publish it to the {SPACE} wiki space.",
            f"Facts: {json.dumps(request)}",
        ]
        if notes:
            lines.append(f"Team notes: {json.dumps(notes)}")
        if done:
            lines.append(f"Completed: {json.dumps(sorted(done))}")
        if failure:
            lines.append(f"Failure: {failure}")
        return "\n".join(lines)

    async def attempt(self, step: Step, done: dict[str, str]) -> tuple[str, str]:
        """One executor run of a step: ("ok", result) or (kind of give-up, reason)."""
        args = json.loads(
            re.sub(r"\{(\w+)\}", lambda m: done.get(m.group(1), m.group(0)), json.dumps(step.args))
        )
        self.world.step = step.id
        prompt = f"Step {step.id}: {step.goal}\nCall {step.tool} with {json.dumps(args)}"
        try:
            result = await Runner.run(self.executor, prompt, max_turns=MAX_POLLS + 10)
        except OutputGuardrailTripwireTriggered as exc:
            said = str(exc.guardrail_result.output.output_info)
            kind = re.match(r"giving up(?: \(([a-z ]+)\))?", said)
            return (kind.group(1) if kind and kind.group(1) else "permanent"), said
        out = json.loads(str(result.final_output).removeprefix("done: "))
        value = out.get("value", out.get("url", (out.get("matches") or [""])[0]))
        return "ok", str(value)

    async def run(self) -> str:
        with trace("wau-report", group_id=self.label.run):
            done: dict[str, str] = {}
            failure = ""
            for version in range(1, MAX_PLAN_VERSIONS + 1):
                planned = await Runner.run(self.planner, self.brief(done, failure))
                plan: Plan = planned.final_output
                failure = ""
                for step in plan.steps:
                    for _ in range(MAX_STEP_ATTEMPTS):
                        kind, result = await self.attempt(step, done)
                        if kind != "retry later":
                            break
                    if kind == "ok":
                        done[step.id] = result
                        continue
                    if kind == "replan" and version < MAX_PLAN_VERSIONS:
                        failure = f"{step.id}: {result}"
                        break
                    return self.world.trace_id  # the step failed for good: the report is not made
                if not failure:
                    break
            if failure:
                return self.world.trace_id
            try:
                body = self.world.published[done["publish_report"]]
                await Runner.run(self.auditor, f"Audit this report: {body}")
                watch = f"Check {done['publish_report']}\nCall page_status with "
                await Runner.run(self.watcher, watch + json.dumps({"url": done["publish_report"]}))
            except OutputGuardrailTripwireTriggered:
                pass  # recorded on the agent's span by the SDK
        return self.world.trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the analyst's scenarios against the scripted model; run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            client = AsyncOpenAI(base_url=server.base_url("corpus-analyst"), api_key="test")
            model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)

            async def all_runs() -> None:
                for label in labels:
                    out[label.run] = await Analyst(label, model).run()

            asyncio.run(all_runs())
    finally:
        instrumentor.uninstrument()
    return out
