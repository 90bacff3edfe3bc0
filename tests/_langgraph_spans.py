"""A LangGraph plan-and-execute graph's spans as OpenInference's LangChain instrumentor records
them, written by hand with the OTel SDK (no ``planscope.*`` attribute): node visits, model calls
and the executor's ReAct sub-graph. Shared by the tests that store such traces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry.trace import Status, StatusCode, Tracer


def kind(span_kind: str, **attrs: str) -> dict[str, str]:
    """OpenInference attributes of a span of ``span_kind`` (CHAIN, LLM, TOOL)."""
    return {"openinference.span.kind": span_kind, **attrs}


@contextmanager
def node(tracer: Tracer, name: str) -> Iterator[None]:
    """A LangGraph node visit as OpenInference records it."""
    metadata = json.dumps({"langgraph_node": name})
    with tracer.start_as_current_span(name, attributes=kind("CHAIN", metadata=metadata)):
        yield


def llm(tracer: Tracer, asked: str, answered: str) -> None:
    """A chat model call asked ``asked`` that answered ``answered``."""
    attrs = kind(
        "LLM",
        **{
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": asked,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": answered,
            "output.value": answered,
        },
    )
    with tracer.start_as_current_span("ChatOpenAI", attributes=attrs):
        pass


@dataclass(frozen=True)
class Executor:
    """What the executor's tool call is given and how its attempt answers."""

    arguments: str
    error: str
    failed_answer: str
    done_answer: str


def execute(tracer: Tracer, executor: Executor, plan: list[str], tool: str, failed: bool) -> None:
    """The executor node: a ReAct graph told the whole plan, then its first step again."""
    listed = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(plan))
    told = f"Plan:\n{listed}\n\nNow carry out: {plan[0]}"
    with (
        node(tracer, "agent"),
        tracer.start_as_current_span("LangGraph", attributes=kind("CHAIN")),
    ):
        with node(tracer, "agent"):
            llm(tracer, told, "")
        with node(tracer, "tools"):
            attrs = kind("TOOL", **{"tool.name": tool, "input.value": executor.arguments})
            with tracer.start_as_current_span(tool, attributes=attrs) as call:
                if failed:
                    call.set_status(Status(StatusCode.ERROR, executor.error))
        with node(tracer, "agent"):
            llm(tracer, told, executor.failed_answer if failed else executor.done_answer)
