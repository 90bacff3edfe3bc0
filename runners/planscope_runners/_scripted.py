"""A deterministic, offline chat model that plans and acts from the task's specification.

It answers the same prompts a real model gets, in the same formats (JSON plans, tool calls), and
reports token counts computed from the prompt and answer text (~4 characters a token, plus a
seeded "reasoning" overhead), so token and cost comparisons between variants mean something.
Planner-side faults (misread objective, starved context, stale values, malformed
scripts, re-split goals) are applied here, from the faults the runtime passes in the hints.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._apps import Application, application_of
from ._env import IRREVERSIBLE, StepSpec, Task, Tool, bind_facts, render_text, resolve_args
from ._faults import Fault
from ._ir import dump_steps
from ._models import PRICES, ChatRequest, ChatResponse, Price, ToolCall, Usage, render_messages

EXECUTOR_CAPACITY = 4
"""Reference steps the scripted executor takes on in one attempt: a sub-task of more actions is
too complex for it and it says so (ADaPT then decomposes); a smaller one it works through, one
tool call per turn, as long as the runtime gives it turns."""


class ScriptedModel:
    """Deterministic model for planners and executors; needs no network.

    ``seed`` varies the reported token overhead; ``latency`` + ``seconds_per_token`` x output
    tokens simulate generation time (0 by default).

    >>> model = ScriptedModel("scripted-planner", seed=7)
    >>> model.provider
    'scripted'
    """

    provider = "scripted"

    def __init__(
        self,
        name: str = "scripted-planner",
        *,
        seed: int = 0,
        latency: float = 0.0,
        seconds_per_token: float = 0.0,
        faults: Sequence[Fault] | None = None,
        price: Price | None = None,
    ) -> None:
        self.name = name
        self.seed = seed
        self.latency = latency
        self.seconds_per_token = seconds_per_token
        self.faults = tuple(faults) if faults is not None else None
        self.price = price if price is not None else PRICES.get(name)

    # --- protocol ---------------------------------------------------------------------------
    def complete(self, request: ChatRequest) -> ChatResponse:
        hints = request.hints
        handlers = {
            "plan": self._plan,
            "replan": self._plan,
            "replan_scoped": self._plan_scoped,
            "decompose": self._decompose,
            "act": self._act,
            "assess": self._assess,
            "react": self._react,
            "host_plan": self._host_plan,
            "host_replan": self._host_plan,
        }
        handler = handlers.get(request.purpose)
        content: str
        calls: tuple[ToolCall, ...]
        if handler is None or "task" not in hints:
            content, calls = "I can only follow runtime requests that carry a task.", ()
        else:
            content, calls = handler(hints)
        prompt = render_messages(request.messages) + json.dumps(
            [dict(t.parameters, name=t.name) for t in request.tools], default=str
        )
        answer = (content or "") + "".join(
            json.dumps({"name": c.name, "arguments": dict(c.arguments)}, default=str) for c in calls
        )
        digest = hashlib.sha256(f"{self.seed}\n{prompt}\n{answer}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        usage = Usage(
            input_tokens=math.ceil(len(prompt) / 4),
            output_tokens=math.ceil(len(answer) / 4) + rng.randint(4, 24),
        )
        delay = self.latency + self.seconds_per_token * usage.output_tokens
        if delay > 0:
            time.sleep(delay)
        return ChatResponse(
            content=content,
            tool_calls=tuple(calls),
            usage=usage,
            model=self.name,
            finish_reason="tool_calls" if calls else "stop",
            cost_usd=self.price.cost(usage) if self.price else None,
        )

    # --- helpers ----------------------------------------------------------------------------
    def _faults(self, hints: Mapping[str, Any]) -> dict[str, Fault]:
        faults = self.faults if self.faults is not None else hints.get("faults", ())
        return {f.knob: f for f in faults}

    @staticmethod
    def _tools(hints: Mapping[str, Any]) -> Mapping[str, Tool]:
        tools: Mapping[str, Tool] = hints.get("tools", {})
        return tools

    def _believed_facts(self, task: Task, faults: Mapping[str, Fault]) -> dict[str, Any]:
        facts = dict(task.facts)
        misread = faults.get("misread_objective")
        if misread is not None:
            facts[misread.params["fact"]] = misread.params["wrong"]
        return facts

    def _step_dict(
        self,
        task: Task,
        step_id: str,
        hints: Mapping[str, Any],
        faults: Mapping[str, Fault],
        facts: Mapping[str, Any],
    ) -> dict[str, Any]:
        spec = task.step(step_id)
        tools = self._tools(hints)
        failures = " ".join(hints.get("failures", ()))
        step_facts = dict(facts)
        stale = faults.get("needs_replan")
        if (
            stale is not None
            and stale.target == step_id
            and repr(stale.params["wrong"]) not in (failures)
        ):
            step_facts[stale.params["fact"]] = stale.params["wrong"]
        inputs = {f: step_facts.get(f) for f in spec.fact_refs}
        starved = faults.get("context_starved")
        if starved is not None and starved.target == step_id:
            inputs.pop(starved.params["fact"], None)
        tool = tools.get(spec.tool)
        bound = bind_facts(spec.args, step_facts)
        writes = [tool.resource(bound)] if tool is not None and tool.effect != "read" else []
        step: dict[str, Any] = {
            "id": spec.id,
            "description": render_text(spec.description, step_facts),
            "tool": spec.tool,
            "executor": spec.executor,
            "depends_on": list(spec.depends_on),
            "requires": list(spec.requires),
            "produces": [spec.produces] if spec.produces else [],
            "irreversible": tool is not None and tool.effect == IRREVERSIBLE,
            "inputs": inputs,
            "writes": writes,
        }
        if hints.get("script"):
            step["args"] = bound
            malformed = faults.get("malformed_script")
            if malformed is not None and malformed.target == step_id and hints.get("attempt") == 1:
                step["tool"] = f"{spec.tool}_v2"
                step["args"] = {**bound, "note": "{$draft_notes}"}
        return step

    # --- planner ----------------------------------------------------------------------------
    def _plan(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        task: Task = hints["task"]
        faults = self._faults(hints)
        facts = self._believed_facts(task, faults)
        steps = [self._step_dict(task, s.id, hints, faults, facts) for s in task.steps]
        extra = {"version": 1} if hints.get("script") else {}
        return dump_steps(steps, **extra), ()

    def _plan_scoped(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        task: Task = hints["task"]
        faults = self._faults(hints)
        facts = self._believed_facts(task, faults)
        scope = str(hints["scope"])
        base = scope if scope in {s.id for s in task.steps} else scope.split("~")[0]
        return dump_steps([self._step_dict(task, base, hints, faults, facts)]), ()

    def _decompose(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        task: Task = hints["task"]
        faults = self._faults(hints)
        facts = self._believed_facts(task, faults)
        node = str(hints["node"])
        covers: list[str] = list(hints.get("covers") or [])
        order = [s.id for s in task.order() if s.id in covers]
        if "adapt_same_goal" in faults:
            child = {
                "id": f"{node}.1",
                "description": hints.get("description", ""),
                "covers": order,
            }
            return json.dumps({"logic": "and", "steps": [child]}), ()
        if len(order) == 1:  # a leaf failed: propose it again with what the failure taught
            step = self._step_dict(task, order[0], hints, faults, facts)
            step["covers"] = order
            return json.dumps({"logic": "or", "steps": [step]}, default=str), ()
        half = math.ceil(len(order) / 2)
        children: list[dict[str, Any]] = []
        for i, part in enumerate((order[:half], order[half:]), start=1):
            if len(part) == 1:
                child = self._step_dict(task, part[0], hints, faults, facts)
            else:
                child = {
                    "id": f"{node}.{i}",
                    "description": "; ".join(
                        render_text(task.step(s).description, facts) for s in part
                    ),
                }
            child["covers"] = part
            child["depends_on"] = [children[-1]["id"]] if children else []
            children.append(child)
        return json.dumps({"logic": "and", "steps": children}, default=str), ()

    def _host_plan(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        """The host agent: stretches of consecutive reference steps inside one application
        become one sub-task routed to that application's agent (the misroute fault sends the
        target's sub-task to another one, every time)."""
        task: Task = hints["task"]
        apps: Sequence[Application] = hints.get("apps", ())
        tools = self._tools(hints)
        faults = self._faults(hints)
        facts = self._believed_facts(task, faults)
        misroute = faults.get("misroute")
        groups: list[tuple[Application | None, list[StepSpec]]] = []
        for spec in task.order():
            app = application_of(apps, spec.tool)
            if groups and groups[-1][0] == app:
                groups[-1][1].append(spec)
            else:
                groups.append((app, [spec]))
        counts: dict[str, int] = {}
        owner: dict[str, str] = {}
        steps: list[dict[str, Any]] = []
        for app, members in groups:
            name = app.name if app is not None else "unrouted"
            counts[name] = counts.get(name, 0) + 1
            sub_id = f"{name}-{counts[name]}"
            ids = [m.id for m in members]
            owner.update(dict.fromkeys(ids, sub_id))
            inside = {m.produces for m in members if m.produces}
            needs = list(dict.fromkeys(m.tool for m in members))
            executor = app.agent if app is not None else name
            if misroute is not None and misroute.target in ids:
                executor = f"{misroute.params['wrong_app']}-agent"
            writes = []
            for m in members:
                tool = tools.get(m.tool)
                if tool is not None and tool.effect != "read":
                    writes.append(tool.resource(bind_facts(m.args, facts)))
            steps.append(
                {
                    "id": sub_id,
                    "description": "; ".join(render_text(m.description, facts) for m in members),
                    "tool": needs[0] if len(needs) == 1 else None,
                    "tools": needs,
                    "executor": executor,
                    "depends_on": list(
                        dict.fromkeys(
                            owner[d] for m in members for d in m.depends_on if owner[d] != sub_id
                        )
                    ),
                    "requires": list(
                        dict.fromkeys(k for m in members for k in m.requires if k not in inside)
                    ),
                    "produces": sorted(inside),
                    "irreversible": any(
                        (t := tools.get(m.tool)) is not None and t.effect == IRREVERSIBLE
                        for m in members
                    ),
                    "inputs": {f: facts.get(f) for m in members for f in m.fact_refs},
                    "writes": writes,
                    "covers": ids,
                }
            )
        return dump_steps(steps), ()

    # --- executor ---------------------------------------------------------------------------
    def _act(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        if hints.get("multi_action"):
            return self._act_multi(hints)
        task: Task = hints["task"]
        step_id = str(hints.get("step_id"))
        known = {s.id for s in task.steps}
        covers = [c for c in hints.get("covers") or [step_id] if c in known]
        if not covers:
            return f"I do not know how to carry out step {step_id!r}.", ()
        if len(covers) > EXECUTOR_CAPACITY:
            return (
                f"I cannot complete this in one step: it needs {len(covers)} separate actions "
                f"({', '.join(covers)}).",
                (),
            )
        done: Mapping[str, Any] = hints.get("done_calls") or {}
        order = [s.id for s in task.order() if s.id in covers]
        pending = [c for c in order if _call_id(c) not in done]
        if not pending:
            return "DONE: every action of this sub-task succeeded.", ()
        spec = task.step(pending[0])
        context = dict(hints.get("context") or {})
        if len(covers) > 1:  # a composite sub-task: its description states the facts
            context = {**task.facts, **context}
            for ref, result in done.items():
                produced = task.step(ref[len("call_") :]).produces if ref[5:] in known else None
                if produced:
                    context.setdefault(produced, result)
        for fact in spec.fact_refs:
            if fact not in context:  # not handed over: the executor guesses (and misreads)
                context[fact] = task.misread.get(fact)
        args = resolve_args(spec.args, context)
        return f"Calling {spec.tool} for step {spec.id}.", (
            ToolCall(spec.tool, args, id=_call_id(spec.id)),
        )

    def _act_multi(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        """An application agent: every pending action of its sub-task whose inputs are known
        now, in one answer (a multi-action step); an action outside its tools is refused."""
        task: Task = hints["task"]
        known = {s.id for s in task.steps}
        covers = [c for c in hints.get("covers") or [hints.get("step_id")] if c in known]
        if not covers:
            return f"I do not know how to carry out sub-task {hints.get('step_id')!r}.", ()
        own = self._tools(hints)
        done: Mapping[str, Any] = hints.get("done_calls") or {}
        context = dict(hints.get("context") or {})
        for ref, result in done.items():
            produced = task.step(ref[len("call_") :]).produces if ref[5:] in known else None
            if produced:
                context.setdefault(produced, result)
        batch: list[ToolCall] = []
        for spec in (s for s in task.order() if s.id in covers):
            if _call_id(spec.id) in done:
                continue
            if spec.tool not in own:
                if batch:
                    break
                return (
                    f"I cannot carry out {spec.id}: {spec.tool} is not one of my tools "
                    f"({', '.join(own)}).",
                    (),
                )
            if any(k not in context for k in spec.requires if k not in spec.fact_refs):
                break  # needs a result of this batch: next turn
            for fact in spec.fact_refs:
                if fact not in context:  # not handed over: the agent guesses
                    context[fact] = task.misread.get(fact)
            batch.append(
                ToolCall(
                    spec.tool,
                    resolve_args(spec.args, context),
                    id=_call_id(spec.id),
                    produces=spec.produces or "",
                )
            )
            if spec.produces:
                context.pop(spec.produces, None)  # not known until the call returns
        if not batch:
            return "DONE: every action of this sub-task succeeded.", ()
        names = ", ".join(c.name for c in batch)
        return f"Calling {names} for sub-task {hints.get('step_id')}.", tuple(batch)

    def _assess(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        outcomes: Sequence[tuple[bool, str]] = hints.get("outcomes", ())
        # "DONE" without an action: an earlier attempt already finished this sub-task
        ok = bool(outcomes) and all(o or t.startswith("no action: DONE") for o, t in outcomes)
        reason = "all actions succeeded" if ok else "an action failed or none was taken"
        return json.dumps({"success": ok, "reason": reason}), ()

    def _react(self, hints: Mapping[str, Any]) -> tuple[str, tuple[ToolCall, ...]]:
        task: Task = hints["task"]
        history: Sequence[Mapping[str, Any]] = hints.get("history", ())
        order = task.order()
        context: dict[str, Any] = dict(task.facts)
        done = 0
        for entry in history:
            if entry.get("ok") and done < len(order):
                produced = order[done].produces
                if produced:
                    context[produced] = entry.get("result")
                done += 1
        if done >= len(order):
            return "FINISH: the objective is achieved.", ()
        spec = order[done]
        args = resolve_args(spec.args, context)
        thought = f"Thought: next I need to {render_text(spec.description, task.facts)}."
        return thought, (ToolCall(spec.tool, args, id=f"call_{len(history) + 1}"),)


def _call_id(reference_step: str) -> str:
    return f"call_{reference_step}"
