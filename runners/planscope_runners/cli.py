"""``planscope run`` and ``planscope suite``: the reference runtime from the command line.

The main ``planscope`` command finds :func:`register` through its ``planscope.commands`` entry
points.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import planscope
from planscope import environment_variables as ENV
from planscope.cli import deprecated_alias, number
from planscope.client import ClientSettings

from ._approval import DEFAULT_TIMEOUT_S, QueueGate, TerminalGate
from ._core import ApprovalGate
from ._models import ChatModel, OpenAIChatModel
from ._runner import SERVICE_NAME, RunResult, run_suite, run_task
from .environments import FACTORIES, TASKS, get_task
from .variants import VARIANTS, scheduler


@dataclass(frozen=True)
class Scenario:
    """A named preset: variant, task and faults that show one behaviour."""

    variant: str
    task: str
    faults: tuple[str, ...] = ()


SCENARIOS: dict[str, Scenario] = {
    "healthy": Scenario("plan_and_act", "ops-deploy-api"),
    "healthy-wide": Scenario("dag", "files-merge-6"),
    "flaky": Scenario("plan_and_act", "support-refund-ana", ("flaky_tool",)),
    "runaway-loop": Scenario("plan_and_act", "ops-deploy-api", ("loop_same_error",)),
    "unchanged-inputs": Scenario("dag", "files-archive-invoice", ("loop_unchanged_inputs",)),
    "context-starved": Scenario("dag", "ops-deploy-billing", ("context_starved",)),
    "misread-objective": Scenario("plan_and_act", "support-refund-chloe", ("misread_objective",)),
    "adapt-same-goal": Scenario("adapt", "ops-deploy-search", ("adapt_same_goal",)),
    "implicit-dependency": Scenario("plan_and_act", "files-merge-3", ("implicit_dependency",)),
    "write-conflict": Scenario("dag", "files-changelog-1", ("write_conflict",)),
    "irreversible-after-failure": Scenario(
        "plan_and_act", "files-archive-contract", ("irreversible_after_failure",)
    ),
    "unbounded-replan": Scenario("plan_and_act", "ops-audit-small", ("unbounded_replan",)),
    "scoped-replan": Scenario("dag", "ops-scale-fleet", ("needs_replan",)),
    "malformed-script": Scenario("scripts", "support-escalate-c3", ("malformed_script",)),
    "host-misroute": Scenario("host", "support-refund-ana", ("misroute",)),
    "host-app-tool-failure": Scenario("host", "ops-audit-wide", ("app_tool_failure",)),
}


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        choices=["scripted", "openai"],
        default="scripted",
        help="scripted: deterministic, no network; openai: any OpenAI-compatible server",
    )
    p.add_argument(
        "--base-url",
        default=os.environ.get(ENV.OPENAI_BASE_URL, "https://api.openai.com/v1"),
        help=f"OpenAI-compatible base URL (env {ENV.OPENAI_BASE_URL})",
    )
    p.add_argument(
        "--api-key",
        default=os.environ.get(ENV.OPENAI_API_KEY),
        help=f"(default: ${ENV.OPENAI_API_KEY})",
    )
    p.add_argument("--planner-model", default="gpt-4o", help="planner model id (openai)")
    p.add_argument("--executor-model", default="gpt-4o-mini", help="executor model id (openai)")
    p.add_argument(
        "--collector",
        dest="endpoint",
        metavar="URL",
        help="send spans to this collector, e.g. http://127.0.0.1:4318 (default: send nothing)",
    )
    p.add_argument("--endpoint", dest="endpoint", action=deprecated_alias("--collector"))
    p.add_argument("--service-name", default=SERVICE_NAME, help="service.name of the spans")
    p.add_argument("--labels", type=Path, help="write ground-truth labels (JSONL) here")
    p.add_argument("--seed", type=int, default=0, help="seed (same seed, same runs)")


def _models(args: argparse.Namespace) -> tuple[ChatModel | None, ChatModel | None]:
    if args.model != "openai":
        return None, None
    return (
        OpenAIChatModel(args.planner_model, base_url=args.base_url, api_key=args.api_key),
        OpenAIChatModel(args.executor_model, base_url=args.base_url, api_key=args.api_key),
    )


def _summary(result: RunResult) -> str:
    c = result.counters
    lines = [
        f"{result.variant} / {result.task}: {result.outcome}"
        + (f" ({result.reason})" if result.reason else ""),
        f"  trace {result.trace_id or '-'}  run {result.run_id}",
        f"  {c.llm_calls} LLM calls, {c.input_tokens + c.output_tokens} tokens, "
        f"${c.cost_usd:.4f}, {c.tool_calls} tool calls, {c.step_attempts} step attempts, "
        f"{c.plans} plans ({c.replans} replans), {result.wall_time_s:.2f}s",
    ]
    for f in result.expected:
        lines.append(f"  expected finding: {f.kind} at {f.step_id} (blame {f.component})")
    for f in result.negatives:
        lines.append(f"  must not be flagged: {f.kind} at {f.step_id}")
    if result.blame is not None:
        b = result.blame
        lines.append(f"  to blame: {b.component} at {b.step_id} ({b.cause})")
    return "\n".join(lines)


def cmd_run(args: argparse.Namespace) -> int:
    if args.list:
        print("variants: " + ", ".join(VARIANTS))
        print("scenarios: " + ", ".join(SCENARIOS))
        for task in TASKS.values():
            print(f"  {task.env:8s} {task.id:28s} {task.shape:8s} {task.rendered_objective}")
        return 0
    scenario = SCENARIOS.get(args.scenario) if args.scenario else None
    if args.scenario and scenario is None:
        raise planscope.ConfigurationError(
            f"unknown scenario {args.scenario!r}; known: {', '.join(SCENARIOS)}"
        )
    task_id = args.task or (scenario.task if scenario else None)
    if task_id is None:
        raise planscope.ConfigurationError("give --task or --scenario (see --list)")
    task = get_task(task_id)
    if args.env and args.env != task.env:
        raise planscope.ConfigurationError(f"task {task.id} belongs to env {task.env!r}")
    variant = args.variant or (scenario.variant if scenario else "plan_and_act")
    faults = (
        _csv(args.faults) if args.faults is not None else list(scenario.faults if scenario else ())
    )
    if args.endpoint:
        _require_reachable(args.endpoint)
    handle = (
        planscope.configure(args.endpoint, service_name=args.service_name)
        if args.endpoint
        else None
    )
    planner, executor = _models(args)
    gate = _gate(args)
    shared = bool(args.policy or args.slots or args.concurrent > 1)
    if shared and variant != "scheduler":
        raise planscope.ConfigurationError(
            "--policy, --slots and --concurrent need --variant scheduler"
        )
    if shared and gate is not None:
        raise planscope.ConfigurationError(
            "--approve applies to one run; drop --policy/--slots/--concurrent"
        )
    if shared and faults:
        raise planscope.ConfigurationError(
            "--faults run under the variant's own kernel; drop --policy/--slots/--concurrent"
        )
    try:
        if shared:
            kernel = scheduler.Kernel(args.policy or "round_robin", slots=args.slots or 1)
            results = scheduler.run_many(
                [task.id] * args.concurrent,
                kernel,
                planner=planner,
                executor=executor,
                seed=args.seed,
            )
        else:
            results = [
                run_task(
                    variant,
                    task.env,
                    task,
                    faults,
                    planner=planner,
                    executor=executor,
                    approve=gate,
                    seed=args.seed,
                )
            ]
    finally:
        if handle is not None:
            handle.shutdown()
    for result in results:
        print(_summary(result))
    if args.labels:
        args.labels.parent.mkdir(parents=True, exist_ok=True)
        with args.labels.open("a", encoding="utf-8") as f:
            for result in results:
                f.write(json.dumps(result.label(), default=str) + "\n")
    return 0


def _gate(args: argparse.Namespace) -> ApprovalGate | None:
    """The approval gate ``--approve`` asks for (None: plans run unreviewed)."""
    if args.approve is None:
        return None
    if args.approve == "ask":
        return TerminalGate()
    if not args.endpoint:
        raise planscope.ConfigurationError(
            "--approve queue files plans with a collector: give --collector URL"
        )

    def filed(approval_id: str) -> None:
        print(
            f"plan filed for approval {approval_id}: decide in the dashboard's Approvals page "
            f"(waiting up to {args.approve_timeout:g}s, then {args.approve_default})",
            file=sys.stderr,
            flush=True,
        )

    return QueueGate(
        ClientSettings.from_env(base_url=args.endpoint),
        timeout_s=args.approve_timeout,
        default=args.approve_default,
        on_filed=filed,
    )


class _Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.failures = 0

    def __call__(self, done: int, total: int, result: RunResult) -> None:
        self.failures += not result.success
        if not self.enabled:
            return
        width = 30
        filled = int(width * done / total)
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} runs, "
            f"{self.failures} failed"
        )
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def cmd_suite(args: argparse.Namespace) -> int:
    if args.endpoint:
        _require_reachable(args.endpoint)
    planner, executor = _models(args)
    progress = _Progress(not args.quiet)
    suite = run_suite(
        args.runs,
        args.fault_rate,
        args.seed,
        variants=_csv(args.variants) if args.variants else None,
        envs=_csv(args.envs) if args.envs else None,
        endpoint=args.endpoint,
        labels_path=args.labels,
        planner=planner,
        executor=executor,
        service_name=args.service_name,
        progress=progress,
    )
    if args.endpoint:
        _shutdown_exporter()
    table = suite.by_variant()
    print(
        f"{'variant':14s} {'runs':>5s} {'success':>8s} {'tokens':>8s} {'llm':>5s} "
        f"{'plans':>6s} {'replans':>8s} {'wall s':>7s}"
    )
    for name, row in table.items():
        print(
            f"{name:14s} {int(row['runs']):5d} {row['success_rate']:8.0%} "
            f"{row['tokens']:8.0f} {row['llm_calls']:5.1f} {row['plans']:6.2f} "
            f"{row['replans']:8.2f} {row['wall_time_s']:7.3f}"
        )
    faulty = sum(1 for r in suite.runs if r.faults)
    print(
        f"{len(suite.runs)} runs, {faulty} with an injected fault"
        + (f"; labels in {args.labels}" if args.labels else "")
    )
    print(_provenance(args))
    return 0


def _provenance(args: argparse.Namespace) -> str:
    """Say where the figures come from, next to them."""
    if args.model == "openai":
        return (
            f"real models: planner {args.planner_model}, executor {args.executor_model} at "
            f"{args.base_url}; tokens and latency as the server reported and measured; "
            "planner-side fault knobs do not apply (only tool-side faults are injected)."
        )
    return (
        "SYNTHETIC: scripted models that plan from each task's reference plan (so success is "
        "near 100% by construction), token counts estimated from prompt/answer text, no model "
        "latency. For real figures: planscope suite --model openai --base-url URL "
        "--planner-model ID --executor-model ID"
    )


def _require_reachable(url: str) -> None:
    """Refuse to run when --collector does not answer: the exporter would only log that the
    spans were dropped, after the run had reported success."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise planscope.ConfigurationError(f"--collector {url!r} is not an http(s):// URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        raise planscope.ConfigurationError(
            f"cannot reach the collector at {url} ({exc.strerror or exc}); start one with "
            "`planscope serve` or leave out --collector"
        ) from None


def _shutdown_exporter() -> None:
    """Flush and stop the exporter planscope.configure() installed (spans leave the process)."""
    from opentelemetry import trace

    provider: Any = trace.get_tracer_provider()
    shutdown = getattr(provider, "shutdown", None)
    if shutdown is not None:
        shutdown()


def register(subparsers: Any) -> None:
    """Add ``run`` and ``suite`` to the ``planscope`` command."""
    run = subparsers.add_parser("run", help="run one task with a runtime variant")
    run.add_argument(
        "--variant",
        choices=sorted(VARIANTS),
        help="runtime variant (default: the scenario's, else plan_and_act)",
    )
    run.add_argument("--env", choices=sorted(FACTORIES), help="environment of the task")
    run.add_argument("--task", help="a task id (see --list)")
    run.add_argument("--scenario", help=f"a preset: {', '.join(SCENARIOS)}")
    run.add_argument("--faults", help="comma-separated fault knobs, e.g. loop_same_error")
    run.add_argument("--list", action="store_true", help="list variants, scenarios and tasks")
    run.add_argument(
        "--policy", choices=scheduler.POLICIES, help="scheduler variant: scheduling policy"
    )
    run.add_argument("--slots", type=number(1), help="scheduler variant: model slots in the pool")
    run.add_argument(
        "--concurrent",
        type=number(1),
        default=1,
        help="scheduler variant: run the task this many times at once behind one kernel",
    )
    run.add_argument(
        "--approve",
        choices=["ask", "queue"],
        help="a person approves every plan version before it runs: ask at this terminal "
        "(approve, edit in $EDITOR, reject with a reason) or queue it in the collector for "
        "the dashboard's Approvals page (needs --collector)",
    )
    run.add_argument(
        "--approve-timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help="--approve queue: seconds to wait for a decision",
    )
    run.add_argument(
        "--approve-default",
        choices=["reject", "approve"],
        default="reject",
        help="--approve queue: the decision when nobody decides in time",
    )
    _model_args(run)
    run.set_defaults(func=cmd_run)

    suite = subparsers.add_parser("suite", help="run a labelled suite (ground truth for analyzers)")
    suite.add_argument("--runs", type=number(1), default=300, help="runs in the suite")
    suite.add_argument(
        "--fault-rate",
        type=number(0, 1, kind=float),
        default=0.3,
        help="share of runs with an injected fault",
    )
    suite.add_argument("--variants", help="comma-separated (default: all)")
    suite.add_argument("--envs", help="comma-separated (default: all)")
    suite.add_argument("--quiet", action="store_true", help="no progress bar")
    _model_args(suite)
    suite.set_defaults(func=cmd_suite)
