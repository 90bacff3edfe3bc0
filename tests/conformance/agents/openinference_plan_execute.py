"""LangGraph's plan-and-execute pattern as its tutorial writes it, traced by OpenInference's
LangChain instrumentor: a ``planner`` node asks ``ChatOpenAI.with_structured_output(Plan)`` (a
typed plan: langchain-openai's JSON-schema ``response_format``), then an ``execute`` node
visit per step hands the step to a prebuilt ReAct agent (``create_react_agent``: its own graph
of ``agent`` and ``tools`` nodes, nested in the visit; a tool's error goes back to the model).
The graph's structure is LangGraph's, not the suite's: the executor's work sits two graphs deep.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from ..fake_openai import MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    Plan,
    lookup_order,
    make_issue_refund,
    step_prompt,
)


class State(TypedDict, total=False):
    objective: str
    plan: list[dict[str, str]]
    done: list[str]
    failed: list[str]


def build(base_url: str, scenario: str) -> Any:
    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test")  # type: ignore[arg-type]
    planner_llm = llm.with_structured_output(Plan)
    tools = [tool(lookup_order), tool("issue_refund")(make_issue_refund(scenario))]
    # a ToolNode that hands a tool's error back to the model (the default re-raises it)
    tool_node = ToolNode(tools, handle_tool_errors=True)
    executor = create_react_agent(llm, tool_node, prompt=EXECUTOR_PROMPT)

    def planner(state: State) -> State:
        plan = planner_llm.invoke([SystemMessage(PLANNER_PROMPT), HumanMessage(state["objective"])])
        assert isinstance(plan, Plan), plan
        return {"plan": [s.model_dump() for s in plan.steps], "done": [], "failed": []}

    def execute(state: State) -> State:
        step = state["plan"][len(state["done"])]
        result = executor.invoke({"messages": [HumanMessage(step_prompt(step))]})
        gave_up = str(result["messages"][-1].content).startswith("giving up")
        failed = state["failed"] + ([step["id"]] if gave_up else [])
        return {"done": [*state["done"], step["id"]], "failed": failed}

    def more(state: State) -> str:
        return "execute" if len(state["done"]) < len(state["plan"]) else END

    graph = StateGraph(State)
    graph.add_node("planner", planner)
    graph.add_node("execute", execute)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "execute")
    graph.add_conditional_edges("execute", more)
    return graph.compile()


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    LangChainInstrumentor().instrument(tracer_provider=provider)
    for scenario in scenarios:
        with mark(scenario):
            build(base_url, scenario).invoke({"objective": OBJECTIVE}, {"recursion_limit": 50})
