"""One long agent trace of ``n`` step attempts, as :func:`planscope_collector.observed.bind`
reads it: what a long-running agent (thousands of tool calls) sends. Shapes:

* ``react``: one agent; each attempt an LLM call (asked and answering a few words) and a tool
  call with JSON arguments: plan-less;
* ``bare``: four agents taking turns, no LLM call recording what it was asked; each attempt
  answers a few words itself and calls a tool: plan-less;
* ``crew``: three agents taking turns, like ``react``: their answers name words that the other
  agents' later attempts carry, so plans are read from them (many re-plans).

Words are drawn from a small vocabulary with a seeded generator: the same trace every time.
"""

from __future__ import annotations

import json
import random

from planscope_collector.observed import SpanNode

SHAPES = {"react": ("agent",), "bare": ("a", "b", "c", "d"), "crew": ("lead", "writer", "critic")}
WORDS = [f"w{i}" for i in range(300)] + ["the", "call", "with", "result", "search", "order"]


def long_trace(n: int, shape: str, seed: int = 1) -> list[SpanNode]:
    """The spans of one trace of ``n`` attempts of this shape, under one unclassified root."""
    rng = random.Random(seed)
    agents = SHAPES[shape]
    spans = [SpanNode("root", "", "other", "app")]

    def words(k: int) -> str:
        return " ".join(rng.choices(WORDS, k=k))

    for i in range(n):
        agent, start, a = agents[i % len(agents)], 10 * i + 1, f"a{i}"
        said = words(8) if shape == "bare" else ""
        spans.append(
            SpanNode(
                a,
                "root",
                "step",
                agent,
                step_name=agent,
                start_ns=start,
                duration_ns=5,
                answer=said,
            )
        )
        if shape != "bare":
            spans.append(
                SpanNode(
                    f"l{i}",
                    a,
                    "llm",
                    "chat",
                    start_ns=start + 1,
                    duration_ns=1,
                    request="Task: " + words(10),
                    answer="I will " + words(12),
                )
            )
        arguments = json.dumps({"query": rng.choice(WORDS), "n": i})
        tool = rng.choice(["search", "fetch"])
        spans.append(
            SpanNode(f"t{i}", a, "tool", tool, tool=tool, start_ns=start + 3, answer=arguments)
        )
    return spans
