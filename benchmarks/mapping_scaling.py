"""How the analysis of one trace grows with hostile and huge inputs (docs/analyzers.md, "Hostile
and huge traces"): for each input kind and size, one trace stored on a fresh embedded store
(``Store.insert_spans``, every materialized view filled), then the CPU seconds of
``Analyzer.analyze`` on it alone (load, ``observed.bind``, every detector) and of the trace
API's detail (``TraceQueries.get_trace``, which binds too) plus ``load_traces`` (the plan steps
it read). A kind whose time grows faster
than its size (x10 size, far more than x10 time) is a superlinear blow-up.

Kinds: ``plan_text`` (an app's ``<prefix>.plan.text`` read by the format and structure readers,
numbered lines / one long line / Makefile / LaTeX / BibTeX / JSON steps, and hostile ones:
unbalanced macros, one command of many words, lines nesting JSON ever deeper), ``llm_plan`` (an
OpenInference planner's answer, read as a plan), ``tool_args`` (a tool call's JSON arguments,
also one long string), ``spans`` (spans in one trace, planscope's and OpenInference's),
``attempts`` (attempts of one step), ``plan_steps`` (steps of one plan, each requiring the one
before).

    .venv/bin/python benchmarks/mapping_scaling.py [--kinds plan_text spans ...] [--max-scale 1]

``--max-scale`` < 1 shrinks every size (a quick look). Sizes run smallest first; a kind stops at
the first size past ``--limit`` seconds (the next would only be slower).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.storage._spans

from _common import machine_facts, print_table
from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector._query import TraceQueries
from planscope_collector.storage import open_store

from tests.storage._spans import make_span, spans_ipc

Rows = list[list[Any]]
P = "bench"


LINES = {
    "numbered": "{i}. step_{i}: call search with q={i} after step_{j}\n",
    "one_line": "step_{i} then search q={i} after step_{j}; ",
    "makefile": "step_{i}: step_{j}  ## goal {i}\n\tsearch q={i} n=$(step_{j})\n",
    "latex": "\\step{{step_{i}}}{{tool=search, q={i}, from=\\ref{{step_{j}}}}}\n",
    "bibtex": "@step{{step_{i}, tool = {{search}}, q = {{{i}}}, after = step_{j}}}\n",
    "json": '{{"id": "step_{i}", "tool": "search", "requires": ["step_{j}"]}},\n',
    # hostile: unbalanced macros, one command of many words, lines nesting JSON ever deeper
    "unbalanced_macros": "\\step{{step_{i}}}{{tool=search, q=\\ref{{",
    "long_command": " w{i}",
    "json_lines": '[{{"id": "step_{i}", "x": [\n',
}
"""One line (or piece) of each shape of plan text, ``i`` its number, ``j`` the one before."""
HEADS = {"long_command": "step_0 = search --q 1\nstep_1 = search --q $step_0"}


def _text(shape: str, size: int) -> str:
    """A plan text of about ``size`` characters in one of the shapes of :data:`LINES`."""
    out, total, i = [HEADS.get(shape, "")], 0, 0
    while total < size:
        piece = LINES[shape].format(i=i, j=max(0, i - 1))
        out.append(piece)
        total += len(piece)
        i += 1
    body = "".join(out)
    return "[" + body.rstrip(",\n") + "]" if shape == "json" else body


def _app_plan(trace_id: str, text: str) -> Rows:
    """An app's root, its ``shop.plan`` span saying the plan, and five ``shop.step`` spans."""
    root = make_span(trace_id=trace_id, name="app", project=P)
    rows = [
        root,
        make_span(
            trace_id=trace_id,
            name="shop.plan",
            parent=root[2],
            project=P,
            attrs={"shop.plan.text": text},
            start_ns=root[0] + 1,
        ),
    ]
    for i in range(5):
        step = make_span(
            trace_id=trace_id,
            name=f"shop.step step_{i}",
            parent=root[2],
            project=P,
            start_ns=root[0] + 10 + i,
        )
        tool = make_span(
            trace_id=trace_id,
            name="execute_tool search",
            parent=step[2],
            project=P,
            start_ns=root[0] + 11 + i,
            status="Error" if i % 2 else "Unset",
            attrs={A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "search"},
        )
        rows += [step, tool]
    return rows


def _llm_plan(trace_id: str, text: str) -> Rows:
    """An OpenInference agent whose planner LLM call answers ``text``, then executor chains."""
    oi = A.OI_SPAN_KIND
    root = make_span(trace_id=trace_id, name="agent", project=P, attrs={oi: "AGENT"})
    planner = make_span(
        trace_id=trace_id,
        name="planner",
        parent=root[2],
        project=P,
        attrs={oi: "CHAIN"},
        start_ns=root[0] + 1,
    )
    llm = make_span(
        trace_id=trace_id,
        name="ChatOpenAI",
        parent=planner[2],
        project=P,
        attrs={oi: "LLM", A.OI_OUTPUT_VALUE: text},
        start_ns=root[0] + 2,
    )
    rows = [root, planner, llm]
    for i in range(5):
        ex = make_span(
            trace_id=trace_id,
            name="executor",
            parent=root[2],
            project=P,
            attrs={oi: "CHAIN", A.OI_INPUT_VALUE: f"do step_{i}"},
            start_ns=root[0] + 10 + i,
        )
        tool = make_span(
            trace_id=trace_id,
            name="search",
            parent=ex[2],
            project=P,
            attrs={oi: "TOOL", A.OI_TOOL_NAME: "search"},
            start_ns=root[0] + 11 + i,
        )
        rows += [ex, tool]
    return rows


def _planscope(trace_id: str, steps: int, attempts: int, tools: int, arguments: str = "") -> Rows:
    """A planscope run: a plan of ``steps`` steps (each requiring the one before),
    ``attempts`` failed attempts of its first step, and ``tools`` failed tool calls spread over
    the attempts (``arguments``: the calls' JSON arguments)."""
    run_id = "r"
    t0 = make_span(trace_id=trace_id, project=P)[0]
    plan = {
        "id": "p",
        "version": 1,
        "objective": "o",
        "steps": [
            {
                "id": f"s{i}",
                "tool": "http_get",
                "depends_on": [f"s{i - 1}"] if i else [],
                "requires": [f"k{i}"],
                "produces": [f"k{i + 1}"],
            }
            for i in range(steps)
        ],
    }
    run = make_span(
        trace_id=trace_id,
        name="run",
        project=P,
        status="Error",
        attrs={
            A.SPAN_KIND: A.KIND_RUN,
            A.RUN_ID: run_id,
            A.RUN_OBJECTIVE: "o",
            A.RUN_OUTCOME: A.OUTCOME_FAILURE,
            A.RUN_BUDGET: {"max_attempts_per_step": 3},
        },
    )
    rows = [
        run,
        make_span(
            trace_id=trace_id,
            name="plan",
            parent=run[2],
            project=P,
            start_ns=t0 + 1,
            attrs={
                A.SPAN_KIND: A.KIND_PLAN,
                A.RUN_ID: run_id,
                A.PLAN_ID: "p",
                A.PLAN_VERSION: 1,
                A.PLAN_JSON: plan,
            },
        ),
    ]
    ids = []
    for a in range(attempts):
        step = make_span(
            trace_id=trace_id,
            name="step s0",
            parent=run[2],
            project=P,
            start_ns=t0 + 10 + a * (tools // max(1, attempts) + 2),
            status="Error",
            attrs={
                A.SPAN_KIND: A.KIND_STEP,
                A.RUN_ID: run_id,
                A.PLAN_ID: "p",
                A.PLAN_VERSION: 1,
                A.STEP_ID: "s0",
                A.STEP_ATTEMPT: a + 1,
                A.STEP_STATUS: A.STATUS_ERROR,
                A.STEP_CONTEXT_KEYS: ["k0"],
                A.STEP_ERROR_FINGERPRINT: "fp",
            },
        )
        ids.append(step)
        rows.append(step)
    for t in range(tools):
        owner = ids[t % len(ids)] if ids else run
        rows.append(
            make_span(
                trace_id=trace_id,
                name="execute_tool http_get",
                parent=owner[2],
                project=P,
                start_ns=owner[0] + 1 + t // max(1, len(ids)),
                status="Error",
                status_message="timeout",
                attrs={
                    A.SPAN_KIND: A.KIND_TOOL,
                    A.GEN_AI_TOOL_NAME: "http_get",
                    A.RUN_ID: run_id,
                    A.STEP_ID: "s0",
                    A.GEN_AI_TOOL_CALL_ARGUMENTS: arguments or '{"u": 1}',
                    A.TOOL_EFFECT: "write",
                },
            )
        )
    return rows


def _oi_spans(trace_id: str, n: int) -> Rows:
    """An OpenInference agent with ``n`` spans: chains (inferred attempts) of a tool and an LLM
    call each, a tenth of the tools failing."""
    oi = A.OI_SPAN_KIND
    root = make_span(trace_id=trace_id, name="agent", project=P, attrs={oi: "AGENT"})
    rows = [root]
    while len(rows) < n:
        i = len(rows)
        chain = make_span(
            trace_id=trace_id,
            name=f"node_{i % 7}",
            parent=root[2],
            project=P,
            attrs={oi: "CHAIN"},
            start_ns=root[0] + i,
        )
        tool = make_span(
            trace_id=trace_id,
            name="search",
            parent=chain[2],
            project=P,
            status="Error" if i % 10 == 0 else "Unset",
            start_ns=root[0] + i,
            attrs={oi: "TOOL", A.OI_TOOL_NAME: "search", A.OI_INPUT_VALUE: f"q{i}"},
        )
        llm = make_span(
            trace_id=trace_id,
            name="ChatOpenAI",
            parent=chain[2],
            project=P,
            attrs={oi: "LLM", A.OI_OUTPUT_VALUE: f"call search q{i}"},
            start_ns=root[0] + i,
        )
        rows += [chain, tool, llm]
    return rows


def _plan_text(shape: str) -> Callable[[str, int], Rows]:
    return lambda trace_id, size: _app_plan(trace_id, _text(shape, size))


def _tool_args(shape: str) -> Callable[[str, int], Rows]:
    """Three calls whose JSON arguments are one long string, or many keys."""

    def build(trace_id: str, size: int) -> Rows:
        if shape == "string":
            return _planscope(trace_id, 3, 3, 3, json.dumps({"u": "x" * size}))
        return _planscope(trace_id, 3, 3, 3, json.dumps({f"k{i}": i for i in range(size // 10)}))

    return build


KB, MB = 1000, 1_000_000
CASES: dict[str, list[tuple[str, int, Callable[[str, int], Rows]]]] = {
    "plan_text": [
        (f"plan_text {shape}", size, _plan_text(shape))
        for shape in LINES
        for size in (10 * KB, 100 * KB, 1 * MB)
    ],
    "llm_plan": [
        ("llm_plan numbered", size, lambda t, s: _llm_plan(t, _text("numbered", s)))
        for size in (10 * KB, 100 * KB, 1 * MB)
    ],
    "tool_args": [
        (f"tool_args {shape}", size, _tool_args(shape))
        for shape in ("string", "keys")
        for size in (1 * MB, 3 * MB, 10 * MB)
    ],
    "spans": [
        ("spans planscope", n, lambda t, n: _planscope(t, 10, max(1, n // 50), n))
        for n in (100, 1000, 5000, 20_000)
    ]
    + [("spans openinference", n, _oi_spans) for n in (100, 1000, 5000, 20_000)],
    "attempts": [
        ("attempts of one step", n, lambda t, n: _planscope(t, 3, n, n))
        for n in (1, 100, 1000, 5000)
    ],
    "plan_steps": [
        ("plan_steps", n, lambda t, n: _planscope(t, n, 3, 3)) for n in (10, 100, 500, 2000)
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--max-scale", type=float, default=1.0, help="shrink every size")
    parser.add_argument("--limit", type=float, default=30.0, help="stop a kind past this")
    parser.add_argument("--label", default="", help="only the inputs whose label has this")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    rows: list[list[Any]] = []
    with tempfile.TemporaryDirectory() as tmp, open_store(f"chdb://{tmp}/db") as store:
        store.migrate()
        number = 0
        for kind in args.kinds:
            stopped: set[str] = set()
            for label, size, build in CASES[kind]:
                if label in stopped or args.label not in label:
                    continue
                number += 1
                trace_id = f"{number:032x}"
                n = max(1, int(size * args.max_scale))
                spans = build(trace_id, n)
                store.insert_spans(spans_ipc(spans))
                t0 = time.process_time()
                result = Analyzer(store).analyze(P, [trace_id], write=False)
                analyze = time.process_time() - t0
                t0 = time.process_time()
                try:  # an older build's readers raise on some hostile inputs: say which
                    TraceQueries(store).get_trace(P, trace_id, 0, 100_000)
                    steps: Any = len(load_traces(store, P, [trace_id])[trace_id].plan_steps)
                except Exception as exc:
                    steps = f"raised {type(exc).__name__}"
                served = time.process_time() - t0
                rows.append(
                    [
                        label,
                        n,
                        len(spans),
                        round(analyze, 3),
                        round(served, 3),
                        steps,
                        ",".join(sorted(result.counts())) or "-",
                    ]
                )
                print(*rows[-1], sep="\t", flush=True)
                if analyze + served > args.limit:
                    stopped.add(label)
    print_table(
        "Analysis of one trace, by input",
        ["input", "size", "spans", "analyze CPU s", "detail+load CPU s", "plan steps", "findings"],
        rows,
    )
    print(machine_facts())
    if args.json:
        Path(args.json).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
