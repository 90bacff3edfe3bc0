"""A LangGraph planner-executor graph (langchain-openai's ChatOpenAI on our fake server)
traced by OpenInference's LangChain instrumentor. Nodes: ``planner`` (one LLM call, the plan),
``executor`` (the LLM with tools, for the current step), ``tools`` (LangGraph's ToolNode, which
hands a tool's error back to the model) and ``advance`` (next step, or the end)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.prebuilt import ToolNode
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from ..fake_openai import MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    lookup_order,
    make_issue_refund,
    parse_plan,
    step_prompt,
)


class State(TypedDict, total=False):
    objective: str
    plan: list[dict[str, str]]
    current: int
    messages: Annotated[list[AnyMessage], add_messages]
    failed: list[str]


def build(base_url: str, scenario: str) -> Any:
    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test")  # type: ignore[arg-type]
    tools = [tool(lookup_order), tool("issue_refund")(make_issue_refund(scenario))]
    executor_llm = llm.bind_tools(tools)

    def step_messages(step: dict[str, str]) -> list[AnyMessage]:
        return [SystemMessage(EXECUTOR_PROMPT), HumanMessage(step_prompt(step))]

    def planner(state: State) -> State:
        answer = llm.invoke([SystemMessage(PLANNER_PROMPT), HumanMessage(state["objective"])])
        plan = parse_plan(str(answer.content))
        return {"plan": plan, "current": 0, "failed": [], "messages": step_messages(plan[0])}

    def executor(state: State) -> State:
        return {"messages": [executor_llm.invoke(state["messages"])]}

    def route(state: State) -> Literal["tools", "advance"]:
        last = state["messages"][-1]
        return "tools" if getattr(last, "tool_calls", None) else "advance"

    def advance(state: State) -> State:
        step = state["plan"][state["current"]]
        failed = list(state["failed"])
        if str(state["messages"][-1].content).startswith("giving up"):
            failed.append(step["id"])
        nxt = state["current"] + 1
        update: State = {"current": nxt, "failed": failed}
        if nxt < len(state["plan"]):
            reset: list[AnyMessage] = [RemoveMessage(id=REMOVE_ALL_MESSAGES)]
            update["messages"] = reset + step_messages(state["plan"][nxt])
        return update

    def more(state: State) -> Literal["executor", "__end__"]:
        return "executor" if state["current"] < len(state["plan"]) else END

    graph = StateGraph(State)
    graph.add_node("planner", planner)
    graph.add_node("executor", executor)
    graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))
    graph.add_node("advance", advance)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "executor")
    graph.add_conditional_edges("executor", route)
    graph.add_edge("tools", "executor")
    graph.add_conditional_edges("advance", more)
    return graph.compile()


def invoke(base_url: str, scenarios: list[str], mark: Any) -> None:
    """The graph through each scenario (whichever instrumentor traces it)."""
    for scenario in scenarios:
        with mark(scenario):
            build(base_url, scenario).invoke({"objective": OBJECTIVE}, {"recursion_limit": 50})


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    LangChainInstrumentor().instrument(tracer_provider=provider)
    invoke(base_url, scenarios, mark)
