"""Attribution: features, the ranker, baselines, cross-validation, tool-use logs, stored traces."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import planscope
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode
from planscope import Plan, PlanStep, _config, _state, api
from planscope._cli import main
from planscope_analyzer.attribution import (
    BASELINES,
    METHOD,
    FindingRef,
    Model,
    attribute,
    best_default,
    candidates,
    conversation_from_trace,
    cross_validate,
    load,
    map_findings,
    rank,
    score_shipped,
    shipped,
    train,
)
from planscope_analyzer.importers import _conventions as C
from planscope_analyzer.importers import import_files, parse_whowhen
from planscope_analyzer.importers._log import parse_logs, read_logs
from planscope_collector import BackgroundServer

from tests.conftest import poll, wait_for_trace

PLAN = (
    "You are given: (1) a task and advises from your manager with a specific plan.\n"
    "## Plan for solving the task\n1. compute\n"
)


def _ag2(history: list[tuple[str, str]], agent: str, step: int) -> dict[str, Any]:
    return {
        "question": "How many widgets?",
        "mistake_agent": agent,
        "mistake_step": str(step),
        "history": [{"name": n, "role": "user", "content": c} for n, c in history],
    }


def _failed_code(coder: str) -> dict[str, Any]:
    return _ag2(
        [
            ("Lead_Expert", PLAN),
            (coder, "```python\nprint(widgets)\n```"),
            ("Computer_terminal", "exitcode: 1 (execution failed)\nNameError: widgets"),
            ("Lead_Expert", "TERMINATE"),
        ],
        coder,
        1,
    )


def _hedged(who: str) -> dict[str, Any]:
    return _ag2(
        [
            ("Lead_Expert", PLAN),
            ("Checker_Expert", "Let us check."),
            (who, "Assuming the catalogue lists 1,250 widgets and 340 gadgets: 1,590."),
            ("Checker_Expert", "Looks right. TERMINATE"),
        ],
        who,
        2,
    )


TOOL_USE = {
    "task_id": 7,
    "mistake_agent": "assistant",
    "mistake_step": 3,
    "messages": [
        {"role": "system", "content": "You are a retail agent."},
        {"role": "user", "content": "Please cancel order 7."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id": 7}'},
                }
            ],
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "cancel_order", "arguments": {"order_id": 8}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "Error: order 8 is not yours"},
        {"role": "assistant", "content": [{"type": "text", "text": "Order 8 is cancelled."}]},
        {"role": "user", "content": "Thanks"},
    ],
}


def _conv(doc: Any) -> Any:
    [conv] = parse_logs(json.dumps(doc).encode(), "x.json")
    return conv


def test_features_describe_the_log_not_the_dataset() -> None:
    cands = {c.step: c.values for c in candidates(_conv(_failed_code("Coder_Expert")))}
    assert set(cands) == {0, 1, 3}  # the code runner's output is never a candidate
    assert cands[1]["error_follows"] == cands[1]["first_error_cause"] == cands[1]["code"] == 1
    assert cands[0]["plan"] == cands[0]["by_plan_owner"] == 1 and cands[1]["plan"] == 0
    hedged = {c.step: c.values for c in candidates(_conv(_hedged("Data_Expert")))}
    assert hedged[2]["hedge"] == 1 and hedged[2]["new_facts"] > 0 and hedged[1]["hedge"] == 0


def test_answer_source_is_the_one_turn_the_final_answer_rests_on_most() -> None:
    """Whoever first states most of the final answer's words is its source; a later repeat of
    the same words (the final answer itself, a check) is not, and the question's words count
    for no one."""
    conv = _conv(
        _ag2(
            [
                ("Lead_Expert", PLAN),
                ("Search_Expert", "The widgets are stored in Rotterdam warehouse seven."),
                ("Search_Expert", "Also Rotterdam has a harbour."),
                ("Check_Expert", "Rotterdam warehouse seven, confirmed."),
                ("Lead_Expert", "Widgets: Rotterdam warehouse seven. TERMINATE"),
            ],
            "Search_Expert",
            1,
        )
    )
    source = {c.step: c.values["answer_source"] for c in candidates(conv)}
    assert source == {0: 0, 1: 1, 2: 0, 3: 0, 4: 0}


def test_ranker_is_learned_and_names_speakers_of_the_log(tmp_path: Path) -> None:
    """Fit on logs where the code's author is to blame; the fitted ranker blames an unseen
    author, whatever its name (nothing is keyed on names)."""
    d = tmp_path / "train"
    d.mkdir()
    for i, name in enumerate(["A_Expert", "B_Expert", "C_Expert", "D_Expert"]):
        (d / f"{i}.json").write_text(json.dumps(_failed_code(name)))
        (d / f"{i + 10}.json").write_text(json.dumps(_hedged(name)))
    logs = load([d])
    model = train(logs)
    assert model.weights["first_error_cause"] > 0 and model.weights["hedge"] > 0
    for doc, step in ((_failed_code("Zed"), 1), (_hedged("Yan"), 2)):
        a = attribute(_conv(doc), method=METHOD, model=model)
        assert (a.component, a.step, a.rule) == (doc["mistake_agent"], step, METHOD)
        assert a.confidence is not None and 0 < a.confidence <= 1 and a.evidence
    # An untrained (all-zero) model has no preference: ties go to the earliest candidate.
    flat = rank(_conv(_hedged("Yan")), Model({}))
    assert flat[0][0].step == 0 and len({round(p, 6) for _, p in flat}) == 1


def test_two_stages_agent_by_total_probability_step_among_its_turns() -> None:
    """Stage 1 picks the agent whose turns hold most probability; stage 2 ranks that agent's
    own turns with the step weights, so the step is that agent's even when another agent's
    turn scores higher under the step weights."""
    conv = _conv(
        _ag2(
            [
                ("Lead_Expert", PLAN),
                ("Lead_Expert", "Let us check the widgets."),
                ("Worker_Expert", "```python\nprint(1)\n```"),
                ("Lead_Expert", "Looks fine to me. TERMINATE"),
            ],
            "Lead_Expert",
            3,
        )
    )
    model = Model({"by_plan_owner": 3.0}, step_weights={"last_action": 2.0, "code": 5.0})
    a = attribute(conv, method=METHOD, model=model)
    assert (a.component, a.step) == ("Lead_Expert", 3)  # the code turn is Worker's: not a step
    same = attribute(conv, method=METHOD, model=Model({"by_plan_owner": 3.0, "plan": 1.0}))
    assert (same.component, same.step) == ("Lead_Expert", 0)  # no step weights: stage-1 ones


def test_step_stage_is_fitted_on_the_blamed_agents_own_turns(tmp_path: Path) -> None:
    """The labelled agent is the plan owner, its labelled turn the last one: stage 1 learns
    the owner, stage 2 (on the owner's turns only) learns the last turn, against stage 1."""
    d = tmp_path / "train"
    d.mkdir()
    for i, name in enumerate(["A_Expert", "B_Expert", "C_Expert", "D_Expert", "E_Expert"]):
        doc = _ag2(
            [
                (name, PLAN),
                ("Other_Expert", "Sure."),
                (name, f"The answer is {i + 10}."),
                ("Other_Expert", "TERMINATE"),
            ],
            name,
            2,
        )
        (d / f"{i}.json").write_text(json.dumps(doc))
    model = train(load([d]))
    assert model.step_weights and model.step_weights != model.weights
    assert model.step_weights["plan"] < model.weights["plan"]
    a = attribute(_conv(doc), method=METHOD, model=model)
    assert (a.component, a.step) == (doc["mistake_agent"], 2)


def test_baselines_on_a_known_log() -> None:
    conv = _conv(_failed_code("Coder_Expert"))
    picks = {name: fn(conv) for name, fn in BASELINES.items()}
    assert picks == {
        "planner-first-turn": ("Lead_Expert", 0),
        "most-active-first-turn": ("Lead_Expert", 0),
        "first-error-receiver": ("Coder_Expert", 1),
        "last-before-final": ("Coder_Expert", 1),
    }
    for name in BASELINES:
        a = attribute(conv, method=name)
        assert (a.component, a.step, a.rule) == (*picks[name], name)  # type: ignore[misc]


def test_cross_validation_never_scores_a_log_its_model_saw(tmp_path: Path) -> None:
    """Two subsets with opposite habits: fitted on the other subset, the ranker must fail on
    every log of the transfer protocol; within a subset it learns the habit."""
    code, hedge = tmp_path / "code", tmp_path / "hedge"
    code.mkdir(), hedge.mkdir()
    for i in range(4):
        doc = _failed_code(f"E{i}_Expert")
        doc["mistake_agent"], doc["mistake_step"] = "Lead_Expert", "0"  # the plan, not the code
        (code / f"{i}.json").write_text(json.dumps(doc))
        (hedge / f"{i}.json").write_text(json.dumps(_failed_code(f"F{i}_Expert")))
    logs = load([code, hedge])
    scores = {(s.protocol, s.subset, s.method): s for s in cross_validate(logs)}
    within = scores[("within (leave-one-out)", "hedge", METHOD)]
    transfer = scores[("transfer from code", "hedge", METHOD)]
    assert (within.n, transfer.n) == (4, 4)
    assert transfer.agent == 0 and transfer.step == 0
    assert scores[("transfer from code", "hedge", "first-error-receiver")].step == 4
    assert best_default(list(scores.values())) != METHOD  # it loses to a baseline somewhere


def test_tool_use_conversation_imports_and_attributes() -> None:
    conv = _conv(TOOL_USE)
    assert [t.kind for t in conv.turns] == [
        "task",
        "task",
        "reply",
        "reply",
        "tool",
        "reply",
        "reply",
    ]
    assert conv.turns[4].speaker == "cancel_order" and "cancel_order" in conv.tool_speakers
    assert conv.labels is not None and (conv.labels.agent, conv.labels.step) == ("assistant", 3)
    for method in (None, METHOD, *BASELINES):
        a = attribute(conv, method=method)
        assert a.component in {"assistant", "user"} and conv.turns[a.step].kind == "reply"
    assert BASELINES["first-error-receiver"](conv) == ("assistant", 3)
    with pytest.raises(Exception, match=r"messages\[1\]\.role"):
        _conv([{"role": "user", "content": "x"}, {"role": "robot", "content": "y"}])


def test_finding_is_evidence_for_the_speaker_who_owns_the_step() -> None:
    conv = _conv(_failed_code("Coder_Expert"))
    f = [FindingRef("runaway_loop", "high", "Coder_Expert", 2, "looped")]
    a = attribute(conv, f)
    plain = attribute(conv)
    assert (a.component, a.step) == (plain.component, plain.step)
    assert a.findings_used == ("runaway_loop",)
    assert any("Coder_Expert" in e.text and e.step == 2 for e in a.evidence)


def test_shipped_weights_cover_every_feature() -> None:
    s = shipped()
    assert s.default in (METHOD, *BASELINES)
    assert set(s.model.weights) == set(candidates.__globals__["FEATURES"])
    assert all(np.isfinite(list(s.model.weights.values())))


def test_evaluate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "set"
    d.mkdir()
    for i in range(3):
        (d / f"{i}.json").write_text(json.dumps(_failed_code(f"E{i}_Expert")))
    (d / "9.json").write_text(json.dumps(TOOL_USE))
    out = tmp_path / "w.json"
    with pytest.raises(SystemExit) as done:
        main(["attribute", "--evaluate", "--json", "--write-weights", str(out), str(d)])
    assert done.value.code == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    methods = {r["method"] for r in lines if "method" in r}
    assert methods == {METHOD, *BASELINES}
    assert any(r.get("protocol", "").startswith("fit-on-dev") for r in lines)
    pairs = [r for r in lines if r.get("paired")]
    assert pairs and all(r["agent: +/-"].startswith("+") for r in pairs)
    written = json.loads(out.read_text())
    assert written["default"] == lines[-1]["default"] and "hedge" in written["weights"]
    with pytest.raises(SystemExit) as done:
        main(["attribute", "--method", "oracle", str(d / "0.json")])
    assert done.value.code != 0
    assert "planscope: error: --method" in capsys.readouterr().err


def test_dataset_cross_validated(dataset: Path) -> None:
    """The development set under cross-validation: the ranker is scored only on logs its
    model did not see, next to the baselines (figures in docs/attribution.md)."""
    logs = load([dataset / "algorithm_generated", dataset / "hand_crafted_dev"])
    assert len(logs) == 140
    scores = cross_validate(logs)

    def block(protocol: str, subset: str) -> tuple[Any, list[Any]]:
        m = {s.method: s for s in scores if s.protocol.startswith(protocol) and s.subset == subset}
        return m.pop(METHOD), list(m.values())

    ag2, ag2_base = block("within", "algorithm_generated")
    assert all(ag2.agent > b.agent and ag2.step > b.step for b in ag2_base)
    hc, hc_base = block("within", "hand_crafted_dev")
    assert hc.n == 14 and all(hc.agent >= b.agent and hc.step >= b.step for b in hc_base)
    # Shrunk towards the first-error prior, a model fitted on the 14 Magentic-One logs alone
    # no longer falls below the baselines' agents on the AG2 chats (it did: 45 against 68).
    far, far_base = block("transfer from hand_crafted_dev", "algorithm_generated")
    assert far.agent >= max(b.agent for b in far_base)
    assert shipped().default == best_default(scores)  # the shipped choice is the evaluated one
    again = [attribute(parse_whowhen(g.path.read_bytes(), str(g.path))) for g in logs[:3]]
    assert again == [attribute(g.conv) for g in logs[:3]]  # deterministic


@pytest.mark.parametrize("which", ["hand_crafted_dev/19.json", "algorithm_generated/1.json"])
def test_stored_trace_attributes_like_the_file(
    which: str, dataset: Path, collector: BackgroundServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = dataset / which
    conv = parse_whowhen(path.read_bytes(), str(path))
    [p] = import_files([path], collector=collector.url)
    trace = wait_for_trace(collector.url, p.trace_ids[0], p.span_count)
    stored = conversation_from_trace(trace)
    assert stored.speakers() and set(stored.speakers()) <= set(conv.speakers())
    for method in (METHOD, "planner-first-turn"):
        offline, online = attribute(conv, method=method), attribute(stored, method=method)
        assert (online.component, online.step) == (offline.component, offline.step), method
    with pytest.raises(SystemExit) as done:  # findings endpoint absent or empty: still works
        main(["attribute", "--json", "--collector", collector.url, "--trace-id", p.trace_ids[0]])
    assert done.value.code == 0
    [out] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert out["component"] in conv.speakers()


def test_stored_tool_use_trace(
    tmp_path: Path, collector: BackgroundServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(TOOL_USE))
    [p] = import_files([path], collector=collector.url)
    assert p.format == "tool-use"
    trace = wait_for_trace(collector.url, p.trace_ids[0], p.span_count)
    stored = conversation_from_trace(trace)
    offline = attribute(_conv(TOOL_USE), method=METHOD)
    online = attribute(stored, method=METHOD)
    assert (online.component, online.step) == (offline.component, offline.step)


def test_third_party_trace_blames_a_name_in_the_trace(
    tmp_path: Path, collector: BackgroundServer
) -> None:
    """An OpenInference trace (never a conversation log) attributes to one of its own names."""
    from .test_otlp_import import T1, openinference_request

    f = tmp_path / "oi.json"
    f.write_text(json.dumps(openinference_request()))
    import_files([f], collector=collector.url)
    trace = wait_for_trace(collector.url, T1, 6)
    conv = conversation_from_trace(trace)
    names = {str(s["attributes"].get("gen_ai.agent.name")) for s in trace["spans"]}
    names |= {s["name"] for s in trace["spans"]} | {s.get("service") for s in trace["spans"]}
    # the LLM call is the agent's it runs in; the chain named "planner" is no plan (a plan is
    # never guessed from a name) and no step (it is no graph node), so it is no turn
    assert {t.speaker for t in conv.turns if t.kind != "tool"} == {"researcher"}
    assert conv.tool_speakers == {"web_search"}
    for method in (METHOD, *BASELINES):
        a = attribute(conv, method=method)
        assert a.component in names and a.component in conv.speakers(), (method, a)


@pytest.fixture
def exporter(collector: BackgroundServer) -> Iterator[TracerProvider]:
    """A real OTel SDK exporting over OTLP/HTTP to the module's collector; planscope's SDK
    records through it."""
    provider = TracerProvider(resource=Resource.create({"service.name": "toy-agent"}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{collector.url}/v1/traces"))
    )
    planscope.configure(tracer_provider=provider)
    yield provider
    provider.shutdown()
    _config.reset()
    _state.reset()


def _attribute_trace(
    collector: BackgroundServer, trace_id: str, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(
            [
                "attribute",
                "--json",
                "--method",
                METHOD,
                "--collector",
                collector.url,
                "--trace-id",
                trace_id,
            ]
        )
    assert done.value.code == 0
    [out] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    return dict(out)


def test_live_sdk_trace_blames_the_executor_whose_tool_failed(
    collector: BackgroundServer, exporter: TracerProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    """A planscope-SDK run sent live: the executor whose tool call failed is blamed, by the
    name the trace gives it."""

    @planscope.tool
    def charge(amount: float) -> str:
        raise RuntimeError("card declined")

    @planscope.planner
    def make_plan(objective: str) -> Plan:
        steps = [
            PlanStep("fetch", "fetch the invoice", executor="reader"),
            PlanStep("pay", "pay it", executor="payer", depends_on=["fetch"]),
        ]
        return Plan(steps, objective=objective)

    @planscope.step
    def execute(step: PlanStep) -> str:
        return charge(10.0) if step.id == "pay" else "invoice 42 for 1,200 EUR"

    @planscope.run("billing")
    def agent(objective: str) -> None:
        for s in make_plan(objective).topological_order():
            with contextlib.suppress(RuntimeError):
                execute(s)

    agent("pay the invoice")
    exporter.force_flush()
    run = planscope_trace_ids(collector, "billing")
    trace = wait_for_trace(collector.url, run, 5)
    conv = conversation_from_trace(trace)
    assert [(t.speaker, t.kind) for t in conv.turns] == [
        ("billing", "plan"),
        ("reader", "reply"),
        ("payer", "reply"),
        ("charge", "tool"),
    ]
    out = _attribute_trace(collector, run, capsys)
    assert (out["component"], out["step"]) == ("payer", 2)
    for method in BASELINES:
        assert attribute(conv, method=method).component in {"billing", "reader", "payer"}


def test_live_openinference_trace_is_read_with_the_ingest_precedence(
    collector: BackgroundServer, exporter: TracerProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    """OpenInference-shaped spans sent live (never through ``planscope import``): agents,
    LLM calls inside them and a failed tool become turns spoken by the trace's own names."""
    tracer = exporter.get_tracer("openinference.instrumentation.test")
    oi = "openinference.span.kind"
    with tracer.start_as_current_span(
        "supervisor", attributes={oi: "CHAIN", "input.value": "Population of Xland?"}
    ) as root:
        with tracer.start_as_current_span("researcher", attributes={oi: "AGENT"}):
            with tracer.start_as_current_span(
                "ChatOpenAI", attributes={oi: "LLM", "output.value": "search the census"}
            ):
                pass
            with tracer.start_as_current_span("web_search", attributes={oi: "TOOL"}) as tool:
                tool.set_attribute("output.value", "Error: timeout")
                tool.set_status(Status(StatusCode.ERROR, "timeout"))
            with tracer.start_as_current_span(
                "ChatOpenAI", attributes={oi: "LLM", "output.value": "Xland has 12,345 people"}
            ):
                pass
        with tracer.start_as_current_span(
            "writer", attributes={oi: "AGENT", "output.value": "12,345"}
        ):
            pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    exporter.force_flush()
    trace = wait_for_trace(collector.url, trace_id, 6)
    conv = conversation_from_trace(trace)
    assert conv.question == "Population of Xland?"
    assert [(t.speaker, t.kind) for t in conv.turns] == [
        ("researcher", "reply"),
        ("researcher", "reply"),
        ("web_search", "tool"),
        ("researcher", "reply"),
        ("writer", "reply"),
    ]
    out = _attribute_trace(collector, trace_id, capsys)
    assert (out["component"], out["step"]) == ("researcher", 1)  # its call met the error
    for method in BASELINES:
        assert attribute(conv, method=method).component in {"researcher", "writer"}


def planscope_trace_ids(collector: BackgroundServer, agent: str) -> str:
    """The trace id of the stored run of ``agent`` (waits for its run span)."""

    def hits(listed: dict[str, Any]) -> list[str]:
        return [t["trace_id"] for t in listed["traces"] if t.get("agent") == agent]

    url = f"{collector.url}/api/traces"
    return hits(poll(url, hits, params={"limit": 500}, what=f"a run of {agent}"))[0]


def test_finding_labelled_planner_is_evidence_for_the_speaker_of_its_step() -> None:
    """A finding whose component is the literal ``planner`` (no speaker of this log) is
    credited to whoever owns its step, and never becomes the blamed name."""
    conv = _conv(_failed_code("Coder_Expert"))
    trace = {
        "spans": [
            {"span_id": "s2", "attributes": {C.IMPORT_RECORD: "2", "planscope.step.id": "run"}}
        ]
    }
    finding = api.Finding(
        kind="runaway_loop",
        severity="high",
        trace_id="t",
        component="planner",
        evidence_span_ids=["s2"],
    )
    [ref] = map_findings([finding], trace, conv)
    assert (ref.component, ref.step) == ("Coder_Expert", 2)  # the code runner ran its code
    for method in (METHOD, *BASELINES):
        a = attribute(conv, [ref], method=method)
        assert a.component in conv.speakers() and a.component != "planner"
        assert any(e.step == 2 and "on Coder_Expert" in e.text for e in a.evidence)


TAU = Path(__file__).parent / "data" / "tau_bench_airline_sample.json"


def test_tau_bench_file_of_runs_imports_and_attributes(
    collector: BackgroundServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real τ-bench trajectories (a file of runs): one conversation and one trace per run,
    each blamed on a speaker of its own run, the same from the file and from the store."""
    convs = read_logs(TAU)
    assert [c.source_id for c in convs] == ["15/0", "41/2", "38/2"]
    first = convs[0]
    assert first.question.startswith("Your user id is") or "james_patel_9828" in first.question
    assert first.tool_speakers == {
        "get_reservation_details",
        "update_reservation_flights",
        "cancel_reservation",
    }
    errors = [t.index for t in first.turns if t.kind == "tool" and "Error" in t.content]
    assert errors == [17]
    assert BASELINES["first-error-receiver"](first) == ("assistant", 16)
    with pytest.raises(SystemExit) as done:
        main(["attribute", "--json", "--method", METHOD, str(TAU)])
    assert done.value.code == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["file"] for o in out] == [f"{TAU}#{k}" for k in range(3)]
    for o, conv in zip(out, convs, strict=True):
        assert o["component"] in conv.speakers() and o["component"] not in conv.tool_speakers
    with pytest.raises(SystemExit) as done:  # import, then each run's findings
        main(["attribute", "--json", "--method", METHOD, "--collector", collector.url, str(TAU)])
    assert done.value.code == 0
    online = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(o["component"], o["step"]) for o in online] == [
        (o["component"], o["step"]) for o in out
    ]
    [p] = import_files([TAU], collector=collector.url)
    assert p.format == "tool-use" and len(p.trace_ids) == 3
    for conv, tid, n in zip(convs, p.trace_ids, p.trace_spans, strict=True):
        stored = conversation_from_trace(wait_for_trace(collector.url, tid, n))
        offline, online = attribute(conv, method=METHOD), attribute(stored, method=METHOD)
        assert (online.component, online.step) == (offline.component, offline.step)


def test_evaluate_shipped_scores_new_logs_apart_from_those_it_was_fitted_on(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--evaluate --shipped`` fits nothing; a log the shipped weights were fitted on is
    never reported as held out."""
    d = tmp_path / "new"
    d.mkdir()
    (d / "1.json").write_text(json.dumps(_failed_code("Coder_Expert")))
    (d / "2.json").write_bytes((dataset / "hand_crafted_dev" / "5.json").read_bytes())
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["attribute", "--evaluate", "--shipped", "--json", str(d)])
    assert done.value.code == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    ranker = {r["protocol"]: r for r in rows if r.get("method") == METHOD}
    assert {p: r["n"] for p, r in ranker.items()} == {
        "shipped model, not fitted on these": 1,
        "fit-on-dev (NOT held out)": 1,
    }
    assert rows[-1] == {"default": shipped().default}
    with pytest.raises(SystemExit):
        main(["attribute", "--evaluate", "--shipped", str(dataset / "hand_crafted_dev" / "5.json")])
    assert "no held-out logs" in capsys.readouterr().out


MAGENTIC: dict[str, Any] = {
    "question": "How tall is the tower?",
    "history": [
        {"role": "human", "content": "How tall is the tower?"},
        {"role": "Lead (thought)", "content": "Initial plan:\n1. ask the browser"},
        {"role": "Lead (-> Browser)", "content": "Look up the tower's height."},
        {"role": "Browser", "content": "The page says 312 metres, assuming the antenna."},
        {"role": "Lead (thought)", "content": 'Updated Ledger: {"is_in_loop": {"answer": false}}'},
        {"role": "Lead (termination condition)", "content": "FINAL ANSWER: 312"},
    ],
    "mistake_agent": "Browser",
    "mistake_step": "3",
}


def _magentic(change: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(MAGENTIC))
    change(doc)
    return doc


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.pop("question"),
        lambda d: d.update(question=None, mistake_step=3),
        lambda d: d["history"][3].update(content=None),
        lambda d: d["history"][4].update(content="Updated Ledger: [1, 2]"),
        lambda d: d["history"][4].update(
            content='Updated Ledger: {"is_in_loop": {"answer": "no"}}'
        ),
        lambda d: d["history"][1].update(role="Lead (-> )"),
        lambda d: d["history"][1].update(role="(thought)"),
        lambda d: d.update(mistake_agent="Nobody", mistake_step="99"),
        lambda d: d.update(history=d["history"][:1]),
    ],
    ids=[
        "no-question",
        "int-step",
        "null-content",
        "ledger-not-object",
        "ledger-not-bool",
        "empty-target",
        "no-speaker-name",
        "label-outside-log",
        "task-only",
    ],
)
def test_magentic_log_shapes_attribute_without_crashing(change: Any, tmp_path: Path) -> None:
    """Logs of the Magentic-One shape with other agent names, missing or odd fields: every
    method answers with a speaker of the log, and the evaluation scores them (no crash)."""
    doc = _magentic(change)
    [conv] = parse_logs(json.dumps(doc).encode(), "m.json")
    for method in (None, METHOD, *BASELINES):
        a = attribute(conv, method=method)
        assert a.component in conv.speakers() and any(t.index == a.step for t in conv.turns)
    (tmp_path / "m.json").write_text(json.dumps(doc))
    scores = score_shipped(load([tmp_path]), shipped().model)
    assert {s.n for s in scores} == {1}


def test_renamed_magentic_roles_are_inferred_from_behaviour() -> None:
    """No role is keyed on a name: whoever posts the plan and dispatches is the plan owner."""
    conv = _conv(MAGENTIC)
    assert [(t.speaker, t.kind) for t in conv.turns][1:4] == [
        ("Lead", "plan"),
        ("Lead", "dispatch"),
        ("Browser", "reply"),
    ]
    assert BASELINES["planner-first-turn"](conv) == ("Lead", 1)
    cands = {c.step: c.values for c in candidates(conv)}
    assert cands[1]["by_plan_owner"] == 1 and cands[3]["hedge"] == 1


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d["history"][3].update(content=[{"type": "text"}]), r"history\[3\]\.content"),
        (lambda d: d["history"][3].pop("content"), r"history\[3\]\.content"),
        (lambda d: d["history"][3].update(role=None), r"history\[3\]: has neither"),
        (lambda d: d["history"].__setitem__(3, "text"), r"history\[3\]"),
        (lambda d: d.update(history=[]), "history: is empty"),
        (lambda d: d.update(mistake_step="third"), "mistake_step: is not an integer"),
    ],
)
def test_broken_magentic_log_is_a_clear_cli_error(
    change: Any, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "broken.json"
    f.write_text(json.dumps(_magentic(change)))
    for args in ([str(f)], ["--evaluate", "--shipped", str(f)]):
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main(["attribute", *args])
        assert done.value.code != 0
        err = capsys.readouterr().err
        assert err.startswith("planscope: error: ") and str(f) in err
        assert re.search(reason, err), err


def test_labels_are_matched_to_speakers_and_impossible_ones_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A label written as a role (``browser (-> x)``) is the speaker ``Browser``; a label no
    method can get right is scored as a miss and named on stderr, not silently."""
    (tmp_path / "1.json").write_text(
        json.dumps(_magentic(lambda d: d.update(mistake_agent="browser (reply)")))
    )
    (tmp_path / "2.json").write_text(
        json.dumps(_magentic(lambda d: d.update(mistake_agent="Nobody", mistake_step="99")))
    )
    logs = load([tmp_path])
    assert [g.agent for g in logs] == ["Browser", "Nobody"] and logs[0].y is not None
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["attribute", "--evaluate", "--shipped", str(tmp_path)])
    assert done.value.code == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"planscope: warning: {tmp_path / '2.json'}: the label's agent 'Nobody' is not a speaker "
        "of the log (scored as a miss)",
        f"planscope: warning: {tmp_path / '2.json'}: the label's step 99 is not in the history "
        "(scored as a miss)",
    ]
