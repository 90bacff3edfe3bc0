"""A release (deployment) agent with a DAG planner whose steps run in parallel, traced the way
pydantic-ai's own instrumentation writes spans (``InstrumentationSettings(version=3)``).

Sealed-2 split only (see README.md): written before the detectors and the plan mapping were
changed for the sealed-2 round, and scored once. No planscope code and no ``planscope.*``
attribute. The spans are those pydantic-ai and logfire write for a programmatic hand-off app:

* the root is the application's logfire span ``release {service}`` (span name = message
  template, ``logfire.msg`` the formatted message); a failed release ends it with ERROR and an
  exception event;
* each agent run is ``invoke_agent {name}`` (``gen_ai.agent.name``, ``agent_name``,
  ``model_name``, ``final_result``); its model requests are ``chat {model}`` spans with
  ``gen_ai.input.messages`` / ``gen_ai.output.messages`` in the parts format (a tool call is a
  ``tool_call`` part, an answer a ``text`` part); its tool calls ``execute_tool {tool}`` with
  ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``; a tool that raises
  ``ModelRetry`` ends its span with ERROR and the model calls it again;
* the planner agent answers (prompted JSON output, text) an object ``{"release", "strategy",
  "tasks": [...], "rollback_if": [...]}``: task objects with ``id``, ``action``, ``tool``,
  ``needs`` (the DAG's edges) and ``args``. Tasks whose needs are met run **in parallel**
  (threads), one ``invoke_agent executor`` run per attempt, re-run by the app on a transient
  error; a refused roll-out with a hint, or a roll-out that keeps failing, makes the app ask the
  planner again (a new plan) for the tasks not done yet;
* the executor's final answer is a JSON report (for the smoke test, a list of named checks);
  after the tasks the app verifies the release in a ``verify release`` span, and (one scenario)
  a ``monitor`` agent watches error rates after the release succeeded.

No context data is recorded by this source, so context starvation is out of scope.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from ._labels import Label

SERVICES = ("payments-api", "ledger-svc", "checkout-web", "notify-worker")
CLUSTERS = ("prod-eu-1", "prod-eu-2", "prod-us-1", "prod-ap-1")
PLANNER_MODEL = "gpt-4o"
EXECUTOR_MODEL = "gpt-4o-mini"


class Transient(Exception):
    """An infrastructure hiccup; the app re-runs the task."""


class ModelRetry(Exception):
    """What a pydantic-ai tool raises to make the model call it again (with new arguments)."""


class UnexpectedModelBehavior(Exception):
    """pydantic-ai's error when a tool exceeded its retries."""


class Refused(Exception):
    """The counterpart refuses; retrying the same request does not help."""


class Blocked(Refused):
    """A refusal that says what to change (the app re-plans with it)."""


class ReleaseFailed(Exception):
    """The release did not happen, or is not what was asked."""


@contextmanager
def _span(tracer: Tracer, name: str, attributes: dict[str, Any]) -> Iterator[Span]:
    """A span as logfire ends it: on an exception, an exception event and ERROR
    ``{type}: {message}``, then the exception propagates."""
    with tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except Exception as e:
            span.record_exception(e)
            span.set_status(Status(StatusCode.ERROR, f"{type(e).__name__}: {e}"))
            raise


class Release:
    """The app: plan with the planner agent, run the DAG with executor agents, verify."""

    def __init__(self, tracer: Tracer, label: Label) -> None:
        self.tracer = tracer
        self.label = label
        self.p = label.params
        rng = random.Random(label.seed)
        self.service = rng.choice(SERVICES)
        self.version = f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(1, 9)}"
        self.cluster = rng.choice(CLUSTERS)
        self.replicas = rng.choice([3, 4, 6, 8])
        self.window = dt.datetime(2026, 3, 1, 2, 0) + dt.timedelta(days=rng.randint(3, 25))
        self.revision = f"{rng.getrandbits(48):012x}"
        self.rng = random.Random(label.seed + 23)
        self.lock = threading.Lock()
        self.errors = list(self.p.get("errors", ()))
        self.failures = 0
        self.deployed: dict[str, Any] = {}

    # -- spans as pydantic-ai writes them ----------------------------------------------------
    def _id(self) -> str:
        with self.lock:
            return f"call_{self.rng.getrandbits(64):016x}"

    def chat(self, model: str, prompt: str, parts: list[dict[str, Any]]) -> None:
        """One model request; ``parts`` is what the model answered."""
        finish = "tool_call" if parts and parts[0]["type"] == "tool_call" else "stop"
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": model,
            "gen_ai.response.model": f"{model}-2024-08-06",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": parts, "finish_reason": finish}]
            ),
            "gen_ai.usage.input_tokens": 80 + len(prompt) // 4,
            "gen_ai.usage.output_tokens": 15 + len(json.dumps(parts)) // 4,
            "logfire.msg": f"chat {model}",
            "logfire.span_type": "span",
        }
        with _span(self.tracer, f"chat {model}", attrs):
            pass

    @contextmanager
    def agent(self, name: str, model: str, prompt: str) -> Iterator[Span]:
        attrs = {
            "gen_ai.agent.name": name,
            "agent_name": name,
            "model_name": model,
            "gen_ai.operation.name": "invoke_agent",
            "logfire.msg": f"{name} run",
            "logfire.span_type": "span",
        }
        with _span(self.tracer, f"invoke_agent {name}", attrs) as span:
            span.set_attribute("pydantic_ai.prompt", prompt)
            yield span

    def tool(self, name: str, arguments: dict[str, Any], body: Callable[[], Any]) -> Any:
        """The model calls ``name``; the tool runs ``body`` in an ``execute_tool`` span."""
        call_id = self._id()
        prompt = f"call {name}"
        self.chat(
            EXECUTOR_MODEL,
            prompt,
            [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}],
        )
        attrs = {
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.call.arguments": json.dumps(arguments),
            "logfire.msg": f"running tool: {name}",
            "logfire.span_type": "span",
        }
        with _span(self.tracer, f"execute_tool {name}", attrs) as span:
            out = body()
            span.set_attribute("gen_ai.tool.call.result", json.dumps(out))
            return out

    # -- the world --------------------------------------------------------------------------
    def _fault(self, where: str) -> None:
        """The scenario's transient failures at tool ``where``."""
        if self.p.get("at") != where:
            return
        with self.lock:
            if self.label.kind == "runaway_loop":
                self.failures += 1
                raise Transient(self.errors[(self.failures - 1) % len(self.errors)])
            if self.errors:
                raise Transient(self.errors.pop(0))

    # -- planner ----------------------------------------------------------------------------
    def objective(self) -> str:
        return (
            f"Release {self.service} {self.version} to {self.cluster} with {self.replicas} "
            f"replicas in the change window starting {self.window:%Y-%m-%dT%H:%M}Z"
        )

    def plan(self, version: int, reason: str = "") -> dict[str, Any]:
        sc = self.label.scenario
        service, release, cluster = self.service, self.version, self.cluster
        replicas, window = self.replicas, self.window
        if sc == "wrong_version":
            major, minor, patch = (int(x) for x in release.split("."))
            release = f"{major}.{minor}.{patch - 1}"
        if sc == "wrong_cluster":
            others = [c for c in CLUSTERS if c != cluster]
            cluster = others[int(self.p["index"]) % len(others)]
        if sc == "wrong_replicas":
            replicas = replicas * int(self.p["factor"])
        if sc == "wrong_window":
            window = window + dt.timedelta(days=int(self.p["late_days"]))
        strategy = "rolling" if version == 1 else "canary"
        image = f"registry.internal/{service}:{release}"
        deploy_args: dict[str, Any] = {
            "cluster": cluster,
            "image": image,
            "replicas": replicas,
            "strategy": strategy,
        }
        if strategy == "canary":
            deploy_args["canary_percent"] = 10 * version
        tasks = [
            {
                "id": "book_window",
                "action": "reserve the change window",
                "tool": "reserve_change_window",
                "needs": [],
                "args": {"service": service, "start": f"{window:%Y-%m-%dT%H:%M}Z", "minutes": 60},
            },
            {
                "id": "build",
                "action": "build and push the image",
                "tool": "build_image",
                "needs": [],
                "args": {"service": service, "tag": release},
            },
            {
                "id": "scan",
                "action": "scan the image for vulnerabilities",
                "tool": "scan_image",
                "needs": ["build"],
                "args": {"image": image},
            },
            {
                "id": "migrate",
                "action": "apply the schema migrations",
                "tool": "run_migrations",
                "needs": ["build"],
                "args": {"cluster": cluster, "revision": self.revision},
            },
            {
                "id": "deploy",
                "action": f"roll the image out ({strategy})",
                "tool": "rollout",
                "needs": ["book_window", "scan", "migrate"],
                "args": deploy_args,
            },
            {
                "id": "smoke",
                "action": "smoke-test the new version",
                "tool": "smoke_test",
                "needs": ["deploy"],
                "args": {"cluster": cluster, "service": service, "expect": release},
            },
            {
                "id": "announce",
                "action": "post the changelog",
                "tool": "post_changelog",
                "needs": ["smoke"],
                "args": {"channel": "#releases", "text": f"{service} {release} is live"},
            },
        ]
        answer = {
            "release": f"{service} {release}",
            "strategy": strategy,
            "tasks": tasks,
            "rollback_if": ["error rate above 2%", "p99 latency above 800 ms"],
        }
        prompt = self.objective() + (f"\nRe-plan (attempt {version}): {reason}" if reason else "")
        with self.agent("planner", PLANNER_MODEL, prompt) as span:
            self.chat(PLANNER_MODEL, prompt, [{"type": "text", "content": json.dumps(answer)}])
            span.set_attribute("final_result", json.dumps(answer))
        return answer

    # -- executors --------------------------------------------------------------------------
    def work(self, task: dict[str, Any], attempt: int) -> dict[str, Any]:
        """One executor agent run for one task."""
        a = task["args"]
        prompt = f"Task {task['id']}: {task['action']}. Arguments: {json.dumps(a)}"
        with self.agent("executor", EXECUTOR_MODEL, prompt) as span:
            report = getattr(self, "_" + task["id"])(a, attempt)
            text = json.dumps({"task": task["id"], "ok": True} | report)
            self.chat(EXECUTOR_MODEL, prompt, [{"type": "text", "content": text}])
            span.set_attribute("final_result", text)
            return report

    def _book_window(self, a: dict[str, Any], attempt: int) -> dict[str, Any]:
        change = self.tool(
            "reserve_change_window",
            a,
            lambda: {"change": f"CHG-{self.rng.randint(10000, 99999)}", "start": a["start"]},
        )
        self.deployed["window"] = change["start"]
        self.deployed["change"] = change["change"]
        return {"summary": f"change {change['change']} booked"}

    def _build(self, a: dict[str, Any], attempt: int) -> dict[str, Any]:
        def body() -> Any:
            self._fault("build_image")
            return {"image": f"registry.internal/{a['service']}:{a['tag']}", "layers": 14}

        out = self.tool("build_image", a, body)
        return {"summary": f"pushed {out['image']}"}

    def _scan(self, a: dict[str, Any], attempt: int) -> dict[str, Any]:
        def body() -> Any:
            self._fault("scan_image")
            return {
                "image": a["image"],
                "findings": [
                    {"id": f"CVE-2025-{self.rng.randint(1000, 9999)}", "severity": "low"}
                    for _ in range(2)
                ],
            }

        out = self.tool("scan_image", a, body)
        return {"summary": f"{len(out['findings'])} low findings"}

    def _migrate(self, a: dict[str, Any], attempt: int) -> dict[str, Any]:
        def body() -> Any:
            self._fault("run_migrations")
            return {"cluster": a["cluster"], "applied": a["revision"], "statements": 7}

        self.tool("run_migrations", a, body)
        return {"summary": f"schema at {a['revision']}"}

    def _deploy(self, a: dict[str, Any], attempt: int) -> dict[str, Any]:
        sc = self.label.scenario
        if a["cluster"] != self.cluster:

            def missing() -> Any:
                raise Refused(f"namespace {self.service} not found on cluster {a['cluster']}")

            self.tool("rollout", a, missing)
        if sc == "legit_replan" and a["strategy"] == "rolling":

            def blocked() -> Any:
                raise Blocked(f"{a['cluster']} requires a canary roll-out for {self.service}")

            self.tool("rollout", a, blocked)
        if sc == "loop_across_replans":

            def flaky() -> Any:
                with self.lock:
                    self.failures += 1
                    raise Transient(self.errors[(self.failures - 1) % len(self.errors)])

            self.tool("rollout", a, flaky)
        in_tool = self.p.get("at") == "rollout"
        retries = len(self.errors) if in_tool and self.label.kind == "runaway_loop" else 3
        surge = 25
        for n in range(1, retries + 1):
            args = a | {"max_surge": f"{surge}%"}

            def roll(n: int = n) -> Any:
                if in_tool:
                    with self.lock:
                        if self.label.kind == "runaway_loop":
                            raise ModelRetry(self.errors[(n - 1) % len(self.errors)])
                        if self.errors:
                            raise ModelRetry(self.errors.pop(0))
                return {"rollout": f"ro-{self.rng.getrandbits(24):06x}", "replicas": a["replicas"]}

            try:
                out = self.tool("rollout", args, roll)
                break
            except ModelRetry:
                if n >= retries:
                    raise UnexpectedModelBehavior(
                        f"Tool 'rollout' exceeded max retries count of {retries}"
                    ) from None
                surge = max(5, surge // 2)  # the model tries a gentler roll-out
        polls = int(self.p.get("polls", 1)) if sc == "polling_ends" else 1
        for i in range(1, polls + 1):
            done = i == polls
            self.tool(
                "rollout_status",
                {"rollout": out["rollout"]},
                partial(
                    dict,
                    state="complete" if done else "progressing",
                    updated=a["replicas"] if done else min(i, a["replicas"]),
                ),
            )
        self.deployed.update(image=a["image"], replicas=a["replicas"], cluster=a["cluster"])
        return {"summary": f"{out['rollout']} complete"}

    def _smoke(self, a: dict[str, Any], attempt: int) -> dict[str, Any]:
        out = self.tool(
            "smoke_test",
            a,
            lambda: {"version": self.deployed["image"].rsplit(":", 1)[1], "status": 200},
        )
        checks = [
            {"name": "GET /healthz", "status": out["status"]},
            {"name": "GET /version", "status": 200, "body": out["version"]},
        ]
        return {"checks": checks}

    def _announce(self, a: dict[str, Any], attempt: int) -> dict[str, Any]:
        self.tool("post_changelog", a, lambda: {"ok": True, "ts": f"{self.rng.random():.6f}"})
        return {"summary": "posted"}

    # -- the run ----------------------------------------------------------------------------
    def run(self) -> str:
        attrs = {
            "logfire.msg_template": "release {service}",
            "logfire.msg": f"release {self.service}",
            "logfire.span_type": "span",
            "service": self.service,
            "objective": self.objective(),
        }
        try:
            with _span(self.tracer, "release {service}", attrs) as root:
                trace_id = format(root.get_span_context().trace_id, "032x")
                self._run()
        except ReleaseFailed:
            pass
        return trace_id

    def _patience(self, task: str) -> int:
        """How often the app runs a task before giving up (its own setting)."""
        if self.label.scenario == "loop_task_varying" and self.p["step"] == task:
            return len(self.errors)
        if self.label.scenario == "loop_across_replans" and task == "deploy":
            return 2
        return 3

    def _attempts(self, task: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(1, self._patience(task["id"]) + 1):
            try:
                return self.work(task, attempt)
            except Transient:
                if attempt >= self._patience(task["id"]):
                    raise
        raise AssertionError("unreachable")

    def _run(self) -> None:
        plan = self.plan(1)
        done: set[str] = set()
        version = 1
        versions = int(self.p.get("versions", 1))
        parent = otel_context.get_current()

        def in_thread(task: dict[str, Any]) -> dict[str, Any]:
            token = otel_context.attach(parent)
            try:
                return self._attempts(task)
            finally:
                otel_context.detach(token)

        while True:
            tasks = {t["id"]: t for t in plan["tasks"] if t["id"] not in done}
            try:
                while tasks:
                    ready = [t for t in tasks.values() if set(t["needs"]) <= done]
                    with ThreadPoolExecutor(max_workers=len(ready)) as pool:
                        futures = [(t, pool.submit(in_thread, t)) for t in ready]
                        errors = []
                        for t, f in futures:
                            try:
                                f.result()
                                done.add(t["id"])
                                del tasks[t["id"]]
                            except Exception as e:
                                errors.append((t, e))
                    if errors:
                        raise errors[0][1]
                break
            except (Blocked, Transient) as e:
                again = isinstance(e, Blocked) or (
                    self.label.scenario == "loop_across_replans" and version < versions
                )
                if not again or version > 3:
                    raise ReleaseFailed(f"task {self._failed(plan, done)} failed: {e}") from e
                version += 1
                plan = self.plan(version, reason=str(e))
            except (Refused, UnexpectedModelBehavior) as e:
                raise ReleaseFailed(f"task {self._failed(plan, done)} failed: {e}") from e
        self._verify()
        if self.label.scenario == "external_incident":
            self._monitor()

    def _failed(self, plan: dict[str, Any], done: set[str]) -> str:
        pending = [t["id"] for t in plan["tasks"] if t["id"] not in done]
        ready = [t for t in pending if set(self._needs(plan, t)) <= done]
        return ", ".join(ready)

    @staticmethod
    def _needs(plan: dict[str, Any], task: str) -> list[str]:
        return next(t["needs"] for t in plan["tasks"] if t["id"] == task)

    def _verify(self) -> None:
        """The app's own check of what was released against what was asked."""
        with _span(self.tracer, "verify release", {"logfire.msg": "verify release"}):
            tag = self.deployed["image"].rsplit(":", 1)[1]
            if tag != self.version:
                raise ReleaseFailed(
                    f"release check failed: {self.cluster} serves {self.service} {tag}"
                )
            if self.deployed["replicas"] != self.replicas:
                raise ReleaseFailed(
                    f"release check failed: {self.service} on {self.cluster} runs "
                    f"{self.deployed['replicas']} replicas"
                )
            if self.deployed["window"] != f"{self.window:%Y-%m-%dT%H:%M}Z":
                raise ReleaseFailed(
                    f"release check failed: {self.deployed['change']} ran in window "
                    f"{self.deployed['window']}, not the approved one"
                )

    def _monitor(self) -> None:
        """After the release succeeded: an upstream dependency fails (not the agent's doing)."""
        polls = int(self.p["polls"])
        prompt = f"Watch {self.service} on {self.cluster} after the release"
        with self.agent("monitor", EXECUTOR_MODEL, prompt):
            for i in range(1, polls + 1):
                down = i == polls

                def rate(down: bool = down) -> Any:
                    if down:
                        raise Refused(
                            f"upstream card-gw outage: error rate {self.p['rate']}% on "
                            f"{self.cluster}"
                        )
                    return {"error_rate": 0.3}

                try:
                    self.tool("error_rate", {"service": self.service, "window": "5m"}, rate)
                except Refused as e:
                    raise ReleaseFailed(f"post-release watch: {e}") from e


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the release agent's scenarios with spans going to ``provider``; run -> trace id."""
    tracer = provider.get_tracer("pydantic-ai", "1.0.0")
    return {label.run: Release(tracer, label).run() for label in labels}
