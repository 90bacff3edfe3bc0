"""Observed structure that needs more than one span: which executor-level span did which step of
an observed plan, and which grouping span is the run.

The span model (migrations 0011/0012) classifies each span alone, at ingest. Some structure is
only visible across spans of a trace, so it is derived here, at read time, by one function that
the trace API and the analyzer's loader both call (:func:`bind`). Every rule reads what the trace
shows, never a span's name as a plan; everything it derives is *inferred* structure (the
analyzers never report plan drift, bad plan JSON or context starvation about it):

* **invocations**: in a trace where the span model found no step or plan, the unclassified
  spans right under an unclassified root or a run it inferred that enclose LLM or tool calls (a
  framework's calls the application made: DSPy modules under OpenInference, CHAIN spans under
  an agent run) are inferred step attempts named as their spans;
* **grouping run**: a trace without a run whose root span is unclassified and has an inferred
  step (an agent invocation) directly under it, else under plain spans under it (a
  framework's graph span: OpenInference's ``LangGraph`` CHAIN under the app's span per job;
  an SDK's trace and task spans: Logfire's openai-agents ``OpenAI Agents trace`` and
  ``Task: Agent workflow`` over each agent run): that root is the run (an application span
  that groups several agent runs, e.g. a planner agent and an executor agent);
* **tool names**: a tool span named after its call method (``search.__call__``, DSPy's tool
  spans under OpenInference carry no ``tool.name``) is a call of that tool;
* **component calls**: in a trace where the span model found no tool call, an unclassified
  leaf span inside an inferred step attempt that started after one of that attempt's LLM calls
  ended is work the model asked for, a call of the tool its span names (a framework's
  component given to an agent as a tool: Haystack's ``VenueSearch.run`` under OpenInference, a
  CHAIN span with no tool attribute; a prompt builder before the first LLM call is not);
* **containers**: an observed plan span that encloses another observed plan span (its parent,
  or an ancestor through any spans) is a container showing the same plan (a graph's final state
  over its planner node's output, a node over its LLM call, also through a chain between them
  such as LangChain's ``with_structured_output`` sequence): the innermost plan counts, the
  container does not;
* **planner**: a step attempt that encloses the span of an observed plan, or is inside it (an
  agent run as a tool, :func:`_agent_tools`), is the planner's work, not a step of that plan;
* **plans stated as numbered evidence or as rules**, in a trace with no plan the span model
  read, none declared and no workflow plan: a planner's answer of ReWOO evidence lines (``#E1 =
  Tool[input]``), LLMCompiler task lines (``1. tool(input)`` referring to ``$1``) or Makefile
  rules (``step: earlier steps  ## goal`` over a tab-indented ``tool key=value`` recipe,
  ``$(step)`` an earlier result) or a shell script (``step = tool --key value  # goal``,
  ``$step`` an earlier result, a revision's ``export step=result`` a done step) or LaTeX-like
  macros (the macro that recurs with an id and a ``key=value`` argument a step, ``\\ref{step}``
  an earlier result, a revision's ``\\done{step}{result}`` a done step: :func:`_macros`) or
  lines of a step each (``S2 ship ... courier parcel=^S1 to="Oslo"``: an id and the step's
  name, its call a tool with ``key=value`` arguments, a sign before another line's id that
  line's result, a line with no call a done step: :func:`_step_lines`) or a Python list of
  calls (``[pick(order=7), ship(parcel=pick)]``, parsed with ``ast`` and never evaluated, a
  bare name of an earlier call its result: :func:`_calllist.steps`) or HCL blocks (a labelled
  block a step, of the type a traversal such as ``step.fetch.result`` or Terraform's
  ``<type>.<name>.<attr>`` refers to, ``tool`` / ``args`` / ``depends_on`` attributes, never
  evaluated: :func:`_hcl.steps`) or a Handlebars template of function calls (Semantic Kernel's
  HandlebarsPlanner: ``{{set "var" (Plugin-function key=value)}}`` a step, ``var.field`` an
  earlier result, a ``{{!-- Step n: ... --}}`` comment its goal: :func:`_handlebars.steps`), a
  re-plan of the same planner with one or more
  (:func:`evidence_plans`; published formats whose syntax says what the steps are: no
  structure needs reading);
* **plans read from structure**, in such a trace with no such answer: a list of mappings in a
  planner's answer, JSON (also on lines of its own inside chat text, a fenced block) or YAML (a
  DSPy output field), or the rows of a markdown table, or the items of a markdown bullet outline
  (``- step: goal (after: a)`` over ``- key: value`` sub-bullets), whose ids later executor
  attempts carry
  (:func:`structured_plans`; a revision that repeats done items keeps their ids; a step span
  above executor attempts, a graph node that ran an agent on its task, answers a report of that
  work, never a plan); else
  (:func:`read_plans`) the names a planner's answer (an LLM call's, an inferred agent run's,
  after the arguments of the tool calls the run made) lists that executor attempts started after
  it carry (what they were asked and the words of their own names: an app's ``app.step pick``
  told ``run wms --order 7``; when no attempt records what it was asked, their own names, the
  words of the app's plain span right above them (``task pick attempt 2``: :func:`_app_words`)
  and the tools they called, a tool with a namespace also by its bare name; a word every
  attempt carries names no step), in the answer's order (a name stands at the first line
  naming it beside a tool its attempts called: :func:`_item_at`), whatever
  its syntax (a markdown list, arrow lines, JSON, prose, one tool call per step); steps found by
  the tools their numbered items name are named by the items' labels (``Step 2 — pick:``);
* **step binding**, for each other inferred step attempt, against the latest observed plan that
  started before it, first rule that applies: its step name is a plan step's id; else an
  application's attribute on its span names one (:func:`app_step`: a key ending in ``.step``
  or ``step_id``, as Strands Agents copies an agent's ``trace_attributes``); else its
  step name names exactly one plan step's id as a whole word (a span named after its step in
  words: ``workflow step: 'fetch'``, ``Task: fetch``), else its span's name does when its step
  name names none (an agent role every step shares); else the tools
  called inside it (nearest enclosing step) name exactly one plan step's ``tool``; when they
  name several (steps sharing a tool) or none (no call, or of tools no step names), what its
  LLM calls were asked (:func:`user_request`) names exactly one of those steps' ids (an
  executor told "Step pull_current: ..."; a graph's executor node; ids as whole words; of
  steps that are sentences, when it names several, the one it names most often, if one: an
  executor told the whole plan and then its task, :func:`_most_named`); an
  attempt whose tools no plan names, when the attempt just before it (same parent) bound (a
  graph's tool node running the poll that step's LLM turn asked for). An unclassified span (not
  inside a step) named exactly like a plan step's id is that step's attempt too. An attempt
  none of these bind keeps its own step name;
* **plans of sentences** (a plan whose steps are bare strings: each step's id is its text,
  migration 0044): a re-plan's step that is an earlier version's step rewritten (results
  written in, a value re-catalogued) is that step, named by its id as first written
  (:func:`step_lineage`, :attr:`Binding.lineage`), so its attempts across re-plans are one
  step's;
* **status**: an inferred attempt whose span is not an error but whose last tool call failed
  failed (the executor gave up after its tool failed, e.g. a model that stops calling it);
  when the observed plans name tools, its last call of those tools decides (a framework's own
  tool called after them, such as smolagents' ``final_answer``, is not the step's work);
* **wrappers**: an inferred step span that has inferred step spans under it (nearest enclosing
  step, through unclassified spans) and no tool or LLM call of its own only wraps those
  attempts (OpenLLMetry's LangGraph ``workflow`` span over the node visits, a sub-graph's node
  over its own nodes): it is not an attempt; its work is theirs;
* **node visits**: consecutive sibling attempts (the previous under the same parent: parallel
  branches interleave their visits) bound to one step, one only calling the LLM and
  the other only tools (a graph's executor and tool nodes taking turns until the app's own node
  runs), are one attempt, the first visit's; the others are treated as wrappers (their work is
  that attempt's);
* **attempts** of one step are numbered in start order; tool and LLM calls belong to the
  nearest enclosing step attempt;
* **failed for good**: in a trace whose run is inferred (a grouping span, a framework's
  root), the first attempt (by start)
  that is the last attempt of its step and failed, with no observed plan started after it (a
  re-plan takes over), is why the run failed (its root span may say OK: an SDK that never
  fails its trace);
* **workflow plan**: in a trace with no plan of its own (none declared, none observed), the
  child tasks of a workflow span (GenAI ``invoke_workflow``, a Traceloop ``workflow``: the
  inferred step spans right under it) are its plan: one step per task name, in start order,
  each depending on the sibling tasks its span links to (OTel span links; none: a list).
* **flat workflows** (:func:`_flat_turns`): a workflow that runs each of its steps as a span
  right under it (OpenLLMetry's LlamaIndex ``AgentWorkflow``: the model's turn, then a
  ``call_tool`` step beside it, migration 0049) — a tool call right under an inferred step (not
  a run), beside inferred steps, is the work of the latest step before it that called the model
  (the turn that asked for it); the workflow's steps that call nothing (setup, parsing, a model
  call's preparation, the tool's own span) are not attempts and answer nothing; its step spans'
  common name names no agent; a turn is bound by the step its tool calls' arguments name (a
  handoff or a report naming it) when its tools name none; consecutive turns bound to one step
  are one attempt (the call handed over, its tool calls, the report). Attempts that were all
  asked the same (a workflow's whole conversation) carry the tools they called, as attempts
  that record nothing they were asked;
* **logs** (Logfire's log spans, :func:`log_level`): events of the span they were logged in,
  not work (no attempt, no tool call); one at error level fails that span, its text the span's
  message (:func:`logged_failures`);
* **tool calls said by events** (given the trace's events): in a trace of another convention
  with no tool span, the tool calls only GenAI events say (:func:`event_calls`) are tool spans
  under the span that asked;
* **agent roots** (given the runs' agents): a trace whose only runs are several inferred agent
  runs, each a root, is one run no span stands for whose attempts they are
  (:func:`agent_roots`).
* **app step and plan spans**: in a trace where the span model found no step or plan, an app's
  plain span named ``<prefix>.step <id>`` (or carrying ``<prefix>.step.id``) is a step
  attempt wherever it is (under a framework's own span with no call the span model knows:
  Griptape's ``main``), the root above it the run; its ``<prefix>.args`` /
  ``<prefix>.result`` are its first call's arguments and its last call's result when its
  calls record none (:func:`step_io`); a plain span named
  ``<prefix>.plan`` answers its ``<prefix>.plan.text``, read by the format and structure
  readers (BibTeX-like entries among them: ``_bibtex``);
* **AutoGen's runtime** (``_autogen``): an agent turn inside the runtime's message spans is
  an attempt of the span above them (the application's root: the team's run), asked the last
  message the runtime delivered before it (:func:`answer` of a ``process`` span) and answering
  the first delivered after it began (a planner agent's plan, read as any agent run's); the tool
  calls its agent reported in those messages give its calls their arguments and results
  (:attr:`Binding.call_io`); in a trace with no other plan, the bullet plan of a delivered
  message (a Magentic-One task ledger) whose one not-done item a later turn was asked about is
  a read plan, each later such message a re-plan.

* **traced functions** (``_burr``: Burr's ``@trace()`` spans, their arguments and ``return``
  read as :attr:`SpanNode.io`): a leaf that gave back a chat message is an LLM call, one that
  gave back a structured-output plan (no model call beside it) an LLM call answering it, the
  others calls (*component calls*); an unclassified span beside the invocations that failed
  with no call in it (an action that raised) is an attempt; a planner function called again
  from another action answers as that function (a re-plan). In a structured plan, arguments
  given as name / value pairs are arguments and a field naming an earlier step a dependency;
* **agent runs as tools** (:func:`_agent_tools`): a tool call during which an inferred agent
  run started and ended, traced beside it (the OpenAI Agents SDK's ``Agent.as_tool`` under
  OpenLLMetry: neither span under the other), whose result is a list of mappings, is an LLM
  call asked its arguments and answering its result (the agent's structured output, the plan
  readers' planner its caller); the agent's run is put under it, its work: no executor's
  attempt for the plan readers, the planner's when the call answered a plan;
* **errors returned as values** (``_returned``): such a call whose status is not ERROR but
  whose result is an error envelope (MCP's ``isError``, Anthropic's ``{"type": "error", ...}``,
  a bare ``{"error": ...}``) failed (:attr:`Binding.returned`);
* **errors handed to the model** (``_conversation.function_results``): a tool span that ended
  OK whose result the next LLM call beside it was handed as an error (OpenInference's
  autogen-agentchat instrumentor: ``llm.input_messages.{i}.function.{j}`` with ``is_error``,
  the tool's own span left OK) failed, its message that result (:attr:`Binding.returned`);
* **tool calls said only by the conversation** (``_conversation``): in a trace with no tool
  span (LiteLLM's own OpenTelemetry, an OpenAI or Anthropic instrumentor used alone), the
  tool calls a model call answered and the ``tool`` messages a later request repeats, in
  every message convention the mapping reads, are tool calls under the model call that first
  shows them, once per conversation and call id, failed when their result is an error envelope
  (``_returned``), said only where no span beside the model calls may record them
  (:func:`conversation_tool_events`, read as :func:`event_calls` reads events); LiteLLM's
  ``raw_gen_ai_request`` under its ``litellm_request`` is that call again, not work; an
  unclassified span beside the invocations that failed with no call in it (an app's check that
  raised, as a Burr action) is an attempt.

Also derived at read time, from one span: **what an LLM call answered** (:func:`answer`: its
text, else, when it answered only by calling tools, the calls' arguments: a function-calling
planner's plan; for an inferred run, an attribute that is a task list, read as a plan stated
before the attempts it encloses); **what an LLM call was asked** (:func:`user_request`,
the user messages of its input in every convention the span model reads, then the arguments of
the conversation's latest handoff: ``_conversation.handed_over``; the analyzer takes a
failed run's planner prompt as its objective when the run declares none). SQL selects the
attributes it reads with :func:`user_request_sql`. Both also read what a span said only in
GenAI message events (Strands Agents' ``gen_ai.user.message``, ``gen_ai.choice``, a tool span's
``gen_ai.tool.message``: :func:`event_values_sql`, :func:`event_values`), where no attribute
says it, and Google ADK's own JSON (a ``call_llm``'s ``gcp.vertex.agent.llm_request``: the
agent's instruction and the user contents, :func:`_adk_request`; its ``llm_response``: the
text parts, else the function calls' arguments, :func:`_adk_response`; migration 0048 maps its
``agent_run [name]`` spans, tool arguments, results and error dicts).

>>> spans = [
...     SpanNode("r", "", "other", "app"),
...     SpanNode("p", "r", "step", "planner", step_name="planner"),
...     SpanNode("l", "p", "llm", "chat"),
...     SpanNode("e", "r", "step", "executor", step_name="executor", start_ns=2),
...     SpanNode("t", "e", "tool", "execute_tool pay", tool="pay", failed=True, start_ns=3),
... ]
>>> b = bind(spans, [ObservedStep("l", "pay-invoice", "pay", 0)])
>>> (b.run_span_id, b.steps["e"], b.failed, b.actions["t"])
('r', 'pay-invoice', frozenset({'e'}), 'e')
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shlex
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, pairwise
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit
from xml.etree import ElementTree

import yaml
from planscope import safejson
from planscope import semconv as A

from . import (
    _airflow,
    _bibtex,
    _bpmn,
    _burr,
    _calllist,
    _graphql,
    _handlebars,
    _hcl,
    _jenkinsfile,
    _nextflow,
)
from ._autogen import Delivery, bullet_plan, message_text, plan_objects, runtime_turns
from ._burr import call_sql as function_call_sql
from ._conversation import (
    CONVERSATION,
    HandedResult,
    conversation_calls_sql,
    conversation_events,
    conversation_sql,
    duplicate_call,
    flat_messages,
    function_calls_sql,
    function_results,
    function_results_sql,
    handed_over,
)
from ._readstep import ReadStep
from ._returned import returned_error

__all__ = [
    "APP_ARGUMENTS_KEY",
    "APP_RESULT_KEY",
    "NO_SPAN",
    "PLAN_READERS",
    "REWRITTEN",
    "AgentRoots",
    "Binding",
    "EventCall",
    "HandedResult",
    "ObservedStep",
    "ReadPlan",
    "SpanNode",
    "ToolEvent",
    "WorkflowPlan",
    "agent_roots",
    "answer",
    "answer_sql",
    "app_step",
    "bind",
    "conversation_calls_sql",
    "conversation_sql",
    "conversation_tool_events",
    "event_calls",
    "event_values",
    "event_values_sql",
    "evidence_plans",
    "function_call_sql",
    "function_calls_sql",
    "function_results",
    "function_results_sql",
    "log_level",
    "logged_failures",
    "read_plans",
    "reads_tool_events",
    "recorded_work",
    "step_io",
    "step_lineage",
    "structured_plans",
    "switch_off_plan_readers",
    "tool_event_sql",
    "user_request",
    "user_request_sql",
]

_MAX_DEPTH = 10_000
"""Parent chains longer than this are bad data (a cycle): the walk stops."""

PLAN_READERS = (
    "runtime",
    "evidence",
    "targets",
    "commands",
    "macros",
    "stanzas",
    "elements",
    "uri_lines",
    "gantt",
    "entries",
    "step_lines",
    "org",
    "call_lists",
    "hcl",
    "sections",
    "handlebars",
    "graphql",
    "jenkinsfile",
    "nextflow",
    "bpmn",
    "airflow",
    "textproto",
)
"""The format-specific plan readers :func:`bind` tries before reading a plan from structure, by
name: a runtime's bullet ledger (:func:`_runtime_plans`), ReWOO / LLMCompiler evidence lines
(:func:`_evidence_lines`), Makefile rules (:func:`_targets`), a shell script
(:func:`_commands`), LaTeX-like macros (:func:`_macros`), RFC 822 stanzas (:func:`_stanzas`),
XML elements (:func:`_elements`), URI lines (:func:`_uri_lines`), Mermaid gantt tasks
(:func:`_gantt_tasks`), BibTeX-like entries
(:func:`_entries`), lines of a step each (:func:`_step_lines`), Org-mode outlines
(:func:`_org_outlines`), a Python list of calls (:func:`_calllist.steps`), HCL blocks
(:func:`_hcl.steps`), markdown step sections (:func:`_sections`), a Handlebars template of
function calls (:func:`_handlebars.steps`), a GraphQL operation's top-level fields
(:func:`_graphql.steps`), a declarative Jenkinsfile's stages (:func:`_jenkinsfile.steps`), a
Nextflow DSL2 workflow block's process calls (:func:`_nextflow.steps`), a BPMN 2.0 process's
tasks (:func:`_bpmn.steps`), an Apache Airflow DAG file's tasks (:func:`_airflow.steps`), a
Protocol Buffers text-format message's repeated fields (:func:`_textprotos`)."""
_switched_off: set[str] = set()


def switch_off_plan_readers(names: Iterable[str]) -> None:
    """**For measurement only** (``benchmarks/detector_corpus.py --without-readers``;
    docs/analyzers.md, "Plans no reader was written for: leave one reader out"): from now on, in
    this process, :func:`bind` skips these format readers (:data:`PLAN_READERS`), so the plans
    they read reach only the generic path, as a new agent's plans would; no names switches them
    all back on. Nothing in production calls it.

    >>> switch_off_plan_readers(["macros"]); switch_off_plan_readers([])
    """
    off = set(names)
    if unknown := off - set(PLAN_READERS):
        raise ValueError(
            f"no plan reader named {', '.join(sorted(unknown))} "
            f"(the readers: {', '.join(PLAN_READERS)})"
        )
    _switched_off.clear()
    _switched_off.update(off)


def _on(reader: str) -> bool:
    """Whether a format reader is on (:func:`switch_off_plan_readers`)."""
    return reader not in _switched_off


@dataclass(frozen=True)
class SpanNode:
    """One span as the span model classified it (kind ``run`` / ``plan`` / ``step`` / ``tool``
    / ``llm`` / ``other``), with what binding reads: its step name (step spans), whether the
    span model inferred it, whether it failed, its tool name (tool spans) and its start; and
    what a grouping run reports of its root (status message, duration, service); whether it is
    a workflow span and the span ids it links to (a workflow plan's order); for an LLM call,
    what it was asked (:func:`user_request`; empty when not read); what it answered."""

    span_id: str
    parent_span_id: str
    kind: str
    name: str
    step_name: str = ""
    inferred: bool = True
    failed: bool = False
    tool: str = ""
    start_ns: int = 0
    message: str = ""
    duration_ns: int = 0
    service: str = ""
    workflow: bool = False
    links: tuple[str, ...] = ()
    request: str = ""
    answer: str = ""
    """What an LLM call or an inferred agent run answered, or what a tool call was called with
    (:func:`answer`; empty when not read): where a plan stated in no format the span model
    reads is looked for."""
    log_level: int = 0
    """A log span's level (:func:`log_level`; 0: not a log): an event of its parent, no work."""
    app_step: str = ""
    """The step an application's attribute copied onto an inferred agent run's span names
    (:func:`app_step`; empty when none, or not read)."""
    io: tuple[str, str] = ("", "")
    """What an app's step span recorded as its work's arguments and result (:func:`step_io`;
    empty when none, or not read)."""
    handed: tuple[HandedResult, ...] = ()
    """The tool results an LLM call was handed as its input's last function message (tool,
    whether an error, text: :func:`function_results`; empty when none is an error, or not
    read)."""


@dataclass(frozen=True)
class ObservedStep:
    """One step of an observed plan: the plan's span, the step's id, tool and position."""

    plan_span_id: str
    step_id: str
    tool: str
    position: int


@dataclass(frozen=True)
class WorkflowPlan:
    """The plan a workflow's child tasks show: its span, the task names in start order and, per
    task name, the task names it depends on (from its spans' links to sibling tasks)."""

    span_id: str
    steps: tuple[str, ...]
    depends_on: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadPlan:
    """A plan read from the trace's structure (:func:`read_plans`): the span whose answer
    states it, its steps (ids, the tool each names, in the answer's order) and the JSON array
    of step objects it stands for (``id``, ``tool``, ``args`` where the answer gives them)."""

    span_id: str
    steps: tuple[ObservedStep, ...]
    json: str


@dataclass(frozen=True)
class Binding:
    """What :func:`bind` derived for one trace (span ids throughout)."""

    run_span_id: str | None = None
    """The grouping root that is the trace's run (None when the trace has a run or none)."""
    containers: frozenset[str] = frozenset()
    """Observed plan spans that only contain another observed plan (not plans themselves)."""
    planners: frozenset[str] = frozenset()
    """Inferred step attempts that made an observed plan."""
    steps: dict[str, str] = field(default_factory=dict)
    """Inferred step attempt → the plan step it did (only attempts that bound)."""
    promoted: frozenset[str] = frozenset()
    """Unclassified spans that are step attempts: named after a plan step, or a framework's
    calls under the application's own span (:func:`bind`, *invocations*)."""
    failed: frozenset[str] = frozenset()
    """Inferred attempts that failed (span status error, or their last tool call failed)."""
    attempts: dict[str, int] = field(default_factory=dict)
    """Inferred attempt → its number among its step's attempts (start order, from 1)."""
    actions: dict[str, str] = field(default_factory=dict)
    """Tool / LLM span → the step attempt enclosing it."""
    wrappers: frozenset[str] = frozenset()
    """Inferred step spans that are not attempts themselves: they only wrap other inferred
    attempts (no tool or LLM call of their own), or are later node visits of one attempt, or
    are a team member's runs its team run delegated to (:func:`_delegated`: their work is the
    team run's attempt's)."""
    workflow_plan: WorkflowPlan | None = None
    """The plan a workflow's child tasks show, in a trace with no plan of its own."""
    read_plans: tuple[ReadPlan, ...] = ()
    """The plans read from structure (:func:`read_plans`), in a trace with no other plan."""
    failed_for_good: str | None = None
    """The attempt an inferred run failed at (a step's last attempt, failed, not re-planned)."""
    said: dict[str, str] = field(default_factory=dict)
    """Step attempt → the status message of its last failed call that says one (what the
    world said)."""
    given_up_reason: str = ""
    """Why the run failed at ``failed_for_good``: what its last failed call said, else the
    attempt's own status message."""
    asked: dict[str, str] = field(default_factory=dict)
    """Step attempt → what its LLM calls were asked (:func:`user_request`, each distinct request
    once, in start order, one per line; only attempts whose LLM calls carry a request)."""
    calls: dict[str, str] = field(default_factory=dict)
    """Unclassified spans that are tool calls (:func:`bind`, *component calls*) → the tool."""
    event_calls: tuple[EventCall, ...] = ()
    """The tool calls only GenAI events say (:func:`event_calls`; given ``events``)."""
    agent_roots: AgentRoots | None = None
    """The agent runs that are attempts of a run no span stands for (:func:`agent_roots`;
    given ``agents``)."""
    call_io: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Tool span → the arguments and result its agent reported in a runtime's messages (AutoGen's
    tool call events: its ``execute_tool`` spans record neither), the k-th call of a tool in a
    turn the k-th it reported."""
    returned: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Call span whose status is not ERROR but whose result is an error envelope, or was handed
    to the model as an error → the error's type (none for a handed one) and message
    (:func:`_function_calls`, ``_returned``; :func:`_handed_errors`): it failed."""
    lineage: dict[tuple[str, str], str] = field(default_factory=dict)
    """(plan span, step id) of a re-plan's step that rewrote an earlier version's step → that
    step's id as first written (:func:`step_lineage`; only steps whose id differs)."""

    def step_of(self, span_id: str, default: str) -> str:
        """The step id of an attempt: its bound plan step, else ``default``."""
        return self.steps.get(span_id, default)

    def typed_failures(self) -> dict[str, str]:
        """The calls :attr:`returned` fails that are not :attr:`calls` (a typed tool span whose
        result was handed to the model as an error), span id -> the error's message: what the
        run model, the trace page and the loader each fail.

        >>> b = Binding(returned={"t": ("", "rock"), "c": ("E", "x")}, calls={"c": "f"})
        >>> b.typed_failures()
        {'t': 'rock'}
        """
        return {c: message for c, (_, message) in self.returned.items() if c not in self.calls}

    def first_written(self, plan_span_id: str, step_id: str) -> str:
        """A plan step's id as first written: a re-plan's rewritten sentence is the earlier
        version's step (:attr:`lineage`), any other step keeps its id."""
        return self.lineage.get((plan_span_id, step_id), step_id)


def bind(
    spans: Iterable[SpanNode],
    plan_steps: Sequence[ObservedStep],
    *,
    events: Iterable[ToolEvent] | None = None,
    agents: Mapping[str, str] | None = None,
) -> Binding:
    """Derive the cross-span structure of one trace (module docstring), from its spans and the
    steps of its observed plans. Given its ``events``, first the tool calls only they say
    (:func:`event_calls`, when :func:`reads_tool_events`) are tool spans; given its runs'
    ``agents`` (by span id), then agent runs no span encloses (:func:`agent_roots`) are step
    attempts, each named after its agent, of a run no span stands for (:data:`NO_SPAN`). (The
    analyzer's loader applies both to its rows itself, before binding.)"""
    spans = list(spans)
    # a log is an event of the span it was logged in (an error-level one fails it), not work
    logged = logged_failures((s.parent_span_id, s.log_level, s.message) for s in spans)
    nodes: dict[str, SpanNode] = {}
    for s in spans:
        if s.log_level:
            continue
        if s.span_id in logged:
            s = replace(s, failed=True, message=s.message or logged[s.span_id])
        nodes[s.span_id] = replace(s, tool=_callable(s.tool)) if s.kind == A.KIND_TOOL else s
    # LiteLLM's raw copy of a model call is that call again, not work (_conversation)
    nodes = {
        k: n
        for k, n in nodes.items()
        if not duplicate_call(n.name, nodes.get(n.parent_span_id, _NONE).name)
    }
    if not nodes:
        return Binding()
    nodes, returned = _function_calls(nodes)
    nodes, flagged = _handed_errors(nodes)
    returned |= flagged
    nodes = _agent_tools(nodes)
    evented: tuple[EventCall, ...] = ()
    if events is not None and reads_tool_events(nodes.values()):
        # a conversation says its tool calls only where no span beside its model calls may
        # record them (an app's traced tool function: a component call)
        beside = {n.parent_span_id for n in nodes.values() if n.kind != A.KIND_LLM}
        evented = tuple(
            event_calls(e for e in events if e.attributes.get(CONVERSATION) not in beside)
        )
        nodes |= {c.span_id: c.node() for c in evented}
    roots = agent_roots(nodes.values(), agents) if agents is not None else None
    if roots is not None:
        for span_id, agent in zip(roots.attempts, roots.agents, strict=True):
            node = nodes[span_id]
            nodes[span_id] = replace(node, kind=A.KIND_STEP, step_name=agent, inferred=True)
        started = nodes[roots.attempts[0]].start_ns
        nodes[NO_SPAN] = SpanNode(NO_SPAN, "", A.KIND_RUN, "", start_ns=started)
    # AutoGen's runtime: a turn inside its message spans is the team's, asked the last message
    turns = runtime_turns(
        (n.span_id, n.parent_span_id, n.name, n.start_ns, _is_turn(n), n.answer)
        for n in nodes.values()
        if n.kind not in _TYPED or _is_turn(n)
    )
    for span_id, parent in turns.parents.items():
        nodes[span_id] = replace(nodes[span_id], parent_span_id=parent)
    for span_id, text in turns.asked.items():
        nodes[span_id] = replace(nodes[span_id], request=text)
    for span_id, text in turns.answered.items():
        if not nodes[span_id].answer:
            nodes[span_id] = replace(nodes[span_id], answer=text)
    children = _children(nodes)
    invoked = _invocations(nodes, children)
    for span_id in invoked:
        node = nodes[span_id]
        nodes[span_id] = replace(node, kind=A.KIND_STEP, inferred=True, step_name=node.name)
    if invoked:  # the lists hold the nodes as they were
        children = _children(nodes)
    components = _component_calls(nodes, children)
    for span_id, tool in components.items():
        nodes[span_id] = replace(nodes[span_id], kind=A.KIND_TOOL, tool=tool)
    # a team member's run its team run delegated to, when the team run is a step attempt, is
    # that attempt's work (its calls the attempt's), its name an agent's: no attempt of its own
    members = frozenset(_delegated(nodes, children))
    for span_id in members:
        nodes[span_id] = replace(nodes[span_id], kind=A.KIND_OTHER, step_name="")
    if members:
        children = _children(nodes)
    run_span = _grouping_run(nodes, children)
    # a workflow that runs each of its steps as a span right under it (OpenLLMetry's LlamaIndex
    # AgentWorkflow): a tool call beside the steps is the work of the turn that asked for it
    turn_of = _flat_turns(nodes, children)
    for span_id, turn in turn_of.items():
        nodes[span_id] = replace(nodes[span_id], parent_span_id=turn)
    flat = {nodes[t].parent_span_id for t in turn_of.values()}
    idle = _idle_steps(nodes, flat)
    if turn_of:
        children = _children(nodes)
        # its steps that call nothing themselves (setup, parsing, a model call's preparation)
        # record the workflow's events as their output: no agent's answer; and its step spans'
        # common name names no agent (whose turn it is: the plan readers' planner)
        for n in list(nodes.values()):
            if n.kind == A.KIND_STEP and n.inferred and n.parent_span_id in flat:
                nodes[n.span_id] = n = replace(n, step_name="")
            if n.span_id in idle and n.answer:
                nodes[n.span_id] = replace(n, answer="")

    plan_spans = {s.plan_span_id for s in plan_steps}
    containers = frozenset(a for p in plan_spans for a in _ancestors(nodes, p) if a in plan_spans)
    plans: dict[str, list[ObservedStep]] = {}
    for step in sorted(plan_steps, key=lambda s: s.position):
        if step.plan_span_id not in containers:
            plans.setdefault(step.plan_span_id, []).append(step)
    ordered_plans = sorted(plans, key=lambda p: _start(nodes, p))
    declared = any(n.kind == "plan" and not n.inferred for n in nodes.values())
    workflow_plan = None if plans or declared else _workflow_plan(nodes, children)

    def enclosing_step(span_id: str, promoted: frozenset[str] = frozenset()) -> str | None:
        current = nodes[span_id].parent_span_id if span_id in nodes else ""
        for _ in range(_MAX_DEPTH):
            node = nodes.get(current)
            if node is None:
                return None
            if node.kind == "step" or node.span_id in promoted:
                return node.span_id
            current = node.parent_span_id
        return None

    read: tuple[ReadPlan, ...] = ()
    if not plans and not declared and workflow_plan is None:
        reading = _said(nodes, enclosing_step)
        read = (
            (
                _on("runtime")
                and _runtime_plans(turns.deliveries, turns.asked, nodes, reading.called)
            )
            or _evidence_plans(reading)
            or _structured_plans(reading)
            or _read_plans(reading)
            or _handed_plans(reading)
        )
        for r in read:
            plans[r.span_id] = list(r.steps)
        plan_spans = set(plans)
        ordered_plans = sorted(plans, key=lambda p: _start(nodes, p))

    step_ids = {s.step_id for steps in plans.values() for s in steps}
    named = frozenset(
        s.span_id
        for s in nodes.values()
        if s.kind == "other" and s.name in step_ids and s.span_id != run_span
    )
    promoted = frozenset(s for s in named if enclosing_step(s, named) is None)
    actions = {
        s.span_id: owner
        for s in nodes.values()
        if s.kind in ("tool", "llm") and (owner := enclosing_step(s.span_id, promoted)) is not None
    }
    # a step span with inferred attempts under it and no tool or LLM call of its own only wraps
    # them (OpenLLMetry's LangGraph workflow span over the node visits): not an attempt; nor
    # is a flat workflow's step that does no work (``idle``, whose answers were dropped above)
    inferred_steps = [s for s in nodes.values() if s.kind == "step" and s.inferred]
    working = set(actions.values())
    wrappers = (
        idle
        | members
        | frozenset(
            owner
            for s in inferred_steps
            if (owner := enclosing_step(s.span_id, promoted)) is not None
            and nodes[owner].kind == "step"
            and nodes[owner].inferred
            and owner not in working
        )
    )
    attempts = [s for s in inferred_steps if s.span_id not in wrappers] + [
        nodes[s] for s in promoted
    ]
    planners = frozenset(
        owner
        for p in plan_spans
        for owner in [p if nodes.get(p, _NONE).kind == "step" else enclosing_step(p, promoted)]
        if owner is not None and nodes[owner].inferred and owner not in wrappers
    ) | frozenset(  # an agent run inside the model call that answered a plan (an agent tool)
        s.span_id
        for s in inferred_steps
        for p in _ancestors(nodes, s.span_id)
        if p in plan_spans and nodes[p].kind == A.KIND_LLM
    )
    requests: dict[str, dict[str, None]] = {}  # each distinct request once (every turn repeats it)
    for s in sorted(nodes.values(), key=lambda n: (n.start_ns, n.span_id)):
        if s.request and (owner := _asker(s) or enclosing_step(s.span_id, promoted)) is not None:
            requests.setdefault(owner, {})[s.request] = None
    asked = {owner: "\n".join(texts) for owner, texts in requests.items()}
    tools_in: dict[str, list[SpanNode]] = {}
    for span_id, owner in actions.items():
        if nodes[span_id].kind == "tool":
            tools_in.setdefault(owner, []).append(nodes[span_id])
    for calls in tools_in.values():
        calls.sort(key=lambda t: (t.start_ns, t.span_id))
    call_io = _reported(tools_in, turns.calls)
    for owner, calls in tools_in.items():
        # a framework that records no call's content (Griptape): the app's step span says what
        # its work started with (its first call) and ended with (its last call)
        arguments, result = nodes[owner].io
        if arguments or result:
            call_io.setdefault(calls[0].span_id, (arguments, "" if len(calls) > 1 else result))
            if len(calls) > 1:
                call_io.setdefault(calls[-1].span_id, ("", result))

    lineage = step_lineage([plans[p] for p in ordered_plans])
    # a planner's node visited again that answered no plan (a re-planner's final response): it
    # was asked the plan and its results, not a step of it
    replanning = {nodes[p].step_name for p in planners if nodes[p].kind == "step"} - {""}
    # the calls of the tools the plans name are the attempt's work; a framework's own tool
    # after them (a final-answer tool that hands back "giving up") does not make it succeed
    plan_tools = {s.tool for steps in plans.values() for s in steps if s.tool}

    wrapped: dict[str, SpanNode] = {}  # an agent run bound through the app's span around it

    def fails(a: SpanNode) -> bool:
        calls = tools_in.get(a.span_id, [])
        work = [t for t in calls if t.tool in plan_tools] or calls
        # the app's span around one agent run judges its answer: a run ends OK whatever it
        # answered (LlamaIndex's FunctionAgent.run), the app fails its own span when the answer
        # says the step failed
        wrap = wrapped.get(a.span_id)
        return a.failed or (bool(work) and work[-1].failed) or (wrap is not None and wrap.failed)

    bound: dict[str, str] = {}
    done: set[str] = set()  # the steps an attempt bound so far did
    # the attempt just before each under the same parent: parallel branches (a graph's `Send`s
    # to one node) interleave their node visits, each branch's still follow one another
    before_of = _sibling_before(attempts)
    llm_in = {owner for span_id, owner in actions.items() if nodes[span_id].kind == "llm"}
    for a in sorted(attempts, key=lambda a: (a.start_ns, a.span_id)):
        before = before_of.get(a.span_id)
        plan = _plan_before(ordered_plans, nodes, a.start_ns)
        if plan is None:
            continue
        steps = plans[plan]
        by_id = {s.step_id for s in steps}
        name = a.name if a.span_id in promoted else a.step_name
        found: str | None = None
        if name in by_id:
            found = name
        elif a.app_step in by_id:  # the app's attribute on its agent call names the step
            found = a.app_step
        # a span named after its step in words (``workflow step: 'fetch'``, ``Task: fetch``),
        # also when its step name is another (an agent's role every step shares); else an agent
        # run the app wraps in a plain span of its own per attempt named after its step in words
        # (``step fetch attempt 2``), when neither of the run's names says it (a framework's
        # autologged run is named after its class: ``ToolCallingAgent.run``)
        elif (
            len(in_name := [s for s in by_id if _names(name, s)]) == 1
            or (not in_name and len(in_name := [s for s in by_id if _names(a.name, s)]) == 1)
            or (
                not in_name
                and a.inferred
                and (wrap := _app_span(nodes, a.span_id)) is not None
                and wrap.span_id != run_span
                and len(in_name := [s for s in by_id if _names(wrap.name, s)]) == 1
                and wrapped.setdefault(a.span_id, wrap) is wrap
            )
        ):
            found = in_name[0]
        if found is not None:
            bound[a.span_id] = lineage.get((plan, found), found)
            continue
        if a.span_id in planners:
            continue
        used = {t.tool for t in tools_in.get(a.span_id, ()) if t.tool}
        planned = {s.step_id for s in steps if s.tool and s.tool in used}
        if len(planned) != 1 and used and a.parent_span_id in flat:
            # a flat workflow's turn (its request the workflow's whole state): what it called its
            # tools with names one step (a handoff or a report naming it)
            in_arguments = [
                s
                for s in sorted(planned or by_id)
                if any(_names(t.answer, s) for t in tools_in.get(a.span_id, ()))
            ]
            if len(in_arguments) == 1:
                planned = set(in_arguments)
        elif a.span_id in asked and len(planned) != 1 and a.step_name not in replanning:
            # no call of a tool one plan step names (none, or of a tool several steps share or
            # no step names): what its LLM was asked
            planned = {s for s in planned or by_id if _names(asked[a.span_id], s)}
            planned = _most_named(asked[a.span_id], planned)
            if len(planned - done) == 1:
                # the steps done that it names are results it was handed: the other is its own
                planned -= done
        if len(planned) == 1:
            (one,) = planned
            bound[a.span_id] = lineage.get((plan, one), one)
            if not fails(a):
                done.add(bound[a.span_id])
        elif (
            used
            and not planned
            and before is not None
            and before.span_id in bound
            and not (
                before.span_id in llm_in and before.span_id in tools_in and a.span_id not in llm_in
            )
        ):
            # a graph's tool node runs the calls of the attempt just before it, also of tools
            # no plan names (polling the job its step started); an attempt that called the
            # model and ran its tools itself has no tool node: a span after it only calling a
            # tool is the app's own check, one that asks the model too is the agent's next turn
            # on the step (a workflow's visit polling the job)
            bound[a.span_id] = bound[before.span_id]

    # a graph runs one attempt as several node visits (the LLM's turn, the tool node, the LLM's
    # next turn): consecutive sibling visits bound to one step, one only calling the LLM and
    # the other only tools, are one attempt, the first visit's
    def only(span_id: str) -> str:
        """What a visit calls when it calls only the LLM or only tools."""
        if (span_id in llm_in) == (span_id in tools_in):
            return ""
        return "llm" if span_id in llm_in else "tools"

    def fold(parts: Mapping[str, str]) -> None:
        """Give each visit's tool calls and requests to the attempt it is part of."""
        for visit, first in parts.items():
            tools_in.setdefault(first, []).extend(tools_in.pop(visit, ()))
            if visit in asked:
                lines = (asked.get(first, "") + "\n" + asked.pop(visit)).strip().split("\n")
                asked[first] = "\n".join(dict.fromkeys(lines))
        for calls in tools_in.values():
            calls.sort(key=lambda t: (t.start_ns, t.span_id))

    head: dict[str, str] = {}
    for a in sorted(attempts, key=lambda a: (a.start_ns, a.span_id)):
        if (before := before_of.get(a.span_id)) is None:
            continue
        x, y = before.span_id, a.span_id
        same_step = bound.get(y) is not None and bound.get(x) == bound[y]
        if same_step and {only(x), only(y)} == {"llm", "tools"}:
            head[y] = head.get(x, x)
        elif same_step and before.parent_span_id in flat:
            # a flat workflow's consecutive turns on one step (the call handed to an agent, its
            # tool calls, its report) are one attempt
            head[y] = head.get(x, x)
    if head:
        wrappers |= frozenset(head)
        attempts = [a for a in attempts if a.span_id not in head]
        actions = {span_id: head.get(owner, owner) for span_id, owner in actions.items()}
        fold(head)

    # a tool call that hands one plan step to a sub-agent (an argument of it names the step: a
    # deep agent's task tool, a lead's send-to-worker tool): the sub-agent's run under it is one
    # attempt of that step, its node visits (model turns, tool nodes, hooks) parts of it
    handed = _handed(nodes, plans, ordered_plans)
    part_of: dict[str, str] = {}  # attempt → the sub-agent run it is part of
    under: dict[str, list[SpanNode]] = {}
    for a in attempts if handed else ():
        call = next((u for u in _ancestors(nodes, a.span_id) if u in handed), None)
        if call is not None:
            under.setdefault(call, []).append(a)
    for call, parts in under.items():
        # the sub-agent's own span (a step right under the call) first
        parts.sort(key=lambda a: (a.parent_span_id != call, a.start_ns, a.span_id))
        run = parts[0].span_id
        plan = _plan_before(ordered_plans, nodes, nodes[call].start_ns) or ""
        bound[run] = lineage.get((plan, handed[call]), handed[call])
        part_of.update((a.span_id, run) for a in parts[1:])
    if part_of:
        wrappers |= frozenset(part_of)
        attempts = [a for a in attempts if a.span_id not in part_of]
        actions = {span_id: part_of.get(owner, owner) for span_id, owner in actions.items()}
        fold(part_of)

    failed = frozenset(a.span_id for a in attempts if fails(a))
    numbers: dict[str, int] = {}
    seen: dict[str, int] = {}
    last: dict[str, SpanNode] = {}
    for a in sorted(attempts, key=lambda a: (a.start_ns, a.span_id)):
        key = bound.get(a.span_id) or (a.name if a.span_id in promoted else a.step_name)
        seen[key] = numbers[a.span_id] = seen.get(key, 0) + 1
        last[key] = a
    inferred_run = run_span is not None or any(
        n.kind == "run" and n.inferred for n in nodes.values()
    )
    replanned = max((_start(nodes, p)[0] for p in plan_spans), default=0)
    given_up = sorted(
        (a.start_ns, a.span_id)
        for a in last.values()
        if a.span_id in failed and a.span_id not in planners and a.start_ns >= replanned
    )
    gave_up = given_up[0][1] if given_up and inferred_run else None
    said: dict[str, str] = {}  # in start order, so the last failed call's message wins
    for span_id, owner in sorted(actions.items(), key=lambda a: (nodes[a[0]].start_ns, a[0])):
        if nodes[span_id].failed and nodes[span_id].message:
            said[owner] = nodes[span_id].message
    for run, wrap in wrapped.items():  # what the app's failed span around a run said
        if wrap.failed and wrap.message and run in numbers:
            said.setdefault(run, wrap.message)
    return Binding(
        returned=returned,
        run_span_id=run_span,
        containers=containers,
        planners=planners,
        steps=bound,
        # a promoted span folded into another attempt (a visit, a sub-agent's part) is none
        promoted=frozenset(s for s in promoted | invoked if s in numbers),
        failed=failed,
        attempts=numbers,
        actions=actions,
        workflow_plan=workflow_plan,
        read_plans=read,
        wrappers=wrappers,
        failed_for_good=gave_up,
        said=said,
        given_up_reason=(said.get(gave_up) or nodes[gave_up].message) if gave_up else "",
        asked=asked,
        calls=components,
        event_calls=evented,
        agent_roots=roots,
        call_io=call_io,
        lineage=lineage,
    )


_NONE = SpanNode("", "", "", "")


def _handed(
    nodes: dict[str, SpanNode],
    plans: Mapping[str, Sequence[ObservedStep]],
    ordered_plans: Sequence[str],
) -> dict[str, str]:
    r"""The tool calls that hand one plan step to a sub-agent → that step: a call with spans
    under it (the sub-agent's run) one of whose arguments is, whole, the id of one step of the
    plan before it (``send_to_worker(item="pick", ...)``).

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("t", "", "tool", "execute_tool hand", tool="hand", start_ns=2,
    ...              answer='{"input_str": "{\'item\': \'pick\', \'how\': \'by hand\'}"}'),
    ...     SpanNode("w", "t", "step", "invoke_agent worker", step_name="worker", start_ns=3)]}
    >>> plans = {"p": [ObservedStep("p", "pick", "", 0), ObservedStep("p", "ship", "", 1)]}
    >>> _handed(nodes, plans, ["p"])
    {'t': 'pick'}
    """
    out: dict[str, str] = {}
    if not ordered_plans:
        return out
    over = {n.parent_span_id for n in nodes.values()}  # a hand-off encloses the sub-agent's run
    for n in nodes.values():
        if n.kind != A.KIND_TOOL or n.span_id not in over or not n.answer:
            continue
        plan = _plan_before(ordered_plans, nodes, n.start_ns)
        if plan is None:
            continue
        ids = {s.step_id for s in plans[plan]}
        named = {v for v in _argument_values(n.answer) if isinstance(v, str) and v in ids}
        if len(named) == 1:
            out[n.span_id] = named.pop()
    return out


def _argument_values(text: str) -> list[Any]:
    r"""The values a tool call's recorded arguments give by name: a JSON object's, or those of
    the ``input_str`` a LangChain callback records (the arguments as JSON or a Python literal).

    >>> _argument_values('{"input_str": "{\'item\': \'pick\', \'n\': 2}"}')
    ['pick', 2]
    """
    try:
        value = safejson.loads(text)
    except ValueError:
        return []
    if isinstance(value, dict) and isinstance(value.get("input_str"), str):
        try:
            value = safejson.loads_or_literal(value["input_str"])
        except ValueError:
            return []
    return list(value.values()) if isinstance(value, dict) else []


def _sibling_before(attempts: Iterable[SpanNode]) -> dict[str, SpanNode]:
    """The attempt that started just before each attempt under the same parent span (by span
    id; none for the first).

    >>> a, b, c = (SpanNode(i, p, "step", i, start_ns=t) for i, p, t in
    ...            [("a", "x", 1), ("b", "y", 2), ("c", "x", 3)])
    >>> {k: v.span_id for k, v in _sibling_before([c, b, a]).items()}
    {'c': 'a'}
    """
    last: dict[str, SpanNode] = {}
    out: dict[str, SpanNode] = {}
    for a in sorted(attempts, key=lambda a: (a.start_ns, a.span_id)):
        if (before := last.get(a.parent_span_id)) is not None:
            out[a.span_id] = before
        last[a.parent_span_id] = a
    return out


def _sentence(step_id: str) -> bool:
    """A step id that is a sentence (a plan of bare strings names a step by its text,
    migration 0044), not a name."""
    return any(c.isspace() for c in step_id)


def _most_named(text: str, steps: set[str]) -> set[str]:
    r"""Of the sentence steps ``text`` names, the one it names most often, when one is (an
    executor told the whole plan, then its own step again: the step it is to do); any other
    ``steps`` as they are. Only sentences are counted: an identifier a listing names again (a
    dependency, ``after fetch``) is no task named again.

    >>> plan = "1. Boil the water.\n2. Pour the tea.\nNow do: Pour the tea."
    >>> _most_named(plan, {"Boil the water.", "Pour the tea."})
    {'Pour the tea.'}
    >>> sorted(_most_named(plan.rsplit("\n", 1)[0], {"Boil the water.", "Pour the tea."}))
    ['Boil the water.', 'Pour the tea.']
    """
    sentences = {s for s in steps if _sentence(s)}
    if len(sentences) < 2 or len(sentences) < len(steps):
        return steps
    counts = {s: text.count(s) for s in sentences}
    most = max(counts.values())
    first = [s for s, n in counts.items() if n == most]
    return set(first) if len(first) == 1 else steps


REWRITTEN = 0.5
"""The word similarity (:func:`_similarity`) above which a re-plan's sentence is an earlier
version's step rewritten (:func:`step_lineage`): more than half of the shorter sentence's words
kept in order in the other. A planner that writes a result into a step adds to it (``...: the
glue is dry``: all of it kept) or replaces a phrase with a value (``the folio found in the
reading room`` → ``folio F-7``: the rewrite's words are nearly all the old ones); a new step
shares only function words and a noun or two with the old ones (``the``, ``into``, ``volume``),
half or fewer."""


def _words(text: str) -> list[str]:
    return re.findall(r"\w[\w'-]*", text.lower())


def _similarity(old: str, new: str) -> float:
    """How much of the shorter of two sentences the other keeps: the words they have in order
    (their longest common subsequence) over the shorter's length; 1 for a step with additions;
    0 when the words they share, in any order, are too few to pass :data:`REWRITTEN` (no
    subsequence is computed: a re-plan of new sentences costs a word count per pair).

    >>> _similarity("Boil the water.", "Boil the water: the kettle is full.")
    1.0
    >>> _similarity("Pour the tea for the guest in the hall.", "Pour tea T-4 for G-2.")
    0.6
    >>> _similarity("Pour the tea.", "Wash the cups in the sink.")
    0.0
    """
    a, b = _words(old), _words(new)
    short = min(len(a), len(b))
    if not short or sum((Counter(a) & Counter(b)).values()) <= REWRITTEN * short:
        return 0.0
    row = [0] * (len(b) + 1)  # the longest common subsequence, one row at a time
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1] / short


def step_lineage(plans: Sequence[Sequence[ObservedStep]]) -> dict[tuple[str, str], str]:
    """(plan span, step id) of each re-plan's sentence step that is an earlier version's step
    rewritten → that step's id as first written (only where it differs). ``plans``: the
    versions in start order. A re-plan's step is the previous version's step of the same text,
    else the one it is most similar to (:func:`_similarity`, above :data:`REWRITTEN`), each
    earlier step taken once, the most similar pairs first; any other step is new. Steps named
    by identifiers keep their ids (a re-plan repeats them as they are).

    >>> first = [ObservedStep("p1", "Find the lot of clip C-1.", "", 0),
    ...          ObservedStep("p1", "Test the lot found.", "", 1)]
    >>> second = [ObservedStep("p2", "Test lot L-9 found in the register.", "", 0),
    ...           ObservedStep("p2", "Sweep the shed.", "", 1)]
    >>> step_lineage([first, second])
    {('p2', 'Test lot L-9 found in the register.'): 'Test the lot found.'}
    """
    out: dict[tuple[str, str], str] = {}
    for earlier, later in pairwise(plans):
        first = {s.step_id: out.get((s.plan_span_id, s.step_id), s.step_id) for s in earlier}
        old = [s for s in first if _sentence(s)]
        new = [s.step_id for s in later if _sentence(s.step_id)]
        pairs = {s: s for s in new if s in first}
        scored = sorted(
            (
                (-_similarity(o, n), i, j, o, n)
                for i, o in enumerate(old)
                for j, n in enumerate(new)
                if o not in pairs.values() and n not in pairs
            ),
        )
        for score, _i, _j, o, n in scored:
            if -score > REWRITTEN and n not in pairs and o not in pairs.values():
                pairs[n] = o
        plan = later[0].plan_span_id if later else ""
        out |= {(plan, n): first[o] for n, o in pairs.items() if first[o] != n}
    return out


def _is_turn(n: SpanNode) -> bool:
    """An agent run the span model inferred (a framework's agent turn)."""
    return n.kind == A.KIND_STEP and n.inferred


def _asker(n: SpanNode) -> str | None:
    """A step attempt with a request of its own (what a runtime delivered to it) was asked it
    itself; the request of any other span is what the attempt enclosing it was asked."""
    return n.span_id if n.kind == A.KIND_STEP else None


def _reported(
    tools_in: Mapping[str, list[SpanNode]], reported: Mapping[str, list[tuple[str, str, str]]]
) -> dict[str, tuple[str, str]]:
    """Tool span → (arguments, result) its turn reported (:attr:`Binding.call_io`): the calls
    of each tool in a turn in start order, paired in order with those it reported."""
    out: dict[str, tuple[str, str]] = {}
    for turn, calls in reported.items():
        by_tool: dict[str, list[tuple[str, str]]] = {}
        for tool, arguments, result in calls:
            by_tool.setdefault(tool, []).append((arguments, result))
        seen: dict[str, int] = {}
        for t in tools_in.get(turn, ()):
            k = seen[t.tool] = seen.get(t.tool, -1) + 1
            if k < len(said := by_tool.get(t.tool, [])):
                out[t.span_id] = said[k]
    return out


def _runtime_plans(
    deliveries: Sequence[Delivery],
    asked: Mapping[str, str],
    nodes: Mapping[str, SpanNode],
    called: Callable[[Any], str],
) -> tuple[ReadPlan, ...]:
    """The bullet plans (:func:`_autogen.bullet_plan`) the messages a runtime delivered state
    (a Magentic-One task ledger, then its re-plans): a message whose plan has two items (a
    re-plan: one), each led by a name of its own (a list led by agents' names, one agent doing
    several items, names no steps), of which a turn started after it was asked about one not
    done, and about no other item (an instruction names its step)."""
    out: list[ReadPlan] = []
    for d in deliveries:
        items = bullet_plan(d.text)
        if len(items) < (1 if out else 2) or len({b.name for b in items}) < len(items):
            continue
        later = [text for span_id, text in asked.items() if nodes[span_id].start_ns > d.start_ns]
        names = [b.name for b in items]
        if not any(
            len(told := [n for n in names if _names(text, n)]) == 1
            and not next(b for b in items if b.name == told[0]).done
            for text in later
        ):
            continue
        objects = plan_objects(items)
        for obj in objects:
            obj["tool"] = called(obj["tool"]) or obj["tool"]
        out.append(_as_plan(d.span_id, objects))
    return tuple(out)


NO_SPAN = "0" * 16
"""The span id of a run no span stands for (OTel's invalid span id: no span has it)."""

_TYPED = frozenset({A.KIND_RUN, A.KIND_PLAN, A.KIND_STEP, A.KIND_TOOL, A.KIND_LLM})


@dataclass(frozen=True)
class AgentRoots:
    """What :func:`agent_roots` found: the agent runs that are step attempts (span ids, in
    start order) of one run no span stands for (:data:`NO_SPAN`), and whether and why that run
    failed."""

    attempts: tuple[str, ...]
    agents: tuple[str, ...] = ()
    """The agent of each attempt (its step's name), as ``attempts``."""
    failed: bool = False
    reason: str = ""


def agent_roots(
    spans: Iterable[SpanNode], agents: Mapping[str, str] | None = None
) -> AgentRoots | None:
    """A trace whose only runs are several agent runs the span model inferred, each a root
    (agents no application span encloses: AutoGen's agent runtime) is one run no span stands
    for, whose step attempts are those agent runs, each named after its agent. Like a grouping
    run's, its outcome is unknown unless a root span that is none of the span model's (an
    application's own check beside the agents) failed: the last such says why (a step that
    gave up for good fails it too: :attr:`Binding.failed_for_good`). ``agents``: each run's
    agent, by span id. None for any other trace.

    >>> runs = [SpanNode("a", "", "run", "invoke_agent planner", start_ns=1),
    ...         SpanNode("b", "", "run", "invoke_agent worker", start_ns=2),
    ...         SpanNode("c", "", "other", "check", failed=True, message="3 short", start_ns=3)]
    >>> agent_roots(runs, {"a": "planner", "b": "worker"})
    AgentRoots(attempts=('a', 'b'), agents=('planner', 'worker'), failed=True, reason='3 short')
    >>> agent_roots(runs[:1] + runs[2:]) is None
    True
    """
    nodes = list(spans)
    runs = sorted((n for n in nodes if n.kind == A.KIND_RUN), key=lambda n: (n.start_ns, n.span_id))
    if len(runs) < 2 or any(not n.inferred or n.parent_span_id for n in runs):
        return None
    check = max(
        (n for n in nodes if not n.parent_span_id and n.failed and n.kind not in _TYPED),
        key=lambda n: (n.start_ns, n.span_id),
        default=None,
    )
    reason = check.message if check is not None else ""
    names = tuple((agents or {}).get(n.span_id, "") for n in runs)
    return AgentRoots(tuple(n.span_id for n in runs), names, check is not None, reason)


@dataclass(frozen=True)
class ToolEvent:
    """One event of a span: the span, the event's time, name and attributes."""

    span_id: str
    time_ns: int
    name: str
    attributes: Mapping[str, str]


@dataclass(frozen=True)
class EventCall:
    """A tool call only GenAI events say (:func:`event_calls`): its own span id (no span has
    it), the span that asked for it (its parent), its call id and tool, when it was asked for
    and when its outcome was said, what it was called with, what it answered, and how it
    failed (``error_type``, ``message``; empty when it did not)."""

    span_id: str
    parent_span_id: str
    call_id: str
    tool: str
    start_ns: int
    end_ns: int
    arguments: str = ""
    result: str = ""
    error_type: str = ""
    message: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.error_type)

    @property
    def status_code(self) -> str:
        """The status a tool call's span would have (``Error`` when it failed, else ``Unset``)."""
        return "Error" if self.failed else "Unset"

    @property
    def name(self) -> str:
        """The name a tool call's span would have (GenAI ``execute_tool <tool>``)."""
        return f"{A.OP_EXECUTE_TOOL} {self.tool}"

    def node(self) -> SpanNode:
        """The call as a tool span :func:`bind` reads (what it was called with: its answer)."""
        return SpanNode(
            self.span_id,
            self.parent_span_id,
            A.KIND_TOOL,
            self.name,
            tool=self.tool,
            failed=self.failed,
            start_ns=self.start_ns,
            message=self.message,
            answer=self.arguments,
        )


def reads_tool_events(spans: Iterable[SpanNode]) -> bool:
    """Whether a trace's tool calls may be said only by GenAI events (:func:`event_calls`, also
    those a conversation says: :func:`conversation_tool_events`): it has no tool span and
    structure the span model inferred (a run, plan or step of another convention), or LLM calls
    and no structure declared (an instrumentation that traces model calls only).

    >>> reads_tool_events([SpanNode("a", "", "run", "agent", inferred=True)])
    True
    >>> reads_tool_events([SpanNode("a", "", "run", "agent", inferred=False)])
    False
    >>> reads_tool_events([SpanNode("a", "", "other", "app"), SpanNode("c", "a", "llm", "chat")])
    True
    """
    nodes = list(spans)
    if any(n.kind == A.KIND_TOOL for n in nodes):
        return False
    structure = [n for n in nodes if n.kind in (A.KIND_RUN, A.KIND_PLAN, A.KIND_STEP)]
    return any(n.inferred for n in structure) or (
        not structure and any(n.kind == A.KIND_LLM for n in nodes)
    )


def tool_event_sql(name: str = "Events.Name", attributes: str = "Events.Attributes") -> str:
    """SQL for whether an event (``name``, ``attributes``: an ``otel_traces`` event's columns)
    is one :func:`event_calls` reads: a GenAI event with a tool call id.

    >>> tool_event_sql()
    "startsWith(Events.Name, 'gen_ai.') AND Events.Attributes['gen_ai.tool.call.id'] != ''"
    """
    return f"startsWith({name}, 'gen_ai.') AND {attributes}['{A.GEN_AI_TOOL_CALL_ID}'] != ''"


def event_calls(events: Iterable[ToolEvent]) -> list[EventCall]:
    """The tool calls a trace's GenAI events say (Semantic Kernel's model diagnostics, the
    GenAI events convention up to v1.36: no tool span): an event naming a tool and a call id on
    the span that asked for it (its ``gen_ai.choice``), a later event with that call id for
    its outcome (its result, or ``error.type`` and ``exception.message``), in time order; each
    call a span id of its own (a hash of its span's and its call's ids). Events of any other
    kind are left out (:func:`tool_event_sql` selects the same).

    >>> asked = {"gen_ai.tool.call.id": "c1", "gen_ai.tool.name": "lookup"}
    >>> said = {"gen_ai.tool.call.id": "c1", "error.type": "Timeout", "exception.message": "slow"}
    >>> (c,) = event_calls([ToolEvent("s", 1, "gen_ai.choice", asked),
    ...                     ToolEvent("s", 4, "gen_ai.tool.message", said)])
    >>> (c.parent_span_id, c.tool, c.end_ns, c.failed, c.message, c.name)
    ('s', 'lookup', 4, True, 'slow', 'execute_tool lookup')
    """
    calls: dict[tuple[str, str], EventCall] = {}
    said: set[tuple[str, str]] = set()
    for e in sorted(events, key=lambda e: e.time_ns):
        a = e.attributes
        call_id = a.get(A.GEN_AI_TOOL_CALL_ID, "")
        if not e.name.startswith("gen_ai.") or not call_id:
            continue
        # the first event says a call and its outcome: a conversation's later requests repeat
        # its history (_conversation), its call ids its own
        key = (a.get(CONVERSATION, ""), call_id)
        if tool := a.get(A.GEN_AI_TOOL_NAME, ""):
            if key in calls:
                continue
            span_id = hashlib.blake2b(f"{e.span_id}/{call_id}".encode(), digest_size=8).hexdigest()
            arguments = a.get(A.GEN_AI_TOOL_CALL_ARGUMENTS, "")
            start = e.time_ns
            calls[key] = EventCall(span_id, e.span_id, call_id, tool, start, start, arguments)
        elif key in calls and key not in said:
            said.add(key)
            error = a.get("error.type", "")
            calls[key] = replace(
                calls[key],
                end_ns=e.time_ns,
                result=a.get(A.GEN_AI_TOOL_CALL_RESULT, ""),
                error_type=error,
                message=a.get("exception.message", "") if error else "",
            )
    return list(calls.values())


def conversation_tool_events(
    span_id: str, parent_span_id: str, start_ns: int, end_ns: int, attributes: Mapping[str, str]
) -> list[ToolEvent]:
    """The tool calls an LLM call's messages say (``_conversation``: what it answered, what its
    request's history holds) as the events :func:`event_calls` reads; ``attributes``: those
    :func:`conversation_sql` selects, or all of the span's.

    >>> said = {"gen_ai.completion.0.tool_calls.0.id": "c1",
    ...         "gen_ai.completion.0.tool_calls.0.name": "lookup"}
    >>> [(c.parent_span_id, c.tool, c.start_ns)
    ...  for c in event_calls(conversation_tool_events("s", "p", 1, 5, said))]
    [('s', 'lookup', 5)]
    """
    said = conversation_events(span_id, parent_span_id, start_ns, end_ns, attributes)
    return [ToolEvent(*e) for e in said]


def log_level(attributes: Mapping[str, str]) -> int:
    """Logfire's level number of a log span (``logfire.span_type`` ``log``: a zero-duration span
    Logfire writes for ``logfire.info`` / ``warn`` / ``error`` under the span that was current),
    at least 1; 0 for every other span (migration 0037's ``SpanModelLogLevel``).

    >>> log_level({"logfire.span_type": "log", "logfire.level_num": "17"}), log_level({})
    (17, 0)
    """
    if attributes.get(A.LOGFIRE_SPAN_TYPE) != "log":
        return 0
    level = str(attributes.get(A.LOGFIRE_LEVEL_NUM) or "")
    # as the SQL's toUInt32OrZero: ASCII digits ("²" is a digit to str.isdigit), within UInt32
    number = int(level) if level.isascii() and level.isdigit() and len(level) <= 10 else 0
    return max(1, min(255, number if number < 1 << 32 else 0))


def logged_failures(logs: Iterable[tuple[str, int, str]]) -> dict[str, str]:
    """Per span, what the first error-level log in it says (``logs``: each span's parent span
    id, log level, 0 for a span that is no log, and text). Logfire's levels: a log at ``error``
    (17) or above fails the span it was logged in, as an exception recorded on it would, its
    text that span's message; a ``warn`` (13) or ``info`` log only says something.

    >>> logged_failures([("a", 13, "slow"), ("a", 17, "gave up"), ("b", 9, "ok"), ("c", 0, "")])
    {'a': 'gave up'}
    """
    out: dict[str, str] = {}
    for parent, level, text in logs:
        if level >= A.LOGFIRE_LEVEL_ERROR:
            out.setdefault(parent, text)
    return out


_WORD = re.compile(r"(?<![\w-])[A-Za-z_][\w-]*")
"""A name in a text, as :func:`_names` tells one: not inside a longer name."""
_NAMESPACED = re.compile(r"[A-Za-z_][\w-]*(?:[.:]+[A-Za-z_][\w-]*)+")
"""A tool's name under its namespace (``clerk.book``, ``server:tool``; :func:`_bare`)."""


def read_plans(
    nodes: Mapping[str, SpanNode], enclosing: Callable[[str], str | None]
) -> tuple[ReadPlan, ...]:
    r"""The plans a trace states in no format the span model reads, read from its structure
    instead of their syntax (``enclosing``: a span's nearest enclosing step span, or None).

    What a planner said (an LLM call's or an inferred agent run's :attr:`SpanNode.answer`; for
    an agent run, after the arguments of the tool calls it made, in call order: a planner that
    states its plan through tool calls, also with no answer text) lists names; its **steps** are
    the names that executor attempts started after it ended carry (what their LLM calls were
    asked and the words of the attempt's own name; when no attempt's calls record what they
    were asked, the attempt's own name, the words of the app's span above it and the tools
    called in it, also by their bare names: :func:`_bare`), in the
    order the answer lists them: scanning the answer, a name is a new step when the attempts
    carrying it are attempts no earlier step name is carried by (a tool, an argument or a goal
    word carried by the same attempts is that step's detail; a word several steps' attempts
    carry is no step, nor a word every attempt of the trace carries when they are of several
    steps: an app's prefix). Names the planner was asked about itself (the run's data) are not
    steps, nor is template syntax (``{{ step }}``, ``{% for %}``) or markup (XML tag and attribute
    names: :func:`_untemplated`), nor a field of a step's result written after its name and a
    dot (``$fetch.total``: :func:`_step_names`).
    The first plan needs two steps; a later answer of the same planner (the same agent, or a
    bare LLM call like the first) is a re-plan with at least one. Runs of the planner's own
    agent are not executor attempts. Steps found by the tools called are named by the labels
    of the numbered items they stand in (:func:`_labelled`). A step's tool is the first tool
    called in the trace that its part of the answer names (:func:`_called`), its arguments the
    first JSON object there, else the keys and values it states in any syntax (:func:`_pairs`).
    When no span is a step attempt, the plain spans that make tool or LLM calls themselves are
    the executor's attempts (each carrying what its calls were asked, or its own name).

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("p", "", "step", "planner", step_name="planner"),
    ...     SpanNode("l", "p", "llm", "chat", request="Ship order 7", answer=(
    ...         "Plan for order 7:\n- pick -> wms {\"order\": 7}\n- ship -> courier {}")),
    ...     SpanNode("e1", "", "step", "executor", step_name="executor", start_ns=2),
    ...     SpanNode("c1", "e1", "llm", "chat", start_ns=2, request="Do pick with wms"),
    ...     SpanNode("t1", "e1", "tool", "wms", tool="wms", start_ns=2),
    ...     SpanNode("e2", "", "step", "executor", step_name="executor", start_ns=3),
    ...     SpanNode("c2", "e2", "llm", "chat", start_ns=3, request="Do ship with courier"),
    ... ]}
    >>> enclosing = {"l": "p", "c1": "e1", "t1": "e1", "c2": "e2"}.get
    >>> (plan,) = read_plans(nodes, enclosing)
    >>> [(s.step_id, s.tool) for s in plan.steps]
    [('pick', 'wms'), ('ship', '')]
    >>> json.loads(plan.json)[0]
    {'id': 'pick', 'tool': 'wms', 'args': {'order': 7}}
    """
    return _read_plans(_said(nodes, enclosing))


@dataclass(frozen=True)
class _Said:
    """What the plan readers (:func:`structured_plans`, :func:`read_plans`) read of one trace,
    gathered once: its spans in start order, what each executor attempt was asked and the
    arguments of the tool calls it made, the names each attempt carries (what it was told and
    the words of its own name; when no attempt's calls record what they were asked, its own
    name and the tools called in it), indexed (:class:`_Carriers`), and the tools called."""

    nodes: Mapping[str, SpanNode]
    enclosing: Callable[[str], str | None]
    by_start: list[SpanNode]
    asked: dict[str, dict[str, None]]
    made: dict[str, list[str]]
    carried: dict[str, set[str]]
    index: _Carriers
    tools: set[str]
    called: Callable[[Any], str]
    """The tool called in the trace that a name names (:func:`_called`)."""
    over_work: frozenset[str]
    """The step spans above executor attempts (a graph node that ran an agent on one task):
    their answer reports that work (a node's state update listing the task it ran), no plan."""

    def planner(self, n: SpanNode) -> str:
        """Who answered: the agent run itself, else the one its call is in ("": none), by
        :func:`_uncounted` name (a re-plan's span ``plan r2`` is the planner of ``plan r1``)."""
        if n.kind == A.KIND_STEP:
            return _uncounted(n.step_name)
        if n.kind == A.KIND_LLM and any(n.io):  # a traced function's model call: the function
            return _uncounted(n.name)
        owner = self.enclosing(n.span_id)
        if owner is None:
            return ""
        node = self.nodes[owner]  # a plain span standing for an attempt goes by its name
        return _uncounted(node.step_name if node.kind == A.KIND_STEP else node.name)

    def later(self, n: SpanNode, above: set[str], me: str) -> _Later:
        """The executor attempts started after ``n`` ended, but ``n``, the spans ``above`` it
        and, when ``me`` is set, the runs of the planner's own agent."""
        # a run's own plan (an attribute) is stated before the attempts it encloses
        end = n.start_ns if n.kind == A.KIND_RUN else n.start_ns + n.duration_ns
        return self.index.later(end, {*above, n.span_id}, me)


_COUNT = re.compile(r"\d+")


def _uncounted(name: str) -> str:
    """An agent's name without the counts in it: the runs of one agent whose span names count
    its runs (``plan r1``, ``plan r2``) are one agent's.

    >>> _uncounted("plan r2") == _uncounted("plan r10")
    True
    """
    return _COUNT.sub("#", name)


def _said(nodes: Mapping[str, SpanNode], enclosing: Callable[[str], str | None]) -> _Said:
    """What the plan readers read of a trace (:class:`_Said`)."""
    by_start = sorted(nodes.values(), key=lambda n: (n.start_ns, n.span_id))
    # an agent run inside a model call is that call's own work (an agent run as a tool whose
    # result answered: _agent_tools), not an executor's attempt
    attempts = [
        n
        for n in by_start
        if n.kind == A.KIND_STEP
        and n.inferred
        and not any(nodes[p].kind == A.KIND_LLM for p in _ancestors(nodes, n.span_id))
    ]
    if not attempts:
        # no span is a step attempt (an executor's turns are a framework's plain spans, such as
        # one per step under the run): the plain spans that make tool or LLM calls themselves
        # are the executor's attempts (``bind`` promotes those a plan step names)
        units = {
            n.parent_span_id
            for n in by_start
            if n.kind in (A.KIND_TOOL, A.KIND_LLM)
            and nodes.get(n.parent_span_id, _NONE).kind == "other"
        }
        attempts = [replace(n, step_name=n.name) for n in by_start if n.span_id in units]
        enclosing = _or_unit(nodes, units, enclosing)
    asked: dict[str, dict[str, None]] = {}
    made: dict[str, list[str]] = {}
    for n in by_start:
        if n.request and (owner := _asker(n) or enclosing(n.span_id)) is not None:
            asked.setdefault(owner, {})[n.request] = None
        if n.kind == A.KIND_TOOL and n.answer and (owner := enclosing(n.span_id)) is not None:
            made.setdefault(owner, []).append(n.answer)
    used: dict[str, set[str]] = {}
    # attempts all asked the same (a workflow's whole conversation, not each turn's task) carry
    # the tools they called too, as attempts that record nothing they were asked
    same = len(asked) >= 2 and len({tuple(texts) for texts in asked.values()}) == 1
    if not asked or same:  # an attempt that records nothing it was asked: the tools it called
        for n in by_start:
            if n.kind == A.KIND_TOOL and n.tool and (owner := enclosing(n.span_id)) is not None:
                used.setdefault(owner, set()).update({n.tool, _bare(n.tool)})
    carried = {
        # an attempt told a command by its tool also carries its own name (a span named after
        # its step: ``app.step pick``): the step it is, as much as what it was told
        a.span_id: set(_WORD.findall("\n".join([a.step_name, *asked[a.span_id]])))
        | used.get(a.span_id, set())
        if asked
        else {a.step_name, *_step_id(a), *used.get(a.span_id, ()), *_app_words(nodes, a.span_id)}
        for a in attempts
        if a.span_id in asked or not asked
    }
    index = _Carriers([a for a in attempts if a.span_id in carried], carried)
    tools = {n.tool for n in by_start if n.kind == A.KIND_TOOL and n.tool}
    over_work = frozenset(
        p for a in attempts for p in _ancestors(nodes, a.span_id) if nodes[p].kind == A.KIND_STEP
    )
    return _Said(
        nodes, enclosing, by_start, asked, made, carried, index, tools, _called(tools), over_work
    )


def _app_span(nodes: Mapping[str, SpanNode], span_id: str) -> SpanNode | None:
    """The nearest plain span above an attempt, past the framework's step spans that wrap it,
    when it is not the trace's root: the app's span per attempt (``task pick attempt 2`` over a
    framework's ``Agent.run_sync`` over ``Agent.run``), which names the step its agent was given.

    >>> nodes = {n.span_id: n for n in [SpanNode("r", "", "other", "order 7"),
    ...     SpanNode("t", "r", "other", "task pick attempt 2"),
    ...     SpanNode("w", "t", "step", "agent.run_sync", step_name="agent.run_sync"),
    ...     SpanNode("a", "w", "step", "agent.run", step_name="agent.run")]}
    >>> _app_span(nodes, "a").name, _app_span(nodes, "t")
    ('task pick attempt 2', None)
    """
    for p in _ancestors(nodes, span_id):
        if nodes[p].kind == A.KIND_OTHER:
            # the root groups every attempt (the run): it names no one step
            return nodes[p] if nodes[p].parent_span_id in nodes else None
        if nodes[p].kind != A.KIND_STEP:
            return None  # a run, a plan or a call above it: no app span of its own
    return None


def _app_words(nodes: Mapping[str, SpanNode], span_id: str) -> set[str]:
    """The words of the name of the app's span around an attempt (:func:`_app_span`), for an
    attempt that records nothing it was asked.

    >>> nodes = {n.span_id: n for n in [SpanNode("r", "", "other", "order 7"),
    ...     SpanNode("t", "r", "other", "task pick attempt 2"),
    ...     SpanNode("a", "t", "step", "agent.run", step_name="agent.run")]}
    >>> sorted(_app_words(nodes, "a")), _app_words(nodes, "t")
    (['attempt', 'pick', 'task'], set())
    """
    app = _app_span(nodes, span_id)
    return set(_WORD.findall(app.name)) if app is not None else set()


def _or_unit(
    nodes: Mapping[str, SpanNode], units: set[str], enclosing: Callable[[str], str | None]
) -> Callable[[str], str | None]:
    """``enclosing``, but a span right under one of ``units`` is enclosed by it."""

    def owner(span_id: str) -> str | None:
        parent = nodes[span_id].parent_span_id if span_id in nodes else ""
        return parent if parent in units else enclosing(span_id)

    return owner


def _read_plans(said: _Said) -> tuple[ReadPlan, ...]:
    """:func:`read_plans` of what was read once (:class:`_Said`)."""
    if not said.carried:
        return ()
    out: list[ReadPlan] = []
    stated: set[str] = set()  # the span ids of the plans in out
    who = ""
    named: set[str] = set()
    headings: set[str] = set()  # what every worker was told above the step (``Plan 1 (…)``)
    sectioned = False  # the first plan was a plan section: the planner's re-plans are too
    for n in said.by_start:
        if n.kind not in (A.KIND_LLM, A.KIND_STEP) or (n.kind == A.KIND_STEP and not n.inferred):
            continue
        section = _plan_section(n.answer)
        if sectioned and section is None:
            continue  # the planner's other answers are its actions, not re-plans
        calls = [c for c in said.made.get(n.span_id, ()) if not _hands_out(c, n.answer)]
        answer = n.answer if section is None else section
        text = "\n".join([*calls, answer] if n.kind == A.KIND_STEP else [answer])
        if not text.strip():
            continue
        me = said.planner(n)
        if out and me != who:
            continue
        above = set(_ancestors(said.nodes, n.span_id))
        if above & stated:
            continue  # the plan's own agent run already stated it
        asked = n.request if n.kind == A.KIND_LLM else "\n".join(said.asked.get(n.span_id, {}))
        data = (set(_WORD.findall(asked)) - named) | said.index.everywhere | headings
        steps, heading = _step_names(
            _untemplated(text), data, said.later(n, above, me), said.called, not out, named
        )
        if len(steps) < (2 if not out else 1):
            continue
        who = me
        sectioned = sectioned or (not out and section is not None)
        headings |= heading  # a re-plan's workers are told it too, maybe one alone
        named.update(name for name, _ in steps)
        out.append(_read_plan(n.span_id, text, steps, said.called))
        stated.add(n.span_id)
    return tuple(out)


_EVIDENCE = re.compile(r"(?m)^[ \t]*#E(\d+)[ \t]*=[ \t]*([A-Za-z_][\w.-]*)[ \t]*\[(.*)\][ \t]*$")
"""A ReWOO evidence line: ``#E2 = Tool[input]`` (the plan's step 2 calls ``Tool``; ``#Ek`` in
its input stands for step k's result)."""
_TASK = re.compile(r"(?m)^[ \t]*(\d+)\.[ \t]*([A-Za-z_][\w.-]*)\((.*)\)[ \t]*$")
"""An LLMCompiler task line: ``2. tool(input)`` (``$k``, ``${k}`` or ``#Ek`` in its input
stands for task k's result)."""
_REFERENCE = re.compile(r"\$\{?(\d+)\}?|#E(\d+)")
_HEAD = re.compile(
    rf"(?m)^[ \t]*(?:[A-Za-z]+[ \t]+)?\d+[ \t]*[^\w\s]*[ \t]*({_WORD.pattern})"
    r"[ \t]*[^\w\s:]*[ \t]*:"
)
"""The label of a numbered line that describes an evidence line's step: the name after its
number, before the colon (``Plan 2 (apply):``, ``Step 2 — apply:``); the paper's ``Plan:``
lines have none."""
_INPUT = re.compile(r'\s*([A-Za-z_]\w*)\s*=\s*("[^"]*"|\'[^\']*\'|[^,]*?)\s*(?:,|$)')


def evidence_plans(
    nodes: Mapping[str, SpanNode], enclosing: Callable[[str], str | None]
) -> tuple[ReadPlan, ...]:
    r"""The plans a trace states as numbered tool calls whose inputs may stand for earlier
    results (:func:`_evidence_lines`: ReWOO's ``#E1 = Tool[input]``, each after a line that
    describes it, or LLMCompiler's ``1. tool(input)`` with ``$1``), or as Makefile rules
    (:func:`_targets`: a target per step, its prerequisites its ``depends_on``, its ``##``
    comment its description, its recipe's ``tool key=value`` its call), or as a shell script
    (:func:`_commands`: a command per step, ``step = tool --key value  # goal``, the commands
    it refers to as ``$step`` its ``depends_on``), or as LaTeX-like macros (:func:`_macros`: a
    macro per step, the steps its ``\\ref`` macros name its ``depends_on``): what a planner
    said (an
    LLM call's or inferred agent run's :attr:`SpanNode.answer`) with at least two such lines,
    then the later answers of the same planner with at least one (a re-plan, which keeps the
    numbers of the steps it carries over and may state the done ones as ``Known: #Ek =
    value``). A step's label is the one of its description line (``Plan 2 (apply): ...``:
    :data:`_HEAD`), else the first name in the text describing it that later executor runs
    carry (``Thought: apply - ...``), unless they are told its number; a line with no label
    calling no tool of the trace (LLMCompiler's ``join()``) is no step when others have one.
    A step's id is its label when every step has one and they are distinct, else ``E`` and its
    number (the paper's ``Plan: ...`` lines have no label); its tool the tool called in the
    trace that the line names (:func:`_called`), else the name as written; its arguments the
    input's ``key=value`` pairs (:func:`_evidence_input`).

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("l", "", "llm", "chat", answer=(
    ...         "Plan 1 (pick): Pick the order\n#E1 = wms[order=7]\n"
    ...         "Plan 2 (ship): Ship what was picked\n#E2 = courier[parcel=#E1, to=\"Oslo\"]")),
    ... ]}
    >>> (plan,) = evidence_plans(nodes, lambda span_id: None)
    >>> json.loads(plan.json)[1]
    {'id': 'ship', 'tool': 'courier', 'args': {'parcel': '#E1', 'to': 'Oslo'}}
    """
    return _evidence_plans(_said(nodes, enclosing))


def _evidence_plans(said: _Said) -> tuple[ReadPlan, ...]:
    """:func:`evidence_plans` of what was read once (:class:`_Said`)."""
    out: list[ReadPlan] = []
    who = ""
    for n in said.by_start:
        if not n.answer or not (
            n.kind == A.KIND_LLM or (n.kind == A.KIND_STEP and n.inferred) or _plan_span(n)
        ):
            continue
        targets = next(
            (found for text in _texts_of(n.answer) if (found := _format_steps(text))), []
        )
        lines = [] if targets or not _on("evidence") else _evidence_lines(n.answer)
        if len(targets or lines) < (1 if out else 2):
            continue  # most answers state no evidence: look no further at them
        me = said.planner(n)
        above = set(_ancestors(said.nodes, n.span_id))
        if (out and me != who) or any(p.span_id in above for p in out):
            continue  # another agent's answer, or the plan's own agent run stated it
        who = me
        if targets:
            objects = [
                {
                    "id": t.name,
                    "tool": said.called(t.tool) or t.tool,
                    "args": t.args,
                    "depends_on": list(t.needs),
                    "description": t.goal,
                }
                for t in targets
            ]
        else:
            objects = _evidence_objects(said, n, lines, above, me)
        out.append(_as_plan(n.span_id, objects))
    return tuple(out)


def _format_steps(text: str) -> list[ReadStep]:
    """The steps the first format reader (:data:`PLAN_READERS`, but the runtime's ledger and
    evidence lines) that reads any reads from a text; [] when none does."""
    return (
        (_on("targets") and _targets(text))
        or (_on("commands") and _commands(text))
        or (_on("macros") and _macros(text))
        or (_on("entries") and _entries(text))
        or (_on("step_lines") and _step_lines(text))
        or (_on("call_lists") and _calllist.steps(text))
        or (_on("hcl") and _hcl.steps(text))
        or (_on("handlebars") and _handlebars.steps(text))
        or (_on("graphql") and _graphql.steps(text))
        or (_on("jenkinsfile") and _jenkinsfile.steps(text))
        or (_on("nextflow") and _nextflow.steps(text))
        or (_on("bpmn") and _bpmn.steps(text))
        or (_on("airflow") and _airflow.steps(text))
        or []
    )


def _texts_of(answer: str) -> list[str]:
    r"""An answer, then, when it is JSON (a structured output: an SDK's typed result,
    ``output_type`` / ``response_format``, or an agent's result wrapping one), the strings in it
    that span lines, outermost first (at most :data:`_MAX_TEXTS`): a plan written as a
    document (a file, a script, XML) is such a string, JSON-escaped in the answer, where no
    format reader can read it as written.

    >>> _texts_of('{"plan_file": "a: b\\n\\trun x", "title": "one line"}')
    ['{"plan_file": "a: b\\n\\trun x", "title": "one line"}', 'a: b\n\trun x']
    >>> _texts_of('{"output": {"bpmn": "<process>\\n</process>"}, "n": ["x\\ny"]}')[1:]
    ['<process>\n</process>', 'x\ny']
    >>> _texts_of("1. fetch")
    ['1. fetch']
    """
    if not answer.startswith(("{", "[")):
        return [answer]
    try:
        queue: list[Any] = [safejson.loads(answer)]
    except ValueError:
        return [answer]
    out = [answer]
    while queue and len(out) <= _MAX_TEXTS:
        value = queue.pop(0)
        if isinstance(value, str) and "\n" in value:
            out.append(value)
        elif isinstance(value, dict):
            queue.extend(value.values())
        elif isinstance(value, list):
            queue.extend(value)
    return out


_MAX_TEXTS = 8
"""The strings of one JSON answer offered to the format readers (an agent's state, a whole
conversation, holds hundreds)."""


def _evidence_objects(
    said: _Said, n: SpanNode, lines: list[re.Match[str]], above: set[str], me: str
) -> list[dict[str, Any]]:
    """The step objects of one answer's evidence lines (:func:`evidence_plans`)."""
    labels: list[str] = []
    after = 0
    later = said.later(n, above, me) if said.carried else None
    for m in lines:
        heads = list(_HEAD.finditer(n.answer, after, m.start()))
        if heads:
            labels.append(heads[-1].group(1))
        elif later is None or later.carry(f"E{m.group(1)}"):
            labels.append("")  # the workers are told the step by its number
        else:  # the first name a later executor run carries in the text describing it
            words = _WORD.findall(n.answer, after, m.start())
            carried = (w for w in words if later.carry(w) and not later.every(w))
            labels.append(next(carried, ""))
        after = m.end()
    items = list(zip(labels, lines, strict=True))
    if any(labels):
        # an item with no label that calls no tool of the trace (LLMCompiler's closing
        # ``join()``) is no step
        items = [(lab, m) for lab, m in items if lab or said.called(m.group(2))]
    labels = [lab for lab, _ in items]
    distinct = all(labels) and len(set(labels)) == len(labels)
    return [
        {
            "id": label if distinct else f"E{m.group(1)}",
            "tool": said.called(m.group(2)) or m.group(2),
            "args": _evidence_input(m.group(3)),
        }
        for label, m in items
    ]


_RULE = re.compile(
    r"^([A-Za-z_][\w.-]*)[ \t]*:(?![:=])[ \t]*([^#;=\n]*?)[ \t]*(?:#+[ \t]*(.*?))?[ \t]*$"
)
"""A rule's first line in a Makefile: ``target: prerequisites  ## comment`` (not ``x := v``, a
variable; not a special target such as ``.PHONY``)."""
_RECIPE = re.compile(r"^\t[ \t]*(\S.*)$")
_KNOWN = re.compile(r"^[ \t]*([A-Za-z_][\w.-]*)[ \t]*(?::{1,3}=|\?=|=)")
_MAKE_REFERENCE = re.compile(r"\$[({]([A-Za-z_][\w.-]*)[)}]")


def _targets(text: str) -> list[ReadStep]:
    r"""The rules a text states as a Makefile plan (a dependency-style plan: each target a
    step, its first recipe line the call ``tool key=value ...``, ``$(x)`` / ``${x}`` an earlier
    target's result), when one of them needs another (a prerequisite or a reference to a
    target or a variable the text sets: a re-plan's ``x := result`` for a done step); [] else
    (a list of ``name: text`` lines with no recipe is no Makefile).

    >>> [(t.name, t.needs, t.tool, t.args) for t in _targets(
    ...     'pick:  ## Pick the order\n\twms order=7\n\nship: pick\n\tcourier parcel=$(pick)\n')]
    [('pick', (), 'wms', {'order': 7}), ('ship', ('pick',), 'courier', {'parcel': '$(pick)'})]
    >>> _targets('pick: the order\nship: what was picked')
    []
    """
    if "\t" not in text:
        return []
    targets: list[ReadStep] = []
    known: set[str] = set()
    rule: re.Match[str] | None = None
    for line in text.splitlines():
        if rule is not None and (recipe := _RECIPE.match(line)):
            try:
                words = shlex.split(recipe.group(1))
            except ValueError:
                words = recipe.group(1).split()
            args: dict[str, Any] = {}
            for word in words[1:]:
                key, eq, value = word.partition("=")
                if eq and key:
                    args[key] = _whole_number(value)
            needs = tuple(rule.group(2).split())
            goal = (rule.group(3) or "").strip()
            targets.append(ReadStep(rule.group(1), needs, goal, words[0] if words else "", args))
            rule = None
        elif m := _RULE.match(line):
            rule = m
        elif m := _KNOWN.match(line):
            known.add(m.group(1))
            rule = None
        elif line.strip():
            rule = None
    names = {t.name for t in targets} | known
    refers = any(
        set(t.needs) & names
        or any(r in names for v in t.args.values() for r in _MAKE_REFERENCE.findall(str(v)))
        for t in targets
    )
    return targets if refers else []


_ASSIGNED = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*([A-Za-z_][\w.-]*)(?:[ \t]+(.*))?")
"""A shell-script plan's command: ``name = tool arguments`` (the step ``name`` calls ``tool``)."""
_EXPORT = re.compile(r"[ \t]*export[ \t]+([A-Za-z_]\w*)=.*")
_SHELL_REFERENCE = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")


def _commands(text: str) -> list[ReadStep]:
    r"""The commands a text states as a shell-script plan, a step a line: ``name = tool --key
    value ...  # goal`` (the step ``name`` calls ``tool`` with those options, ``$x`` or
    ``${x}`` an earlier step's result), ``export name=value`` (a done step's result: a
    revision's), comments and the ``#!`` line (a fenced block's fences too); [] when any other
    line is there, or when no command refers to a name the script sets and it exports none (a
    list of ``x = y`` lines is no script). A command's goal is its comment, its needs the
    commands it refers to.

    >>> pick, ship = _commands(
    ...     '#!plan 7\npick = wms --order 7  # Pick it\nship = courier --parcel "${pick}" -f')
    >>> (pick.name, pick.tool, pick.args, pick.goal), (ship.needs, ship.args)
    (('pick', 'wms', {'order': 7}, 'Pick it'), (('pick',), {'parcel': '${pick}', 'f': True}))
    >>> _commands('x = 1\ny = 2'), _commands('Plan:\npick = wms --order 7\nship = courier')
    ([], [])
    """
    if "=" not in text:
        return []
    lines: list[tuple[str, str, list[str], str]] = []
    exported = False
    for line in text.splitlines():
        code, goal = _shell_comment(line)
        if not code.strip() or code.lstrip().startswith("```"):
            continue
        if _EXPORT.fullmatch(code):
            exported = True
            continue
        if (m := _ASSIGNED.fullmatch(code.rstrip())) is None:
            return []
        try:
            words = shlex.split(m[3] or "")
        except ValueError:
            return []
        lines.append((m[1], m[2], words, goal))
    names = {name for name, *_ in lines}
    targets = [
        ReadStep(name, tuple(dict.fromkeys(_referred(words, names))), goal, tool, _options(words))
        for name, tool, words, goal in lines
    ]
    return targets if exported or any(t.needs for t in targets) else []


_LINE_STEP = re.compile(r"[ \t]*([A-Za-z]{1,3})([0-9]{1,3})[ \t]+([A-Za-z_][\w-]*)(?![\w-])(.*)")
"""A line of a step-per-line plan: an id (a short prefix and a number), the step's name, the
rest (its call, when it has one)."""
_LINE_CALL = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]*)((?:[ \t]+[A-Za-z_]\w*=(?:\"(?:[^\"\\]|\\.)*\"|[^\s\"]+))+)"
)
"""A line's call: a tool name followed by one or more ``key=value`` arguments."""
_LINE_PAIR = re.compile(r"([A-Za-z_]\w*)=(\"(?:[^\"\\]|\\.)*\"|[^\s\"]+)")


def _step_lines(text: str) -> list[ReadStep]:
    r"""The steps a text states one a line, each line an id (a short prefix and a number, one
    prefix for all) and the step's name, then the call of its open steps: a tool followed by
    ``key=value`` arguments (JSON values, else words), a value that is another line's id after
    a sign (``^L1``, ``&S2``) that line's result (written with its step's name: the reference
    the plan means); a line whose name no call follows is a done step (a revision's). [] unless
    a step refers to another line and each id is distinct (the planner's first plan needs two
    steps: :func:`evidence_plans`).

    >>> pick, ship = _step_lines('Plan\nS1 pick :: wms order=7 :: take it\n'
    ...                          'S2 ship -> courier parcel=&S1 to="Oslo"')
    >>> (pick.name, pick.tool, pick.args), (ship.needs, ship.args)
    (('pick', 'wms', {'order': 7}), (('pick',), {'parcel': '&pick', 'to': 'Oslo'}))
    >>> _step_lines('S1 pick wms order=7\nS2 ship courier to=Oslo')
    []
    """
    if "=" not in text:
        return []
    lines = [
        (m, _LINE_CALL.search(m[4])) for m in map(_LINE_STEP.fullmatch, text.splitlines()) if m
    ]
    ids = {m[1] + m[2]: m[3] for m, _ in lines}
    if len(ids) < len(lines) or len({m[1] for m, _ in lines}) != 1:
        return []
    out = []
    for m, call in lines:
        if call is None:
            continue  # a done step
        args: dict[str, Any] = {}
        needs: list[str] = []
        for key, value in _LINE_PAIR.findall(call[2]):
            sign = value.rstrip("0123456789").removesuffix(m[1])
            if sign and not sign[-1].isalnum() and value[len(sign) :] in ids:
                needs.append(ids[value[len(sign) :]])
                args[key] = sign + needs[-1]
            else:
                args[key] = _json_word(value)
        out.append(ReadStep(m[3], tuple(dict.fromkeys(needs)), "", call[1], args))
    return out if any(t.needs for t in out) else []


def _json_word(word: str) -> Any:
    """A ``key=value`` argument's value: a JSON string or number as its value, else the word.

    >>> [_json_word(w) for w in ('"Oslo"', "8", "1.5", "^x", "[1]")]
    ['Oslo', 8, 1.5, '^x', '[1]']
    """
    try:
        value = safejson.loads(word)
    except ValueError:
        return word
    return value if isinstance(value, str | int | float) and not isinstance(value, bool) else word


_MACRO_NAME = re.compile(r"\\([A-Za-z]+)")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_PAIR_KEY = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=(.*)", re.DOTALL)


def _macro_calls(text: str) -> list[tuple[str, list[str]]]:
    r"""The macros a LaTeX-like text calls at its top level, each with its brace arguments
    (``\name{a}{b}``: ``("name", ["a", "b"])``; macros inside an argument are part of it).

    >>> _macro_calls(r"\begin{s}{1}" + "\n" + r"\step{a}{x=\ref{b}}\end{s}")
    [('begin', ['s', '1']), ('step', ['a', 'x=\\ref{b}']), ('end', ['s'])]
    """
    out: list[tuple[str, list[str]]] = []
    closing = _bibtex.closing_braces(text)
    i = 0
    while (m := _MACRO_NAME.search(text, i)) is not None:
        args: list[str] = []
        i = m.end()
        while i < len(text) and text[i] == "{":
            j = closing.get(i, -1)
            if j < 0:
                break  # unbalanced: no argument
            args.append(text[i + 1 : j])
            i = j + 1
        out.append((m.group(1), args))
    return out


def _split_pairs(text: str) -> dict[str, Any] | None:
    """A macro argument's ``key=value, key=value`` pairs (commas inside braces are a value's;
    whole numbers as numbers), None when it is not such a list (an empty one is)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    pairs: dict[str, Any] = {}
    for part in parts:
        if not part.strip() and len(parts) == 1:
            return pairs
        if (m := _PAIR_KEY.fullmatch(part)) is None:
            return None
        pairs[m.group(1)] = _whole_number(m.group(2).strip())
    return pairs


def _macros(text: str) -> list[ReadStep]:
    r"""The steps a text states as LaTeX-like macros, a step a macro: the macro that recurs
    with an identifier as its first argument (the step's id) and a ``key=value, ...`` argument
    (its call's arguments; a one-argument macro inside a value, ``\ref{id}``, an earlier step's
    result), another argument a bare name (its tool), the last other one its goal; [] when no
    step refers to a step or to the first argument of another macro the text calls (a
    revision's ``\done{id}{result}`` for a done step): a list of macros is no plan.

    >>> pick, ship = _macros("\\plan{7}\n\\task{pick}{wms}{order=7}{Pick it}\n"
    ...                      "\\task{ship}{courier}{parcel=\\ref{pick}, to=Oslo}{Ship it}")
    >>> (pick.name, pick.tool, pick.args, pick.goal), (ship.needs, ship.args)
    (('pick', 'wms', {'order': 7}, 'Pick it'), (('pick',), {'parcel': '\\ref{pick}', 'to': 'Oslo'}))
    >>> _macros("\\item{a}{x=1}{A}\n\\item{b}{y=2}{B}")
    []
    """
    if "\\" not in text or "=" not in text:
        return []
    calls = _macro_calls(text)
    named = [(name, args) for name, args in calls if args and _IDENTIFIER.fullmatch(args[0])]
    stated = [name for name, args in named if any(_split_pairs(a) for a in args[1:] if "=" in a)]
    if not stated:
        return []
    macro = max(dict.fromkeys(stated), key=stated.count)
    lines: list[tuple[str, str, dict[str, Any], str]] = []
    for name, args in named:
        if name != macro:
            continue
        rest = args[1:]
        pairs = next((p for a in rest if (p := _split_pairs(a)) is not None), {})
        tool = next((a for a in rest if re.fullmatch(r"[A-Za-z_][\w.-]*", a)), "")
        goals = [a for a in rest if a != tool and _split_pairs(a) is None]
        lines.append((args[0], tool, pairs, goals[-1].strip() if goals else ""))
    steps = {name for name, *_ in lines}
    known = steps | {args[0] for name, args in named if name != macro and len(args) >= 2}
    targets: list[ReadStep] = []
    refers = False
    for name, tool, pairs, goal in lines:
        referred = [
            args[0]
            for value in pairs.values()
            for _, args in _macro_calls(str(value))
            if len(args) == 1 and args[0] in known and args[0] != name
        ]
        refers = refers or bool(referred)
        needs = tuple(dict.fromkeys(r for r in referred if r in steps))
        targets.append(ReadStep(name, needs, goal, tool, pairs))
    return targets if refers else []


def _entries(text: str) -> list[ReadStep]:
    """The steps a text states as BibTeX-like entries (:func:`_bibtex.steps`).

    >>> [t.needs for t in _entries("@step{a, tool = {x}, n = {1}} @step{b, tool = {y}, m = a}")]
    [(), ('a',)]
    """
    return [
        replace(s, args={k: _whole_number(v) for k, v in s.args.items()})
        for s in _bibtex.steps(text)
    ]


def _referred(words: list[str], names: set[str]) -> Iterable[str]:
    """The ``names`` the words refer to as ``$name`` or ``${name}``, in order."""
    return (r for w in words for r in _SHELL_REFERENCE.findall(w) if r in names)


def _shell_comment(line: str) -> tuple[str, str]:
    """A shell line's code and its comment's text (from a ``#`` that starts a word outside
    quotes).

    >>> _shell_comment("a = b --x 'c # d'  # the goal"), _shell_comment("#!/bin/sh")
    (("a = b --x 'c # d'  ", 'the goal'), ('', '!/bin/sh'))
    """
    quote = ""
    for i, c in enumerate(line):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i], line[i + 1 :].strip()
    return line, ""


def _options(words: list[str]) -> dict[str, Any]:
    """A command's options as arguments: ``--key value``, ``--key=value`` and ``-k value``
    (whole numbers as numbers), a flag no value follows ``True``; other words by their position
    among them (``"1"``, ``"2"``, ...).

    >>> _options(["a.txt", "--n", "2", "--to=Oslo", "-v"])
    {'1': 'a.txt', 'n': 2, 'to': 'Oslo', 'v': True}
    """
    out: dict[str, Any] = {}
    numbered = 0  # the keys that are numbers, kept as they come (recounting them is quadratic)
    i = 0
    while i < len(words):
        word = words[i]
        key, eq, value = word.lstrip("-").partition("=")
        if word.startswith("-") and key and not word[1:2].isdigit():
            if not eq and i + 1 < len(words) and not words[i + 1].startswith("-"):
                eq, value = "=", words[i + 1]
                i += 1
            name, item = key, _whole_number(value) if eq else True
        else:
            name, item = str(numbered + 1), _whole_number(word)
        numbered += name.isdigit() and name not in out
        out[name] = item
        i += 1
    return out


def _evidence_lines(text: str) -> list[re.Match[str]]:
    r"""The numbered tool calls a text states as a plan (number, tool, input): its ReWOO
    evidence lines (:data:`_EVIDENCE`), else its LLMCompiler task lines (:data:`_TASK`) when
    they are numbered one after the other (a re-plan goes on from the last task) and one of
    them refers to an earlier result (a numbered list of calls that refers to none is any
    list).

    >>> [m.groups() for m in _evidence_lines('1. search("ACME")\n2. math("$1 * 2")')]
    [('1', 'search', '"ACME"'), ('2', 'math', '"$1 * 2"')]
    >>> _evidence_lines('1. search("ACME")\n2. search("Initech")')
    []
    """
    if "#E" in text and (lines := list(_EVIDENCE.finditer(text))):
        return lines
    if "$" not in text and "#E" not in text:
        return []
    tasks = list(_TASK.finditer(text))
    numbers = [int(m.group(1)) for m in tasks]
    if not numbers or numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return []
    refers = any(
        0 < int(r.group(1) or r.group(2)) < int(m.group(1))
        for m in tasks
        for r in _REFERENCE.finditer(m.group(3))
    )
    return tasks if refers else []


def _evidence_input(text: str) -> dict[str, Any]:
    """An evidence line's input as arguments: its ``key=value`` pairs (quotes dropped, whole
    numbers as numbers), else the whole input under ``input`` (one quoted string unquoted).

    >>> _evidence_input('region="eu", qty=8, parcel=#E1'), _evidence_input('"ACME Corp"')
    ({'region': 'eu', 'qty': 8, 'parcel': '#E1'}, {'input': 'ACME Corp'})
    """
    pairs: dict[str, Any] = {}
    at = 0
    while at < len(text) and (m := _INPUT.match(text, at)) and m.end() > at:
        value = m.group(2)
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
            pairs[m.group(1)] = value[1:-1]
        else:
            pairs[m.group(1)] = _whole_number(value)
        at = m.end()
    if at < len(text.rstrip()) or not pairs:
        whole = text.strip()
        quoted = len(whole) > 1 and whole[0] in "\"'" and whole[-1] == whole[0]
        return {"input": whole[1:-1] if quoted and whole[0] not in whole[1:-1] else whole}
    return pairs


def _whole_number(value: str) -> int | str:
    """A plan's value as written, a whole number as a number (``"8"`` → 8, ``"8a"`` stays)."""
    return int(value) if re.fullmatch(r"-?\d+", value) else value


_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
"""Template syntax (Jinja, handlebars: ``{{ x }}``, ``{% for x in y %}``, ``{# note #}``):
references and control text, not plan steps."""


_TAG = re.compile(
    r"</?[A-Za-z_][\w.:-]*(?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:\"[^\"]*\"|'[^']*'))*\s*/?>"
)
"""An XML (or HTML) tag: its element and attribute names are markup, its attribute values
what it says."""
_ATTRIBUTE_VALUE = re.compile(r"=\s*(?:\"([^\"]*)\"|'([^']*)')")


_HEADING = re.compile(r"(?m)^[ \t]*(#{1,6})[ \t]+(.*?)[ \t#]*$")
"""A markdown heading line: its level (the ``#`` signs) and its title."""
_PLAN_TITLE = re.compile(r"(?i)^[\d.)\s]*(?:[a-z]+\s+)?plan\b")
"""A heading titling a plan (``2. Plan``, ``Updated plan``, ``Plan of action``)."""
_END_PLAN = re.compile(r"(?i)<end_plan>")


def _plan_section(text: str) -> str | None:
    r"""The plan section of an answer in markdown sections, None when it has none: after the
    first heading titling a plan (:data:`_PLAN_TITLE`), up to the next heading of its level or
    above or an ``<end_plan>`` tag. A planner that surveys facts before it plans (smolagents'
    planning steps: ``## 1. Facts survey``, then ``## 2. Plan``) names things there that are
    no steps.

    >>> _plan_section("## 1. Facts survey\n- the registry\n## 2. Plan\n1. pick\n<end_plan>")
    '\n1. pick\n'
    >>> _plan_section("1. pick\n2. ship") is None
    True
    """
    if "#" not in text:
        return None
    headings = list(_HEADING.finditer(text))
    for i, h in enumerate(headings):
        if _PLAN_TITLE.match(h.group(2)):
            level = len(h.group(1))
            after = (g.start() for g in headings[i + 1 :] if len(g.group(1)) <= level)
            end = next(after, len(text))
            if (tag := _END_PLAN.search(text, h.end(), end)) is not None:
                end = tag.start()
            return text[h.end() : end]
    return None


def _untemplated(text: str) -> str:
    """``text`` with its template syntax and its markup's names (XML tags and attributes)
    blanked out, every other character (attribute values too) where it was.

    >>> _untemplated("{% for s in steps %}- {{ s }}{% endfor %} then pay").split()
    ['-', 'then', 'pay']
    >>> _untemplated('<plan><step id="pick" tool="wms">now</step></plan>').split()
    ['pick', 'wms', 'now']
    """
    text = _TEMPLATE.sub(lambda m: " " * len(m.group()), text)
    return _TAG.sub(_tag_values, text) if "<" in text else text


def _tag_values(tag: re.Match[str]) -> str:
    """A tag blanked out but for its attribute values, each where it was."""
    whole = tag.group()
    out = [" "] * len(whole)
    for v in _ATTRIBUTE_VALUE.finditer(whole):
        group = 1 if v.group(1) is not None else 2
        out[v.start(group) : v.end(group)] = whole[v.start(group) : v.end(group)]
    return "".join(out)


def _hands_out(arguments: str, answer: str) -> bool:
    """Whether a call's arguments (JSON) hold the caller's whole answer as one string: how it
    answered (a framework's final-answer tool), not more of what it said."""
    if not (whole := answer.strip()):
        return False
    try:
        stack = [safejson.loads(arguments)]
    except ValueError:
        return False
    while stack:
        v = stack.pop()
        if isinstance(v, str) and v.strip() == whole:
            return True
        stack.extend(v.values() if isinstance(v, dict) else v if isinstance(v, list) else ())
    return False


_NUMBERING = re.compile(r"[ \t]+\d+[ \t]*[:.)]")
"""After a word that numbers a list item (``Step 2:``, ``Task 3.``): the word is no name."""


_KEYED = re.compile(r"(?<![\w.-])([A-Za-z_][\w-]*)[ \t]*=(?![=>])")
"""A name given a value with ``=`` (``tool="x"``, ``call=x``, ``k = 8``; not ``==`` or ``=>``):
written so in two or more places of a plan, a key its items state (:func:`_step_names`)."""


_FUNCTION_WORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "some", "any", "each", "every", "no",
    "all", "both", "either", "neither",
    "i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her", "it",
    "its", "they", "them", "their",
    "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "upon", "about",
    "above", "below", "over", "under", "after", "before",
    "between", "through", "during", "without", "within", "across", "along", "among", "against",
    "around", "as", "per", "via", "than",
    "and", "or", "nor", "but", "so", "yet", "if", "then", "else", "when", "while", "where",
    "whether", "because", "unless", "until", "though",
    "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "has", "have",
    "had", "will", "would", "shall", "should", "can", "could",
    "may", "might", "must", "not",
})  # fmt: skip
"""English function words (articles, pronouns, prepositions, conjunctions, auxiliaries): a
closed class, the words any sentence is built with, never a name a plan gives a step
(:func:`_step_names`), however often an attempt's prose carries one (``the holding of it``)."""


def _step_names(
    text: str,
    data: set[str],
    later: _Later,
    called: Callable[[Any], str],
    first: bool = True,
    earlier: Iterable[str] = (),
) -> tuple[list[tuple[str, int]], set[str]]:
    """The step names of an answer and where each first stands in it (:func:`read_plans`): a
    name some later attempt carries, and none that carries an earlier step name (a word that
    numbers items, ``Step 1:``, is none; nor is a word every later attempt carries, when the
    names after it are steps, or the one after it lists more others the way it is listed:
    ``Plan 1 (…)`` heading every executor message, also of a run stuck in its first step);
    tools the attempts called name their items' labels (:func:`_labelled`). Also the words
    found to be such a heading. Only in the ``first`` plan are the planner's own runs
    (re-planning between its workers' attempts, not told the heading) left out, and does one
    name below the heading count: a re-plan's later attempts may all be of one step, whose
    tool then lists the re-plan's other calls.
    A word the answer gives a value with ``=`` in two or more places (:data:`_KEYED`) is a
    key its items state (``tool="..."`` in every item), never a step: a re-plan's later
    attempts, all of one step and each handed its item, carry it before the step's name.
    A sentence's function word (:data:`_FUNCTION_WORDS`, any case) is no step either: a plan's
    prose (a title, an item's sentence) writes ``of`` or ``to`` before any step's name, and the
    attempts whose handed prose carries it would make it a step that hides the real names.
    A name written right after a step's name and a dot (``$fetch.total``, ``fetch.rows.first``:
    a step of this answer or of the planner's ``earlier`` plans) is a field of that step's
    result, no step: a condition or an argument referring to an earlier result writes it before
    the step that reads it, whose attempts are told the same word in its prose.

    >>> index = _Carriers([SpanNode("e1", "", "step", "x", step_name="x", start_ns=1),
    ...     SpanNode("e2", "", "step", "y", step_name="y", start_ns=2)],
    ...     {"e1": {"weigh"}, "e2": {"sedate", "anxious"}})
    >>> text = "weigh -> scale\\nif $weigh.anxious:\\n  sedate -> pharmacy (the anxious dog)"
    >>> _step_names(text, set(), index.later(0, set(), ""), lambda name: "")[0]
    [('weigh', 0), ('sedate', 36)]
    """

    def scan(skip: set[str]) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        seen: set[str] = set()
        found = set(earlier)
        reference = -1  # where the last step name, or field of one, read ends (``$a.b.c``)
        for m in _WORD.finditer(text):
            name = m.group()
            if reference >= 0 and m.start() == reference + 1 and text[reference] == ".":
                reference = m.end()
                continue  # a field of an earlier step's result: not seen, no step
            reference = m.end() if name in found else -1
            if name in seen or name in skip or _NUMBERING.match(text, m.end()):
                continue
            seen.add(name)
            if later.carry(name) and not any(later.carry(name, step) for step, _ in out):
                out.append((name, _item_at(text, name, m.start(), later, called)))
                found.add(name)
        return sorted(out, key=lambda f: f[1])

    keys = Counter(_KEYED.findall(text))
    data = data | {key for key, count in keys.items() if count >= 2}
    data |= {word for word in set(_WORD.findall(text)) if word.lower() in _FUNCTION_WORDS}
    out = scan(data)
    listed = _listed_like(text, _labelled(text, out, called), data, called)
    shared = {n for n, _ in out if later.every(n, workers=first)} if len(out) < 2 else set()
    if shared and (again := scan(data | shared)):
        # the one name below the heading is a step when it lists more others than the heading
        # does (a run that stopped in its first step: every attempt carries both)
        relisted = _listed_like(text, _labelled(text, again, called), data, called)
        if len(again) >= 2 or (first and len(relisted) > len(listed)):
            return relisted, shared
    return listed, set()


def _line_at(text: str, at: int) -> tuple[int, int]:
    """Where the line around ``at`` starts and ends: a line break, or one written as ``\\n``
    inside a JSON string (an agent's answer recorded as a JSON document)."""
    escaped = text.rfind("\\n", 0, at)
    starts = (text.rfind("\n", 0, at) + 1, escaped + 2 if escaped >= 0 else 0)
    ends = [e for e in (text.find("\n", at), text.find("\\n", at)) if e >= 0]
    return max(starts), min(ends, default=len(text))


def _item_at(text: str, name: str, at: int, later: _Later, called: Callable[[Any], str]) -> int:
    r"""Where a step name found at ``at`` stands in its item: the first line from there
    naming it beside a tool its attempts called (the request's data echoed before the plan, as
    an agent run's answer repeating its task does, mentions the name before the item that
    gives its call), else ``at``.

    >>> index = _Carriers([SpanNode("e", "", "step", "x", step_name="x", start_ns=1)],
    ...     {"e": {"oven", "bake"}})
    >>> text = "Order: oven 2\n- oven: bake slot=2"
    >>> _item_at(text, "oven", 7, index.later(0, set(), ""), {"bake": "bake"}.get)
    16
    """
    for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text[at:]):
        words = _WORD.findall(text, *_line_at(text, at + m.start()))
        if any(w != name and (t := called(w)) and later.carry(name, t) for w in words):
            return at + m.start()
    return at


_Postings = tuple[list[int], list[int]]
_NOWHERE: _Postings = ([], [])


class _Carriers:
    """Which executor attempts (in start order) carry which names, indexed so that asking
    whether an attempt after a planner carries a name (or two names) costs a binary search,
    not a scan of every later attempt: a long plan-less trace has thousands of candidate
    answers and thousands of attempts after each.

    >>> a = [SpanNode("e1", "", "step", "x", step_name="x", start_ns=1),
    ...      SpanNode("e2", "", "step", "y", step_name="y", start_ns=2)]
    >>> index = _Carriers(a, {"e1": {"pick", "wms"}, "e2": {"ship"}})
    >>> later = index.later(2, set(), "")
    >>> (later.carry("ship"), later.carry("pick"), index.later(0, {"e2"}, "x").carry("ship"))
    (True, False, False)
    """

    def __init__(self, attempts: Sequence[SpanNode], carried: Mapping[str, set[str]]) -> None:
        self.ids = [a.span_id for a in attempts]
        self.position = {span_id: i for i, span_id in enumerate(self.ids)}
        self.starts = [a.start_ns for a in attempts]
        self.names = [a.step_name for a in attempts]
        self.agents = [_uncounted(name) for name in self.names]  # whose run (:meth:`_Said.planner`)
        self.runs_of: dict[str, list[int]] = {}
        for i, agent in enumerate(self.agents):
            self.runs_of.setdefault(agent, []).append(i)
        self.words = [carried[a.span_id] for a in attempts]
        postings: dict[str, list[int]] = {}
        for i, words in enumerate(self.words):
            for word in words:
                postings.setdefault(word, []).append(i)
        self.lists = {word: self._runs(at) for word, at in postings.items()}
        self.pairs: dict[tuple[str, str], _Postings] = {}
        self.sets: dict[str, frozenset[int]] = {}
        # what every attempt carries, when they are of several steps (an app's prefix in
        # every span's name), names no step
        several = len(set(self.names)) >= 2
        self.everywhere: set[str] = set.intersection(*self.words) if several else set()

    def _runs(self, at: list[int]) -> _Postings:
        """Positions, and for each the index of the next one of another agent (what
        :meth:`_Later.carry` skips the planner's runs by: ``plan r2`` is ``plan r1``'s agent)."""
        agents = self.agents
        ends = [len(at)] * len(at)
        for j in range(len(at) - 2, -1, -1):
            ends[j] = ends[j + 1] if agents[at[j]] == agents[at[j + 1]] else j + 1
        return at, ends

    def carrying(self, name: str, also: str = "") -> _Postings:
        """The attempts that carry ``name`` (and ``also``: computed once per pair)."""
        if not also:
            return self.lists.get(name, _NOWHERE)
        key = (name, also) if name < also else (also, name)
        if key not in self.pairs:
            both = self._set(name) & self._set(also)  # C's set intersection: each pair once
            self.pairs[key] = self._runs(sorted(both))
        return self.pairs[key]

    def _set(self, name: str) -> frozenset[int]:
        if name not in self.sets:
            self.sets[name] = frozenset(self.carrying(name)[0])
        return self.sets[name]

    def later(self, start_ns: int, skip: set[str], me: str) -> _Later:
        """The attempts started at or after ``start_ns``, but those in ``skip`` and, when
        ``me`` is set, those of the step ``me``."""
        return _Later(self, bisect_left(self.starts, start_ns), skip, me)


@dataclass(frozen=True)
class _Later:
    """Some attempts of a :class:`_Carriers` index (:meth:`_Carriers.later`)."""

    index: _Carriers
    first: int
    skip: set[str]
    me: str

    def every(self, name: str, workers: bool = False) -> bool:
        """Whether every one of these attempts (at least two) carries ``name``; with
        ``workers``, the planner's own runs and those skipped are none of them."""
        index = self.index
        at, _ = index.carrying(name)
        if not workers:
            count = len(index.ids) - self.first
            return count >= 2 and len(at) - bisect_left(at, self.first) == count
        mine = index.runs_of.get(self.me, []) if self.me else []
        gone = {
            *mine[bisect_left(mine, self.first) :],
            *(i for s in self.skip if (i := index.position.get(s, -1)) >= self.first),
        }
        count = len(index.ids) - self.first - len(gone)
        carrying = len(at) - bisect_left(at, self.first) - sum(name in index.words[i] for i in gone)
        return count >= 2 and carrying == count

    def carry(self, name: str, also: str = "") -> bool:
        """Whether one of these attempts carries ``name`` (and ``also``, when given)."""
        at, ends = self.index.carrying(name, also)
        agents, ids = self.index.agents, self.index.ids
        j = bisect_left(at, self.first)
        while j < len(at):
            if self.me and agents[at[j]] == self.me:
                j = ends[j]  # skip the planner's own runs at once: they may be all of them
            elif ids[at[j]] in self.skip:
                j += 1
            else:
                return True
        return False


_MARK = re.compile(r"[ \t]*[^\w\s\"'`(\[{<]+(?=[ \t])")
"""The mark after a name that starts its line, before a space (``:``, `` =``, `` ->``)."""


def _listed_like(
    text: str, found: list[tuple[str, int]], data: set[str], called: Callable[[Any], str]
) -> list[tuple[str, int]]:
    """The step names found, and the names the answer lists the way it lists them (steps no
    executor reached yet): each found name starts its line after the same marker, digits taken
    as any number (``2) ``, ``1. **``, ``Step 3: ``, an indented ``{"id": "``), or, with no
    marker, before the same mark (:data:`_MARK`); other lines starting so name steps too (when
    one name was found after a marker with letters and no number, or before a mark, only if
    its item names a tool the trace called). Else a list on one line (:func:`_run_on`)."""
    contexts = {re.sub(r"\d+", "0", text[text.rfind("\n", 0, at) + 1 : at]) for _, at in found}
    if len(contexts) != 1:
        return _run_on(text, found, data)
    (marker,) = contexts
    after = ""
    if not marker.strip():
        # names that start their lines: listed the same way when the same mark follows each
        # (``lookup:``, ``pick =``), a bare word at a line's start being any sentence's
        marks = {_MARK.match(text, at + len(name)) for name, at in found}
        if None in marks or len({m.group() for m in marks if m}) != 1:
            return found
        after = re.escape(next(m.group() for m in marks if m))
    pattern = "".join(
        r"\d+" if part == "0" else re.escape(part) for part in re.split("(0)", marker)
    )
    names = {name for name, _ in found}
    more: dict[str, tuple[str, int]] = {}
    for m in re.finditer(f"(?m)^{pattern}({_WORD.pattern}){after}", text):
        if m.group(1) not in names and m.group(1) not in data:
            more.setdefault(m.group(1), (m.group(1), m.start(1)))
    if len(found) == 1 and (after or (re.search(r"[A-Za-z]", marker) and "0" not in marker)):
        # one name found after a worded marker (``id = "``) lists the others only when its
        # item also names a tool the trace called: an item of a plan, not any such line
        ((name, at),) = found
        end = min((a for _, a in more.values() if a > at), default=len(text))
        if not any(called(w) for w in _WORD.findall(text, at + len(name), end)):
            return found
    return sorted(found + list(more.values()), key=lambda f: f[1])


_ITEM_LABEL = re.compile(
    rf"(?m)^[ \t]*(?:[A-Za-z]+[ \t]+)?\d+[ \t]*[^\w\s]*[ \t]*({_WORD.pattern})[ \t]*:"
)
"""A numbered item's label: the name after its number and before a colon (``Step 2 — pick:``,
``1. pick:``, ``Task 3) pick:``)."""


def _labelled(
    text: str, steps: list[tuple[str, int]], called: Callable[[Any], str]
) -> list[tuple[str, int]]:
    r"""Steps found by the tools their attempts called (every name a tool called in the trace,
    :func:`_called`), each named instead by the label of the numbered item it stands in
    (:data:`_ITEM_LABEL`: the last label before it, after the step before it), when every step
    has one and they are distinct names, none a tool: a plan whose items name the tool they
    call (``Step 1 — find: ...`` then ``Call search with ...``). Else the steps as found.

    >>> text = "Step 1 — find: look\nCall A-search\nStep 2 — pay: buy\nCall A-charge"
    >>> _labelled(text, [("search", 27), ("charge", 61)], _called({"A-search", "A-charge"}))
    [('find', 9), ('pay', 43)]
    """
    if not steps or not all(called(name) for name, _ in steps):
        return steps
    out: list[tuple[str, int]] = []
    after = 0
    for name, at in steps:
        labels = list(_ITEM_LABEL.finditer(text, after, at))
        if not labels or called(label := labels[-1].group(1)):
            return steps
        out.append((label, labels[-1].start(1)))
        after = at + len(name)
    return out if len({name for name, _ in out}) == len(out) else steps


def _run_on(text: str, found: list[tuple[str, int]], data: set[str]) -> list[tuple[str, int]]:
    """The step names found, and the names that continue them when they stand one after the
    other on one line with the same short separator and no letter in it (``", "`` in
    ``["extract", "validate", ...]``): the list goes on as long as that separator does."""
    ordered = sorted(found, key=lambda f: f[1])
    gaps = {text[at + len(name) : nxt] for (name, at), (_, nxt) in pairwise(ordered)}
    if len(gaps) != 1:
        return found
    (gap,) = gaps
    if not gap or len(gap) > 8 or "\n" in gap or re.search(r"[A-Za-z0-9]", gap):
        return found
    names = {name for name, _ in found}
    name, at = ordered[-1]
    more: list[tuple[str, int, int]] = []
    for m in re.finditer(re.escape(gap) + f"({_WORD.pattern})", text[at + len(name) :]):
        if m.start() != (more[-1][2] if more else 0) or m.group(1) in names | data:
            break
        more.append((m.group(1), at + len(name) + m.start(1), m.end()))
    return ordered + [(n, a) for n, a, _ in more]


def _read_plan(
    span_id: str, said: str, steps: list[tuple[str, int]], called: Callable[[Any], str]
) -> ReadPlan:
    """The plan a planner said (``said``, :func:`read_plans`) with its step names at these
    places: each step's tool and arguments from its part of the text (up to the next step's
    name; its tool also its name, when a tool called in the trace is so named)."""
    decoder = json.JSONDecoder()
    objects = []
    for i, (name, start) in enumerate(steps):
        end = steps[i + 1][1] if i + 1 < len(steps) else len(said)
        part = said[start + len(name) : end]
        # a step named by the tool it calls (found by the tools attempts called) calls it
        tool = next((t for w in [name, *_WORD.findall(part)] if (t := called(w))), "")
        args: Any = None
        for brace in re.finditer(r"\{", part):
            try:
                value, _ = decoder.raw_decode(part, brace.start())
            except ValueError:
                continue
            if isinstance(value, dict):
                args = value
                break
        if args is None:
            args = _pairs(part, {name, tool}) or None
        step: dict[str, Any] = {"id": name, "tool": tool}
        if args is not None:
            step["args"] = args
        objects.append(step)
    return _as_plan(span_id, objects)


_KEY_VALUE = re.compile(
    r"""<[A-Za-z_][\w.:-]*[ \t]+[A-Za-z_][\w.:-]*[ \t]*=[ \t]*"""
    r"""(?:"([A-Za-z_]\w*)"|'([A-Za-z_]\w*)')[ \t]*>([^<>\n]+)</[A-Za-z_][\w.:-]*>|"""
    r"""(?<![\w.-])(?:[A-Za-z_]\w*[.-])*([A-Za-z_]\w*)(?:[ \t]*[=:][ \t]*|[ \t]+(?=["']))"""
    r"""("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,;"'()\[\]{}<>`]+"""
    r"""(?=[ \t]*(?:[,;|)\]}>\n]|<[Bb][Rr]\b|$)))"""
    r"""|\([ \t]*([A-Za-z_]\w*)[ \t]+("[^"\n]*"|[^\s()"]+)[ \t]*\)"""
)
"""A key and its value, however a plan writes them: ``k="v"``, ``k = 8``, ``k: v`` (a value
that ends there: not the first word of a sentence; an HTML line break, ``<br/>``, ends it as a
line's end does: a Mermaid node's label, a Markdown table's cell writes its lines so),
``k "v"``, ``args.k = v``, ``arg-k: v``,
``(k "v")``, an element its one attribute names (``<arg name="k">v</arg>``)."""


_QUERY = re.compile(
    r"""(?<![^\s,;|(\[{"'>])[A-Za-z_][\w.-]*=[^\s&=,;"'<>`()\[\]{}]*"""
    r"""(?:&[A-Za-z_][\w.-]*=[^\s&=,;"'<>`()\[\]{}]*)+(?=$|[\s,;|)\]}"'<])"""
)
"""A URL query string on its own (``application/x-www-form-urlencoded``: ``k=v&k2=v2``, at
least two pairs, no space; a plan's arguments written as a request's query), not inside a URL
(its ``?`` or ``/`` before it: the URL is one value)."""


def _pairs(text: str, names: set[str]) -> dict[str, Any]:
    """The arguments a step's part of a plan states as keys and values (:data:`_KEY_VALUE`),
    in any syntax: quotes dropped (a CSV cell's doubled ones too), whole numbers as numbers; a
    pair whose value is the step's own name or tool (``names``: the step's id, ``tool = x``)
    says what the step is, not an argument, and so does a value with no letter or digit. A
    URL query string (:data:`_QUERY`) is form-decoded pair by pair (``+`` a space, ``%26`` an
    ampersand), as a web form's server reads it: its ``&`` separates arguments.

    >>> _pairs('create_po(sku="A1", qty=8) (dock "B 2") args.date = 2026-04-11', {"create_po"})
    {'sku': 'A1', 'qty': 8, 'dock': 'B 2', 'date': '2026-04-11'}
    >>> _pairs('Plan: Call search with q=""ACME""; tool: search', {"search"})
    {'q': 'ACME'}
    >>> _pairs("3,book,book_van,van=ref:find&day=2027-01-05&depot=North+%26+East,Book it", {"book"})
    {'van': 'ref:find', 'day': '2027-01-05', 'depot': 'North & East'}
    >>> _pairs("s2[close<br/>tool: desk.close<br/>day=2027-06-09<br/>part=@s1.id]", {"s2"})
    {'tool': 'desk.close', 'day': '2027-06-09', 'part': '@s1.id'}
    """
    pairs: list[tuple[str, str]] = []
    if "&" in text:  # most parts have none: the query pattern is not tried on them
        for q in _QUERY.finditer(text):
            pairs += parse_qsl(q.group(0), keep_blank_values=True)
        text = _QUERY.sub(" ", text)
    for m in _KEY_VALUE.finditer(text.replace('""', '"')):
        if m.group(3) is not None:  # an element named by its one attribute: ``<a k="x">v</a>``
            key, value = m.group(1) or m.group(2), m.group(3).strip()
        else:
            key, value = (m.group(4), m.group(5)) if m.group(4) else (m.group(6), m.group(7))
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
            value = value[1:-1]
        pairs.append((key, value))
    out: dict[str, Any] = {}
    for key, value in pairs:
        if value not in names and re.search(r"[^\W_]", value):
            out.setdefault(key, _whole_number(value))
    return out


def _as_plan(span_id: str, objects: list[dict[str, Any]]) -> ReadPlan:
    """A read plan from its step objects (``id``, ``tool``, ``args`` when given), in order
    (a YAML date or time among the arguments as its text)."""
    return ReadPlan(
        span_id,
        tuple(ObservedStep(span_id, s["id"], s["tool"], i) for i, s in enumerate(objects)),
        json.dumps(objects, default=str),
    )


def _names(text: str, step_id: str) -> bool:
    """Whether ``text`` names ``step_id`` as a whole word (not inside a longer name)."""
    # the substring test first: the pattern is one per step id (compiled, or looked up in
    # re's cache, at every call), and most texts hold none
    return (
        bool(step_id)
        and step_id in text
        and re.search(rf"(?<![\w-]){re.escape(step_id)}(?![\w-])", text) is not None
    )


def _start(nodes: dict[str, SpanNode], span_id: str) -> tuple[int, str]:
    node = nodes.get(span_id)
    return (node.start_ns if node is not None else 0, span_id)


def _plan_before(plans: Sequence[str], nodes: dict[str, SpanNode], start_ns: int) -> str | None:
    """The latest observed plan that started before an attempt (else the first plan); ``plans``
    in start order (a binary search: a planner that re-plans after every step has thousands)."""
    before = bisect_right(plans, start_ns, key=lambda p: _start(nodes, p)[0])
    return plans[before - 1] if before else (plans[0] if plans else None)


def _workflow_plan(
    nodes: dict[str, SpanNode], children: dict[str, list[SpanNode]]
) -> WorkflowPlan | None:
    """The first workflow span (by start) with inferred step spans right under it: their
    names in start order, a retried task once; a task depends on the sibling tasks its spans
    link to."""
    workflows = [n for n in nodes.values() if n.workflow]
    for w in sorted(workflows, key=lambda n: (n.start_ns, n.span_id)):
        tasks = sorted(
            (
                c
                for c in children.get(w.span_id, ())
                if c.kind == "step" and c.inferred and c.step_name
            ),
            key=lambda c: (c.start_ns, c.span_id),
        )
        if not tasks:
            continue
        names = {t.span_id: t.step_name for t in tasks}
        steps = tuple(dict.fromkeys(names.values()))
        depends: dict[str, set[str]] = {}
        for t in tasks:
            linked = {names[link] for link in t.links if link in names} - {t.step_name}
            if linked:
                depends.setdefault(t.step_name, set()).update(linked)
        return WorkflowPlan(
            w.span_id,
            steps,
            {s: tuple(d for d in steps if d in depends[s]) for s in steps if s in depends},
        )
    return None


def _ancestors(nodes: Mapping[str, SpanNode], span_id: str) -> list[str]:
    """The span ids above a span, nearest first (a broken chain or a cycle ends the walk)."""
    out: list[str] = []
    current = nodes[span_id].parent_span_id if span_id in nodes else ""
    while current in nodes and len(out) < _MAX_DEPTH and current != span_id:
        out.append(current)
        current = nodes[current].parent_span_id
    return out


def _grouping_run(nodes: dict[str, SpanNode], children: dict[str, list[SpanNode]]) -> str | None:
    if any(s.kind == "run" for s in nodes.values()):
        return None
    roots = [s for s in nodes.values() if s.parent_span_id == "" and s.kind == "other"]

    def steps_under(span_id: str) -> bool:
        return any(c.kind == "step" and c.inferred for c in children.get(span_id, ()))

    for root in sorted(roots, key=lambda s: (s.start_ns, s.span_id)):
        if steps_under(root.span_id):
            return root.span_id
    # the app's root over a framework's graph (OpenInference's ``LangGraph`` CHAIN under the
    # app's own span per job: its node visits are the steps), over an SDK's trace and task
    # spans (Logfire's openai-agents ``OpenAI Agents trace`` over ``Task: Agent workflow``
    # over the agent runs), over an app's step spans under a framework's own span (Griptape's
    # ``main``): the root above them, through plain spans, is the run
    for root in sorted(roots, key=lambda s: (s.start_ns, s.span_id)):
        stack = [c for c in children.get(root.span_id, ()) if c.kind == "other"]
        while stack:
            c = stack.pop()
            if steps_under(c.span_id):
                return root.span_id
            stack.extend(g for g in children.get(c.span_id, ()) if g.kind == "other")
    return None


_WORK = (A.KIND_TOOL, A.KIND_LLM)
"""The kinds of span that are work a step did itself."""


def _idle_steps(nodes: Mapping[str, SpanNode], flat: set[str]) -> frozenset[str]:
    """A flat workflow's (``flat``: its spans, :func:`_flat_turns`) own steps that do no work
    (setup, parsing, a model call's preparation, the tool's own span): the inferred steps under
    it that are no tool or LLM call's nearest step. They answer nothing and are no attempts."""
    if not flat:
        return frozenset()
    working = {
        next((a for a in _ancestors(nodes, n.span_id) if nodes[a].kind == A.KIND_STEP), "")
        for n in nodes.values()
        if n.kind in _WORK
    }
    return frozenset(
        n.span_id
        for n in nodes.values()
        if n.kind == A.KIND_STEP
        and n.inferred
        and n.span_id not in working
        and not flat.isdisjoint(_ancestors(nodes, n.span_id))
    )


def _flat_turns(
    nodes: Mapping[str, SpanNode], children: Mapping[str, list[SpanNode]]
) -> dict[str, str]:
    """Tool span -> the turn it is the work of, in a workflow that runs each of its steps as a
    span right under it (OpenLLMetry's LlamaIndex ``AgentWorkflow``: the model's turn, then the
    ``call_tool`` step beside it): a tool call right under an inferred step (not a run: an
    app's own call after its steps), beside inferred steps, is the work of the latest inferred
    step before it (same parent) that called the model itself and had ended when the call
    started."""
    out: dict[str, str] = {}
    for parent, kids in children.items():
        owner = nodes.get(parent)
        # under a run, a tool call beside its steps is the run's own (an app's check after them)
        if owner is None or not owner.inferred or owner.kind != A.KIND_STEP:
            continue
        if not any(k.kind == A.KIND_TOOL for k in kids):
            continue
        turn: SpanNode | None = None
        for k in sorted(kids, key=lambda n: (n.start_ns, n.span_id)):
            if k.kind == A.KIND_STEP and k.inferred:
                if any(c.kind == A.KIND_LLM for c in children.get(k.span_id, ())):
                    turn = k
            elif (
                k.kind == A.KIND_TOOL
                and turn is not None
                and turn.start_ns + turn.duration_ns <= k.start_ns
            ):
                out[k.span_id] = turn.span_id
    return out


def _children(nodes: Mapping[str, SpanNode]) -> dict[str, list[SpanNode]]:
    """Each span id's child spans."""
    out: dict[str, list[SpanNode]] = {}
    for node in nodes.values():
        out.setdefault(node.parent_span_id, []).append(node)
    return out


def _invocations(nodes: dict[str, SpanNode], children: dict[str, list[SpanNode]]) -> frozenset[str]:
    """In a trace where the span model found no step or plan, the unclassified spans right
    under an unclassified root (the application's own span) or an inferred run (a framework's
    agent) that enclose LLM or tool calls: a framework's calls (a DSPy module's ``forward``, an
    OpenInference CHAIN) that the application or agent made, each an agent invocation (an
    inferred step attempt named as its span), and those beside them that failed enclosing no
    call (a Burr action, an app's own check that raised; a Logfire log is no span here: an
    event of its span); and an app's step spans (:func:`_names_step`) wherever they are, a
    span above them being none."""
    if any(n.kind in (A.KIND_STEP, A.KIND_PLAN) for n in nodes.values()):
        return frozenset()
    # an app's own span named after the step it does (``app.step pick``) is that step's
    # attempt, wherever it is (also when no call under it is one the span model knows)
    out = {n.span_id for n in nodes.values() if n.kind == A.KIND_OTHER and _names_step(n)}
    above = {a for span_id in out for a in _ancestors(nodes, span_id)}
    for root in nodes.values():
        if root.parent_span_id or not (
            root.kind == A.KIND_OTHER or (root.kind == A.KIND_RUN and root.inferred)
        ):
            continue
        plain = [
            c
            for c in children.get(root.span_id, ())
            if c.kind == A.KIND_OTHER and c.span_id not in above
        ]
        invoked = _stepwise(
            {c.span_id for c in plain if _encloses_work(c.span_id, children)}, children
        )
        # beside them, one that failed with no call in it (a Burr action or an app's own check
        # that raised) is one too
        if invoked:
            invoked |= {c.span_id for c in plain if c.failed}
        out |= invoked
    return frozenset(out)


def _delegated(nodes: Mapping[str, SpanNode], children: Mapping[str, list[SpanNode]]) -> set[str]:
    """The inferred agent runs a team's run delegated to: right under an inferred agent run
    that is itself a step attempt, beside a tool call of it made before it whose arguments name
    the run's agent as a whole value, a word of the run's name (a team leader's delegation:
    Agno's coordinate mode calls ``delegate_task_to_member`` with the member's id, and
    OpenInference's Agno instrumentor records the member's run, ``{member}.run``, beside that
    call, under the team run). Such a member is the agent
    doing the team run's work, not a step (its name is every attempt's).

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("t", "a", "step", "desk.run", step_name="desk.run"),
    ...     SpanNode("d", "t", "tool", "delegate", tool="delegate", start_ns=1,
    ...              answer='{"member_id": "porter", "task": "hire the van"}'),
    ...     SpanNode("m", "t", "step", "porter.run", step_name="porter.run", start_ns=2),
    ...     SpanNode("o", "t", "step", "other.run", step_name="other.run", start_ns=3),
    ... ]}
    >>> sorted(_delegated(nodes, _children(nodes)))
    ['m']
    """
    out: set[str] = set()
    for m in nodes.values():
        team = nodes.get(m.parent_span_id)
        if not (m.kind == A.KIND_STEP and m.inferred) or team is None:
            continue
        if not (team.kind == A.KIND_STEP and team.inferred):
            continue
        names = set(_WORD.findall(m.step_name or m.name))  # ``porter.run``: the agent's run
        for call in children.get(team.span_id, ()):
            if call.kind != A.KIND_TOOL or call.start_ns > m.start_ns or not call.answer:
                continue
            try:
                arguments = json.loads(call.answer)
            except ValueError:
                continue
            if not isinstance(arguments, dict):
                continue
            # a name given as a whole value; lists, objects and numbers name no member
            if names & {v for v in arguments.values() if isinstance(v, str)}:
                out.add(m.span_id)
                break
    return out


def _stepwise(calls: set[str], children: Mapping[str, list[SpanNode]]) -> set[str]:
    """Framework calls (:func:`_invocations`) as invocations: a call that makes no LLM or tool
    call itself and has two or more plain spans right under it that enclose calls is a run of
    steps (a LlamaIndex ``Workflow.run`` over its ``@step`` methods, each a CHAIN): each of
    those is an invocation instead, read the same way; any other call is one.

    >>> spans = [SpanNode("w", "", "other", "Flow.run"),
    ...          SpanNode("p", "w", "other", "Flow.plan"), SpanNode("l", "p", "llm", "chat"),
    ...          SpanNode("x", "w", "other", "Flow.act"), SpanNode("a", "x", "other", "Agent.run"),
    ...          SpanNode("t", "a", "tool", "pay"), SpanNode("u", "a", "tool", "log"),
    ...          SpanNode("r", "w", "other", "Flow.review")]
    >>> sorted(_stepwise({"w"}, _children({s.span_id: s for s in spans})))
    ['p', 'x']
    """
    out: set[str] = set()
    stack = list(calls)
    for _ in range(_MAX_DEPTH):
        if not stack:
            break
        span_id = stack.pop()
        under = children.get(span_id, ())
        steps = [c.span_id for c in under if c.kind == A.KIND_OTHER]
        steps = [c for c in steps if _encloses_work(c, children)]
        if len(steps) < 2 or any(c.kind in (A.KIND_LLM, A.KIND_TOOL) for c in under):
            out.add(span_id)
        else:
            stack.extend(steps)
    return out | set(stack)


def _function_span(n: SpanNode) -> bool:
    """Whether a span is a traced function's (a call that records what it was given and gave
    back: :func:`_function_calls`), not an app's step span."""
    return any(n.io) and not _names_step(n)


_STEP_SPAN_NAME = "^[A-Za-z_][A-Za-z0-9_-]*([.][A-Za-z0-9_-]+)*[.]step +[A-Za-z_][A-Za-z0-9_.-]*$"
"""An app's span named after the step it does: ``<prefix>.step <id>`` (``shop.step pick``)."""
_STEP_SPAN = re.compile(_STEP_SPAN_NAME)
APP_ARGUMENTS_KEY = "[.](args|arguments|inputs?|params|parameters)$"
"""An app's attribute that holds the arguments of the work its span does (``app.tool.args``):
the first such key (by key) whose value is a JSON object (a component call's, a step span's)."""
APP_RESULT_KEY = "[.](result|output)$"
"""An app's attribute that holds what the work its span does gave back (``shop.step.result``,
``app.tool.result``): the first such key (by key) whose value is not empty (a component call's,
a step span's); what it was given is under :data:`APP_ARGUMENTS_KEY`: :func:`step_io`."""


def _step_span(name: str) -> bool:
    """Whether a span's name is an app's step span (:data:`_STEP_SPAN`).

    >>> _step_span("shop.step pick"), _step_span("shop.step"), _step_span("Agent.run()")
    (True, False, False)
    """
    return _STEP_SPAN.fullmatch(name) is not None


_STEP_ID_KEY = "[.]step[.]id$"
"""An app's attribute on a plain span naming the step it does (``shop.step.id``)."""


def _names_step(n: SpanNode) -> bool:
    """Whether a plain span is an app's step span: named ``<prefix>.step <id>``
    (:func:`_step_span`), or carrying ``<prefix>.step.id`` (:attr:`SpanNode.app_step`)."""
    return _step_span(n.name) or bool(n.app_step)


def _step_id(n: SpanNode) -> tuple[str, ...]:
    """The step id an app's step span carries: its ``<prefix>.step.id``, else the id its name
    ends with (``shop.step pick``: ``pick``), if it is one.

    >>> named = SpanNode("s", "", "step", "shop.step pick", step_name="shop.step pick")
    >>> said = SpanNode("t", "", "step", "handle", step_name="handle", app_step="ship")
    >>> _step_id(named), _step_id(said), _step_id(SpanNode("e", "", "step", "executor"))
    (('pick',), ('ship',), ())
    """
    if n.app_step:
        return (n.app_step,)
    return (n.step_name.split()[-1],) if _step_span(n.step_name) else ()


def _encloses_work(span_id: str, children: Mapping[str, list[SpanNode]]) -> bool:
    """Whether an LLM or tool call is below the span (at any depth)."""
    stack = [span_id]
    for _ in range(_MAX_DEPTH):
        if not stack:
            return False
        for c in children.get(stack.pop(), ()):
            if c.kind in (A.KIND_LLM, A.KIND_TOOL):
                return True
            stack.append(c.span_id)
    return False


def _component_calls(
    nodes: Mapping[str, SpanNode], children: Mapping[str, list[SpanNode]]
) -> dict[str, str]:
    """In a trace where the span model found no tool call, the unclassified leaf spans whose
    nearest enclosing step span is an inferred attempt and that started after one of that
    attempt's LLM calls ended (the model asked for them), each with the tool its span names
    (:func:`_callable`).

    >>> spans = [SpanNode("a", "", "step", "Agent.run", step_name="Agent.run"),
    ...          SpanNode("b", "a", "other", "PromptBuilder.run", start_ns=1),
    ...          SpanNode("l", "a", "llm", "chat", start_ns=2, duration_ns=1),
    ...          SpanNode("t", "a", "other", "VenueSearch.run", start_ns=4, failed=True)]
    >>> _component_calls({s.span_id: s for s in spans}, _children({s.span_id: s for s in spans}))
    {'t': 'VenueSearch'}
    """
    if any(n.kind == A.KIND_TOOL for n in nodes.values()):
        return {}

    def attempt(span_id: str) -> str | None:
        for above in _ancestors(nodes, span_id):
            if nodes[above].kind == A.KIND_STEP:
                return above if nodes[above].inferred else None
        return None

    answered: dict[str, int] = {}  # attempt -> when its first LLM call ended
    for n in nodes.values():
        if n.kind == A.KIND_LLM and (a := attempt(n.span_id)) is not None:
            end = n.start_ns + n.duration_ns
            answered[a] = min(answered.get(a, end), end)
    return {
        n.span_id: _callable(n.name)
        for n in nodes.values()
        if n.kind == A.KIND_OTHER
        and not children.get(n.span_id)
        and (a := attempt(n.span_id)) in answered
        and n.start_ns >= answered[a]
    }


def _function_calls(
    nodes: dict[str, SpanNode],
) -> tuple[dict[str, SpanNode], dict[str, tuple[str, str]]]:
    """Plain leaf spans that record what their function was given and gave back
    (:attr:`SpanNode.io`: Burr's ``@trace()`` spans, ``_burr``), read as the calls they are:
    one that gave back a chat message is an LLM call (asked its arguments, answering the
    message: :func:`_message_answer`); one that gave back two or more mappings where no such
    LLM call is beside it (same parent) is an LLM call answering them (a structured-output
    plan, parsed); one that gave back an error envelope (``_returned``) failed, with the
    error's type and message (by span id: :attr:`Binding.returned`). An explicit ERROR stays
    as it is; the span model's own kinds (planscope's SDK spans among them) are never read so.

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("a", "", "other", "act"),
    ...     SpanNode("m", "a", "other", "ask", io=('{"q": "go"}', '{"role": "assistant", '
    ...              '"content": "ok"}')),
    ...     SpanNode("t", "a", "other", "pay", io=("{}", '{"type": "error", "error": '
    ...              '{"type": "api_error", "message": "down"}}'))]}
    >>> out, returned = _function_calls(nodes)
    >>> (out["m"].kind, out["m"].answer, out["m"].request), out["t"].failed, returned
    (('llm', 'ok', 'go'), True, {'t': ('api_error', 'down')})
    """
    parents = {n.parent_span_id for n in nodes.values()}
    io = {
        n.span_id: n
        for n in nodes.values()
        if n.kind == A.KIND_OTHER and n.io[1] and n.span_id not in parents and _function_span(n)
    }
    if not io:
        return nodes, {}
    out = dict(nodes)
    modelled: set[str] = set()  # parents of the LLM calls found
    for n in io.values():
        if _chat_message(n.io[1]):
            modelled.add(n.parent_span_id)
            out[n.span_id] = replace(
                n, kind=A.KIND_LLM, request=_asked(n.io[0]), answer=_message_answer(n.io[1])
            )
    returned: dict[str, tuple[str, str]] = {}
    for n in io.values():
        if n.span_id in out and out[n.span_id].kind != A.KIND_OTHER:
            continue
        if n.parent_span_id not in modelled and any(len(x) >= 2 for x in _item_lists(n.io[1])):
            out[n.span_id] = replace(n, kind=A.KIND_LLM, request=_asked(n.io[0]), answer=n.io[1])
        elif not n.failed and (error := returned_error(n.io[1])) is not None:
            returned[n.span_id] = error
            message = ": ".join(filter(None, error))
            out[n.span_id] = replace(n, failed=True, message=n.message or message)
    return out, returned


def _handed_errors(
    nodes: dict[str, SpanNode],
) -> tuple[dict[str, SpanNode], dict[str, tuple[str, str]]]:
    """Tool spans that ended OK whose result the next LLM call beside them (same parent) was
    handed as an error (:attr:`SpanNode.handed`: OpenInference's autogen-agentchat instrumentor
    ends a failed tool's span OK), failed, with the result's text as their message (by span id,
    no error type: :attr:`Binding.returned`). An LLM call's last function message holds the
    results of the round of calls just before it: the last calls beside it that started before
    it, the k-th call of a tool the k-th result naming that tool; a round the spans beside it do
    not all show fails none.

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("t1", "a", "tool", "dig", tool="dig", start_ns=1),
    ...     SpanNode("t2", "a", "tool", "dig", tool="dig", start_ns=3),
    ...     SpanNode("m", "a", "llm", "chat", start_ns=5, handed=(("dig", True, "rock"),))]}
    >>> out, failed = _handed_errors(nodes)
    >>> failed, out["t2"].failed, out["t2"].message, out["t1"].failed
    ({'t2': ('', 'rock')}, True, 'rock', False)
    """
    asking = [n for n in nodes.values() if n.kind == A.KIND_LLM and n.handed]
    if not asking:
        return nodes, {}
    beside: dict[str, list[SpanNode]] = {}
    for n in sorted(nodes.values(), key=lambda n: (n.start_ns, n.span_id)):
        if n.kind == A.KIND_TOOL:
            beside.setdefault(n.parent_span_id, []).append(n)
    failed: dict[str, tuple[str, str]] = {}
    for m in asking:
        before = [t for t in beside.get(m.parent_span_id, ()) if t.start_ns < m.start_ns]
        for tool in dict.fromkeys(r[0] for r in m.handed):
            results = [r for r in m.handed if r[0] == tool]
            calls = [t for t in before if t.tool == tool][-len(results) :]
            if len(calls) != len(results):
                continue
            for call, (_, error, text) in zip(calls, results, strict=True):
                if error and not call.failed:
                    failed[call.span_id] = ("", text)
    if not failed:
        return nodes, {}
    out = dict(nodes)
    for span_id, (_, text) in failed.items():
        out[span_id] = replace(out[span_id], failed=True, message=out[span_id].message or text)
    return out, failed


def _agent_tools(nodes: dict[str, SpanNode]) -> dict[str, SpanNode]:
    """Tool calls that ran an agent whose spans are traced beside the call, not under it (the
    OpenAI Agents SDK's ``Agent.as_tool`` under OpenLLMetry: the agent's run a sibling of the
    tool's span, inside its time) and gave back a list of mappings (the agent's structured
    output; a re-plan's may hold one step), read as an LLM call asked the call's arguments
    and answering its result: what that agent answered, where the agent's own model calls
    record no answer; the agent's run is then under the call (its work). Its caller is the
    planner, as of a planner that calls a model itself, and the agent's runs are no
    executor's attempts (:func:`_said`).

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("d", "", "step", "dispatch", step_name="dispatch"),
    ...     SpanNode("t", "d", "tool", "plan", tool="plan", start_ns=1, duration_ns=9,
    ...              answer='{"input": "go"}', io=("", '{"steps": [{"id": "a"}, {"id": "b"}]}')),
    ...     SpanNode("p", "", "step", "planner", step_name="planner", start_ns=2, duration_ns=5),
    ... ]}
    >>> out = _agent_tools(nodes)
    >>> out["t"].kind, out["t"].request, out["t"].answer[:10], out["p"].parent_span_id
    ('llm', 'go', '{"steps": ', 't')
    """
    agents = sorted(
        (n for n in nodes.values() if n.kind == A.KIND_STEP and n.inferred),
        key=lambda a: a.start_ns,
    )
    starts = [a.start_ns for a in agents]
    out = dict(nodes)
    for n in nodes.values():
        if n.kind != A.KIND_TOOL or not n.io[1]:
            continue
        end = n.start_ns + n.duration_ns
        ran = [
            a
            for a in agents[bisect_left(starts, n.start_ns) : bisect_right(starts, end)]
            if a.start_ns + a.duration_ns <= end
            and n.span_id not in _ancestors(nodes, a.span_id)
            and a.span_id not in _ancestors(nodes, n.span_id)
        ]
        if ran and any(_item_lists(n.io[1], least=1)):
            out[n.span_id] = replace(
                n, kind=A.KIND_LLM, request=_asked(n.answer), answer=n.io[1], io=("", "")
            )
            for a in ran:  # the call's own work, as a nesting instrumentor traces it
                out[a.span_id] = replace(a, parent_span_id=n.span_id)
    return out


def _asked(arguments: str) -> str:
    """What a function that called a model was asked: its arguments' values, one a line.

    >>> _asked('{"step": "pick", "n": 2}').split(), _asked("pick")
    (['pick', '2'], 'pick')
    """
    given = safejson.load_object(arguments) if arguments.startswith("{") else {}
    return "\n".join(str(v) for v in given.values()) or arguments


def _chat_message(text: str) -> bool:
    """Whether a recorded result is a model's chat message (an OpenAI-shaped assistant message,
    or a chat completion holding one in ``choices``).

    >>> _chat_message('{"role": "assistant", "content": "ok"}'), _chat_message('{"id": 7}')
    (True, False)
    """
    if not text.startswith("{"):
        return False
    decoded = safejson.load_object(text)
    choices = decoded.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        decoded = message if isinstance(message, dict) else {}
    return decoded.get("role") == "assistant"


def _callable(tool: str) -> str:
    """A tool's name from a span named after its call method (``search.__call__``, as
    OpenInference's DSPy instrumentor names a tool span that carries no ``tool.name``; a
    component's ``run``, as its Haystack instrumentor names a component span), or by a message
    template (Logfire's span name, ``@logfire.instrument("search {query} page {page}")``): the
    template's text before its first field.

    >>> _callable("search.__call__"), _callable("search.acall"), _callable("VenueSearch.run")
    ('search', 'search', 'VenueSearch')
    >>> _callable("search {query} page {page}"), _callable("{tool} failed")
    ('search', '{tool} failed')
    """
    fixed = re.split(r"(?<!\{)\{(?!\{)", tool, maxsplit=1)[0].strip()
    return re.sub(r"\.(__call__|acall|run|run_async)$", "", fixed or tool)


def structured_plans(
    nodes: Mapping[str, SpanNode], enclosing: Callable[[str], str | None]
) -> tuple[ReadPlan, ...]:
    r"""The plans a trace states as structured text (JSON, or YAML as in a DSPy field, or a
    markdown or delimited (CSV, TSV) table: :func:`_tables`, RFC 822 stanzas: :func:`_stanzas`,
    XML element lists: :func:`_elements`, URI lines: :func:`_uri_lines`, an Org-mode outline:
    :func:`_org_outlines`, a bullet outline: :func:`_outlines`): a list of at least two
    mappings in what a planner said (an LLM call's or inferred agent run's
    :attr:`SpanNode.answer`; the text itself, a paragraph of it, or a string inside either),
    whose **step ids** are the values of the key whose values are distinct names that executor
    attempts started after the answer carry (what their LLM calls were asked and the words of
    their own names; when no attempt's calls record what they were asked, the attempt's own
    name, as for :func:`read_plans`),
    each by attempts no earlier value is carried by (a tool every attempt is told of names no
    step; when the values carried are the tools called, the ids are another key's names; an
    item no attempt carries that holds items some attempt carries, named under the same key,
    is a group, replaced by the steps it holds: :func:`_opened`); a
    step's tool is the value of the key whose values name tools called in the trace
    (:func:`_called`), its arguments the item's first mapping (an item with none: its text
    fields as the step's ``description``, :func:`_says`). A later answer of the same
    planner is a revision: it may repeat the steps already done, under the same ids, so
    attempts before and after it bind to the same steps; one that names only earlier steps and
    gives them arguments but no tool amends the plan before it (:func:`_amended`); another
    span's list is a re-plan only when it keeps the step names, and a step span above
    executor attempts answers a report of that work, no plan (:attr:`_Said.over_work`). Runs of
    the planner's own agent are not executor attempts (``enclosing``: a span's nearest
    enclosing step span, or None).

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("p", "", "step", "planner", step_name="planner"),
    ...     SpanNode("l", "p", "llm", "chat", answer=(
    ...         "[[ ## plan ## ]]\nitems:\n- id: pick\n  tool: wms\n  with: {order: 7}\n"
    ...         "- id: ship\n  tool: courier\n  with: {}")),
    ...     SpanNode("e1", "", "step", "executor", step_name="executor", start_ns=2),
    ...     SpanNode("c1", "e1", "llm", "chat", start_ns=2, request="id: pick"),
    ...     SpanNode("t1", "e1", "tool", "wms", tool="wms", start_ns=2),
    ...     SpanNode("e2", "", "step", "executor", step_name="executor", start_ns=3),
    ... ]}
    >>> enclosing = {"l": "p", "c1": "e1", "t1": "e1"}.get
    >>> (plan,) = structured_plans(nodes, enclosing)
    >>> [(s.step_id, s.tool) for s in plan.steps], json.loads(plan.json)[0]["args"]
    ([('pick', 'wms'), ('ship', '')], {'order': 7})
    """
    return _structured_plans(_said(nodes, enclosing))


def _structured_plans(said: _Said) -> tuple[ReadPlan, ...]:
    """:func:`structured_plans` of what was read once (:class:`_Said`)."""
    if not said.carried:  # attempts carry what they were asked, else their own names
        return ()
    out: list[ReadPlan] = []
    who = ""
    for n in said.by_start:
        if not n.answer or not (
            n.kind == A.KIND_LLM
            or (n.kind in (A.KIND_STEP, A.KIND_RUN) and n.inferred)
            or _plan_span(n)
        ):
            continue
        if n.span_id in said.over_work:  # a report of the attempts it ran, not a plan
            continue
        me = said.planner(n)
        above = set(_ancestors(said.nodes, n.span_id))
        if any(p.span_id in above for p in out):
            continue
        lists = chain(_item_lists(n.answer, least=2 if not out else 1), _outlines(n.answer))
        first = next(lists, None)
        if first is None:  # most answers state no list: look no further at them
            continue
        later = said.later(n, above, me)
        plans = (
            (items, _plan_of(n.span_id, items, later, said.tools, out))
            for items in chain([first], lists)
            if out or len(items) >= 2  # the first plan needs two steps
        )
        items, plan = next(((i, p) for i, p in plans if p is not None), (first, None))
        if plan is None:
            continue
        if out and plan.json == out[-1].json and _marks_progress(items):
            # a to-do list rewritten with the same steps, text and arguments to mark progress
            # (its statuses are no step's): a status update, not a re-plan
            continue
        if out and me != who and not _keeps_names(plan, out):
            continue  # another planner's list is a re-plan only when it keeps the step names
        who = who or me
        out.append(plan)
    return tuple(out)


def _keeps_names(plan: ReadPlan, before: Sequence[ReadPlan]) -> bool:
    """Whether every step of ``plan`` is a step of a plan ``before`` it, by id (a re-planner
    other than the planner that amends the steps still to do, keeping their names).

    >>> old = _as_plan("p", [{"id": "pick", "tool": ""}, {"id": "ship", "tool": ""}])
    >>> _keeps_names(_as_plan("q", [{"id": "ship", "tool": ""}]), [old])
    True
    >>> _keeps_names(_as_plan("q", [{"id": "fly", "tool": ""}]), [old])
    False
    """
    known = {s.step_id for p in before for s in p.steps}
    return all(s.step_id in known for s in plan.steps)


def _handed_plans(said: _Said) -> tuple[ReadPlan, ...]:
    r"""The plans a trace states only in the work orders its executor runs were handed: a
    planner whose answer no span records (OpenLLMetry's openai-agents instrumentor on Chat
    Completions records no model output), each executor attempt asked a step as a JSON object
    on a line of its own (:func:`_embedded_json`) naming a tool the trace called and the step's
    id (a word). An attempt asked exactly one such object is handed that step; the plan is the
    steps handed after the planner's run (the last agent run or model call outside the
    attempts that ended before the first order was handed) in the order first handed; a later
    run of the planner's agent before more orders is a re-plan of the steps handed after it.
    The tool is the key naming a called tool in the most orders, the id another key, present
    in every order, whose word values are the most distinct; a step's arguments are the
    order's first mapping (references to earlier steps kept, and as the step's
    ``depends_on``: :func:`_needs`). Nothing is read when the planner or two distinct steps
    are missing.

    >>> nodes = {n.span_id: n for n in [
    ...     SpanNode("p", "", "step", "planner", step_name="planner", duration_ns=1),
    ...     SpanNode("e1", "", "step", "crew", step_name="crew", start_ns=2),
    ...     SpanNode("c1", "e1", "llm", "chat", start_ns=2,
    ...              request='Do this:\n{"id": "pick", "tool": "wms", "args": {"bin": 4}}'),
    ...     SpanNode("t1", "e1", "tool", "wms", tool="wms", start_ns=2),
    ...     SpanNode("e2", "", "step", "crew", step_name="crew", start_ns=3),
    ...     SpanNode("c2", "e2", "llm", "chat", start_ns=3, request=(
    ...         'Do this:\n{"id": "ship", "tool": "courier", "args": {"box": {"$ref": "pick"}}}')),
    ...     SpanNode("t2", "e2", "tool", "courier", tool="courier", start_ns=3),
    ... ]}
    >>> enclosing = {"c1": "e1", "t1": "e1", "c2": "e2", "t2": "e2"}.get
    >>> (plan,) = _handed_plans(_said(nodes, enclosing))
    >>> plan.span_id, [(s.step_id, s.tool) for s in plan.steps]
    ('p', [('pick', 'wms'), ('ship', 'courier')])
    >>> json.loads(plan.json)[1]["depends_on"]
    ['pick']
    """
    orders: dict[str, dict[str, Any]] = {}  # attempt → the one order it was handed
    for span_id, texts in said.asked.items():
        found = [
            value
            for text in texts
            for value in _embedded_json(text)
            if isinstance(value, dict) and any(said.called(v) for v in value.values())
        ]
        if len({json.dumps(v, sort_keys=True, default=str) for v in found}) == 1:
            orders[span_id] = found[0]
    if not orders:
        return ()
    keys = sorted(set.intersection(*(set(o) for o in orders.values())))
    if not keys:  # orders that share no key: no key can name the tool or the step
        return ()
    # the tool is the key naming a called tool in the most orders; the id another key whose
    # values are words (also a tool's name: a step named after the tool it calls), the most
    # distinct, fewer tools' names first
    tool_key = max(keys, key=lambda k: sum(bool(said.called(o[k])) for o in orders.values()))

    def ids(key: str) -> list[str]:
        """The key's values when every order's is a word."""
        values = [o[key] for o in orders.values()]
        if key == tool_key or not all(isinstance(v, str) and _WORD.fullmatch(v) for v in values):
            return []
        return values

    id_key = max(keys, key=lambda k: (len(set(ids(k))), -sum(bool(said.called(v)) for v in ids(k))))
    if len(set(ids(id_key))) < 2:
        return ()
    handed = sorted((said.nodes[a] for a in orders), key=lambda n: (n.start_ns, n.span_id))
    inside = set(orders)
    candidates = [
        n
        for n in said.by_start
        if n.span_id not in inside
        and (_is_turn(n) or (n.kind == A.KIND_LLM and said.enclosing(n.span_id) is None))
        and not any(p in inside for p in _ancestors(said.nodes, n.span_id))
    ]
    first = handed[0].start_ns
    opening = [n for n in candidates if n.start_ns + n.duration_ns <= first]
    if not opening:
        return ()
    planner = said.planner(opening[-1])
    heads = [
        opening[-1],
        *(n for n in candidates if n.start_ns >= first and said.planner(n) == planner),
    ]
    out: list[ReadPlan] = []
    for head, nxt in zip(heads, [*heads[1:], None], strict=True):
        end = nxt.start_ns if nxt is not None else None
        objects: list[dict[str, Any]] = []
        for a in handed:
            if a.start_ns < head.start_ns or (end is not None and a.start_ns >= end):
                continue
            order = orders[a.span_id]
            if any(o["id"] == order[id_key] for o in objects):
                continue
            earlier = {s.step_id for p in out for s in p.steps} | {o["id"] for o in objects}
            step: dict[str, Any] = {"id": order[id_key], "tool": said.called(order[tool_key])}
            args = next((v for k, v in order.items() if k != id_key and isinstance(v, dict)), None)
            if args is not None:
                step["args"] = args
            if needs := _needs(order, id_key, earlier):
                step["depends_on"] = needs
            objects.append(step)
        if objects and (out or len(objects) >= 2):
            out.append(_as_plan(head.span_id, objects))
    return tuple(out)


def _plan_of(
    span_id: str,
    items: list[dict[str, Any]],
    later: _Later,
    tools: set[str],
    plans_before: Sequence[ReadPlan] = (),
) -> ReadPlan | None:
    """The plan a list of mappings states (:func:`structured_plans`), or None when no key's
    values are step names later attempts carry. A list that names only steps of the last plan
    before it (``plans_before[-1]``) and gives them no tool is an amendment: that plan with the
    arguments it gives merged into the steps it names (a patch carries only the fields it
    changes). Items
    keyed by names that are all steps of the plans before it (``plans_before``), none of which
    a later attempt carries (by its name, or by a tool an item names), are a record of steps
    already done (a playbook's ``vars``, a re-plan's settled results keyed by step), no plan."""
    before = plans_before[-1] if plans_before else None
    if before is not None and (amended := _amended(span_id, items, before, later)) is not None:
        return amended
    items = _labelled_items(items)
    keys = [k for k in items[0] if all(k in i for i in items)]
    called = _called(tools)
    if _settled(items, later, called, {s.step_id for p in plans_before for s in p.steps}):
        return None

    def names(key: str) -> list[str]:
        """The key's values when each is a word, names a tool called (``<worker>.<tool>``) or
        is a tool's name under its namespace (a step no executor reached names a tool the trace
        never called: a run stopped early is the one whose plan is needed), all distinct."""
        values = [i[key] for i in items]
        if not all(
            isinstance(v, str) and (_WORD.fullmatch(v) or called(v) or _NAMESPACED.fullmatch(v))
            for v in values
        ):
            return []
        return values if len(set(values)) == len(values) else []

    def counted(key: str) -> list[str]:
        """The values later attempts carry (a tool's value: the tool's name) where none carries
        an earlier counted value (a word every attempt carries names no step: the rule of
        :func:`_step_names`), but for two values one item names together (an attempt handed
        its item is told the steps it needs: a workflow job's ``needs: [build]``)."""
        out: list[str] = []
        said: list[tuple[str, str]] = []
        values = names(key)
        together = [
            {v, *_cited(i, key, set(values))}
            for i, v in zip(items if values else [], values, strict=True)
        ]
        for v in values:
            name = v if _WORD.fullmatch(v) else called(v)
            if (
                name
                and later.carry(name)
                and not any(
                    later.carry(name, n) and not any({u, v} <= t for t in together) for u, n in said
                )
            ):
                out.append(v)
                said.append((v, name))
        return out

    def tool_of(item: dict[str, Any], key: str) -> bool:
        """Whether the item's value of ``key`` is a tool no other key of the item names (an
        id that is also the name of the tool its item calls through another key is an id)."""
        tool = called(item[key])
        return bool(tool) and not any(k != key and called(item[k]) == tool for k in keys)

    def carried(key: str) -> tuple[int, int]:
        """How many values are counted; then fewer values that are tools."""
        tools_named = sum(tool_of(i, key) for i in items) if names(key) else 0
        return len(counted(key)), -tools_named

    best = max(keys, key=carried, default=None)
    if best is None or carried(best)[0] == 0:
        return None

    def attempted(value: str) -> bool:
        """Whether a later attempt carries the name (a tool's value: the tool's name)."""
        name = value if _WORD.fullmatch(value) else called(value)
        return bool(name) and later.carry(name)

    # a group no attempt names (a state machine's parallel state) holds the steps that run
    items = _opened(items, best, attempted)
    keys = [k for k in keys if all(k in i for i in items)]
    if all(called(v) for v in counted(best)):
        # the attempts carry the tools the steps call (an executor told which tool to use):
        # the ids are the other key of distinct names, none a tool
        # (a value that is the very tool its item names through ``best`` is still an id)
        ids = [
            k
            for k in keys
            if k != best
            and names(k)
            and not any(called(i[k]) not in ("", called(i[best])) for i in items)
        ]
        best = ids[0] if ids else best
    replanned = {s.step_id for s in before.steps} if before is not None else set()
    kept = [k for k in keys if names(k) and replanned.issuperset(names(k))]
    if len(kept) == 1:
        best = kept[0]  # a re-plan names its steps as the plan before it did
    tool_key = max(
        (k for k in keys if k != best),
        key=lambda k: sum(bool(called(i[k])) for i in items),
        default=None,
    )
    objects: list[dict[str, Any]] = []
    done = {s.step_id for s in before.steps} if before else set()  # a re-plan's earlier steps
    for item in items:
        step: dict[str, Any] = {"id": item[best], "tool": ""}
        if tool_key is not None:
            step["tool"] = called(item[tool_key])
        earlier = done | {o["id"] for o in objects}
        args = next((v for k, v in item.items() if k != best and isinstance(v, dict)), None)
        pairs = (_argument_pairs(v, earlier) for k, v in item.items() if k != best)
        if args is None and (given := next((p for p in pairs if p is not None), None)):
            args = given
        if args is not None:
            step["args"] = _without_tool(args, item, tool_key)
        elif said := _says(item, (best, tool_key if step["tool"] else None)):
            step["description"] = said
        if needs := _needs(item, best, earlier):
            step["depends_on"] = needs
        objects.append(step)
    return _as_plan(span_id, objects)


def _opened(
    items: list[dict[str, Any]], key: str, carried: Callable[[str], bool]
) -> list[dict[str, Any]]:
    """The items with every group opened: an item whose name (its value of ``key``) no later
    attempt carries, whose fields hold items named under the same key, some of them carried
    (an Amazon States Language ``Parallel`` state's ``Branches`` or a ``Map`` state's
    ``Iterator``, a workflow scope's nested actions), is replaced in its place by those items,
    in order, their own groups opened too: the attempts run the steps it holds, not the group.
    An item an attempt names is a step, whatever it holds (a task's ``Parameters``); held items
    that share no field but the name with the plan's items are arguments (an Argo task's
    ``arguments.parameters``, ``{name, value}``), no steps; the items unchanged when opening
    would leave names that are not distinct.

    >>> machine = [{"": "find", "Type": "Task"}, {"": "both", "Type": "Parallel", "Branches": [
    ...     {"States": {"inspect": {"Type": "Task"}}}, {"States": {"book": {"Type": "Task"}}}]},
    ...     {"": "charge", "Type": "Task", "Parameters": {"Payload": {"a": 1}}}]
    >>> [i[""] for i in _opened(machine, "", {"find", "inspect", "book", "charge"}.__contains__)]
    ['find', 'inspect', 'book', 'charge']
    >>> [i[""] for i in _opened(machine, "", {"find", "both", "charge"}.__contains__)]
    ['find', 'both', 'charge']
    >>> dag = [{"name": "pay", "template": "pay"}, {"name": "mail", "arguments": {"parameters": [
    ...     {"name": "to", "value": "a"}, {"name": "venue", "value": "b"}]}}]
    >>> [i["name"] for i in _opened(dag, "name", {"pay", "venue"}.__contains__)]
    ['pay', 'mail']
    """
    out: list[dict[str, Any]] = []
    fields = {k for i in items for k in i} - {key}
    for item in items:
        name = item.get(key)
        inner = (
            [] if not isinstance(name, str) or carried(name) else _inner_items(item, key, carried)
        )
        # the steps a group holds share a field with the plan's items (a state's ``Type``);
        # items named under the key that share none are arguments (``{name, value}`` pairs)
        if inner and all(fields & (set(i) - {key}) for i in inner):
            out.extend(_opened(inner, key, carried))
        else:
            out.append(item)
    names = [i[key] for i in out]
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return items
    return out


def _inner_items(
    item: Mapping[str, Any], key: str, carried: Callable[[str], bool]
) -> list[dict[str, Any]]:
    """The items named under ``key`` that an item's other fields hold, breadth first: each
    list of mappings that all have ``key``, and (for ``key`` ``""``, the names a mapping of
    mappings keys its items by, :func:`_item_lists`) each mapping of mappings as items
    labelled under ``""``, when one of its names is carried (else it is looked inside, as
    any other field); not what those items hold."""
    found: list[dict[str, Any]] = []
    values: list[Any] = [v for k, v in item.items() if k != key]
    for value in values:  # grows as it goes: breadth first
        group: list[dict[str, Any]] = []
        if (
            isinstance(value, list)
            and key
            and value
            and all(isinstance(v, dict) and key in v for v in value)
        ):
            group = value
        elif (
            isinstance(value, dict)
            and not key
            and value
            and all(isinstance(v, dict) and v for v in value.values())
        ):
            group = [{"": k, **v} for k, v in value.items()]
        if any(isinstance(i[key], str) and carried(i[key]) for i in group):
            found.extend(group)
        elif isinstance(value, list):
            values.extend(value)
        elif isinstance(value, dict):
            values.extend(value.values())
    return found


def _settled(
    items: list[dict[str, Any]], later: _Later, called: Callable[[Any], str], done: set[str]
) -> bool:
    """Whether items keyed by their names (a mapping of mappings, :func:`_item_lists`) are a
    record of steps already done: every name a step of a plan before (``done``), and no later
    attempt carries one, nor a tool an item names. Their other values may be carried (a
    result's id filled in to a later step's arguments): that makes them no step to do.

    >>> index = _Carriers([SpanNode("e", "", "step", "x", step_name="x", start_ns=5)],
    ...                   {"e": {"ship", "LOT-7"}})
    >>> items = [{"": "pick", "ref": "LOT-7"}, {"": "pack", "ref": "BOX-2"}]
    >>> _settled(items, index.later(1, set(), ""), _called(set()), {"pick", "pack", "ship"})
    True
    >>> _settled([{"": "pick"}, {"": "ship"}], index.later(1, set(), ""), _called(set()),
    ...          {"pick", "ship"})
    False
    """
    names = [i.get("") for i in items]
    return (
        bool(done)
        and all(isinstance(n, str) and n in done for n in names)
        and not any(later.carry(str(n)) for n in names)
        and not any(later.carry(tool) for i in items for v in i.values() if (tool := called(v)))
    )


_LABEL = re.compile(r"([A-Za-z_][\w.-]*):[ \t]+(\S.*)", re.DOTALL)
"""A text that starts with its name and a colon (``pick: take 4 crates from bay 2``)."""


_PROGRESS = frozenset(
    {"pending", "in_progress", "completed", "done", "todo", "cancelled", "canceled", "blocked"}
)
"""The statuses to-do tools mark their items with (LangChain's, Claude Code's and OpenAI's
plan tools: ``pending`` / ``in_progress`` / ``completed``): no item's name."""


def _marks_progress(items: list[dict[str, Any]]) -> bool:
    """Whether a list's items carry a to-do tool's statuses (:data:`_PROGRESS`), one each.

    >>> _marks_progress([{"content": "pick", "status": "completed"}, {"content": "ship"}])
    False
    """
    return all(any(v in _PROGRESS for v in i.values() if isinstance(v, str)) for i in items)


def _labelled_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items of a to-do list (each marked with a status, :func:`_marks_progress`) named by
    the label their text starts with: when no key's values are names but one key's texts all
    start with distinct ``<name>:`` labels (a todo's ``content``, written as ``<item>: <what>``),
    each item's name is its label (under ``""``) and that key keeps the text after it;
    otherwise the items unchanged. A to-do tool's statuses (:data:`_PROGRESS`) name no step,
    even when they differ.

    >>> _labelled_items([{"content": "pick: take 4 crates", "status": "pending"},
    ...                  {"content": "ship: send them to Oslo", "status": "pending"}])[1]
    {'': 'ship', 'content': 'send them to Oslo', 'status': 'pending'}
    """
    keys = [k for k in items[0] if all(k in i for i in items)]

    def words(key: str) -> bool:
        values = [i[key] for i in items]
        if all(isinstance(v, str) and v in _PROGRESS for v in values):
            return False
        return all(isinstance(v, str) and _WORD.fullmatch(v) for v in values) and len(
            set(values)
        ) == len(values)

    if "" in keys or not _marks_progress(items) or any(words(k) for k in keys):
        return items
    for key in keys:
        found = [_LABEL.fullmatch(i[key]) if isinstance(i[key], str) else None for i in items]
        labels = [m[1] for m in found if m]
        if len(labels) == len(items) and len(set(labels)) == len(labels):
            return [
                {"": m[1], **{k: m[2] if k == key else v for k, v in i.items()}}
                for m, i in zip(found, items, strict=True)
                if m
            ]
    return items


def _says(item: Mapping[str, Any], keys: Iterable[str | None]) -> str:
    """What an item that gives no arguments says in its own words: its text fields of several
    words but ``keys`` (its id and tool), one a line, in order. A sub-task whose values are
    written only into its sentence (``"input": "Glue 40 spines with hide glue"``) keeps them
    in the plan read: they are what the planner wrote.

    >>> _says({"name": "glue", "input": "Glue 40 spines", "done": "glued", "n": 2}, ["name"])
    'Glue 40 spines'
    """
    skip = set(keys)
    return "\n".join(
        v.strip()
        for k, v in item.items()
        if k not in skip and isinstance(v, str) and len(v.split()) > 1
    )


_PAIR_NAME = ("name", "key")
"""The key naming an argument given as a pair (``{"name": ..., "value": ...}``)."""


def _argument_pairs(value: Any, earlier: set[str]) -> dict[str, Any] | None:
    """The arguments a list of name / value pairs gives (structured output has no open
    mappings: ``[{"name": "ward", "value": "north"}]``), a pair whose field names an
    ``earlier`` step (``{"name": "job", "from_step": "book"}``: that step's result) left out
    (:func:`_needs`); None when the value is no such list.

    >>> _argument_pairs([{"name": "ward", "value": "north", "from_step": None},
    ...         {"name": "job", "value": "", "from_step": "book"}], {"book"})
    {'ward': 'north'}
    >>> _argument_pairs([{"ward": "north"}], set()) is None
    True
    """
    if not isinstance(value, list) or not value:
        return None
    out: dict[str, Any] = {}
    for pair in value:
        name = (
            next((pair[k] for k in _PAIR_NAME if k in pair), None)
            if isinstance(pair, dict)
            else None
        )
        if not isinstance(name, str) or len(pair) < 2:
            return None
        given = [v for k, v in pair.items() if k not in _PAIR_NAME and v not in (None, "")]
        if given and not any(isinstance(v, str) and v in earlier for v in given):
            out[name] = given[0]
    return out


def _cited(item: Mapping[str, Any], key: str, names: set[str]) -> set[str]:
    """The ``names`` an item's fields (but its id, under ``key``) cite: a whole value or a word
    of a string, also inside lists and mappings (a job's ``needs: [build]``, an expression
    ``${{ jobs.build.outputs.result }}``).

    >>> sorted(_cited({"": "ship", "needs": ["pick"], "with": {"box": "${{ jobs.pack.id }}"}},
    ...               "", {"pick", "pack", "ship", "bill"}))
    ['pack', 'pick']
    """
    return {w for v in _field_strings(item, key) for w in _WORD.findall(v) if w in names}


def _field_strings(item: Mapping[str, Any], key: str) -> Iterable[str]:
    """The strings an item's fields (but its id, under ``key``) hold, also inside lists and
    mappings, in order.

    >>> list(_field_strings({"id": "ship", "after": ["pick"], "n": 2, "a": {"b": "x"}}, "id"))
    ['pick', 'x']
    """
    todo = [v for k, v in item.items() if k != key][::-1]  # a stack: the first field on top
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, list):
            todo.extend(v[::-1])
        elif isinstance(v, dict):
            todo.extend(list(v.values())[::-1])


def _needs(item: Mapping[str, Any], key: str, earlier: set[str]) -> list[str]:
    """The earlier steps a plan item depends on: the ``earlier`` step ids its fields (but its
    id, under ``key``) name as a whole value, also inside lists and their mappings (a
    ``depends_on`` list, an argument pair's ``from_step``), in order.

    >>> _needs({"id": "ship", "after": ["pick"], "args": [{"name": "n", "from_step": "pack"}]},
    ...        "id", {"pick", "pack"})
    ['pick', 'pack']
    """
    return list(dict.fromkeys(v for v in _field_strings(item, key) if v in earlier))


def _amended(
    span_id: str, items: list[dict[str, Any]], before: ReadPlan, later: _Later | None = None
) -> ReadPlan | None:
    """The plan ``before`` amended by ``items`` (:func:`_plan_of`), or None when they are no
    amendment of it: each item names one of its steps by a value and states no tool it calls,
    only arguments (its mappings), and, when ``later`` is given, a step still to run (one of
    those attempts carries it: a revision's list of the results of the steps already done
    changes none).

    >>> old = _as_plan("p", [{"id": "pick", "tool": "wms", "args": {"bin": "A", "n": 1}},
    ...                      {"id": "ship", "tool": "courier", "args": {}}])
    >>> new = _amended("q", [{"Amend": "pick", "With": {"bin": "B"}}], old)
    >>> [(s["id"], s["args"]) for s in json.loads(new.json)]
    [('pick', {'bin': 'B', 'n': 1}), ('ship', {})]
    """
    objects = json.loads(before.json)
    by_id = {o["id"]: o for o in objects}
    tools = {o["tool"] for o in objects} - {""}
    changes: dict[str, dict[str, Any]] = {}
    for item in items:
        named = [v for v in item.values() if isinstance(v, str) and v in by_id]
        args = [v for v in item.values() if isinstance(v, dict)]
        if (
            len(named) != 1
            or not args
            or any(isinstance(v, str) and v in tools for v in item.values())
            or (later is not None and not later.carry(named[0]))
        ):
            return None
        changes[named[0]] = {k: v for a in args for k, v in a.items()}
    for step_id, changed in changes.items():
        by_id[step_id]["args"] = {**by_id[step_id].get("args", {}), **changed}
    return _as_plan(span_id, objects)


def _called(tools: set[str]) -> Callable[[Any], str]:
    """The tool called in the trace that a plan's value names: the same name, else the same
    letters and digits whatever their case and separators (a plan's ``venue_search`` for the
    component ``VenueSearch``, as a framework names a component's tool), else the one tool
    whose bare name (:func:`_bare`) is that (a plugin's function ``Billing-pay`` for ``pay``),
    else the tool that is the value's bare name (a plan's ``clerk.book`` for ``book``); '' when
    none.

    >>> _called({"VenueSearch", "pay"})("venue_search"), _called({"pay"})(7)
    ('VenueSearch', '')
    >>> _called({"Billing-pay", "Billing-refund"})("pay"), _called({"A-pay", "B-pay"})("pay")
    ('Billing-pay', '')
    """
    squashed = {_squash(t): t for t in tools}
    bare: dict[str, set[str]] = {}
    for t in tools:
        bare.setdefault(_squash(_bare(t)), set()).add(t)

    def called(value: Any) -> str:
        if not isinstance(value, str):
            return ""
        if value in tools:
            return value
        key = _squash(value)
        if key in squashed:
            return squashed[key]
        named = bare.get(key, set()) or ({_bare(value)} & tools)
        return next(iter(named)) if len(named) == 1 else ""

    return called


def _squash(name: str) -> str:
    """A name's letters and digits, lower case (``VenueSearch`` and ``venue_search`` alike)."""
    return re.sub(r"[\W_]", "", name).lower()


def _bare(tool: str) -> str:
    """A tool's name without its namespace: the part after the last ``-``, ``.``, ``:`` or
    ``__`` (a plugin's, toolkit's or server's name: ``Plugin-function``, ``server__tool``).

    >>> _bare("Billing-pay"), _bare("mcp__files__read"), _bare("pay")
    ('pay', 'read', 'pay')
    """
    return re.split(r"__|[-.:]", tool)[-1] or tool


_YAML_LIST_ITEM = re.compile(r"(?m)^\s*- [\w-]+:")
_YAML_NESTED_MAP = re.compile(r"(?m)^([ \t]*)[\w-]+:[ \t]*\n\1[ \t]+[\w-]+:[ \t]*\n")
"""A YAML mapping of mappings in block style: a key over a more indented key, each opening a
mapping of its own (a CI workflow's ``jobs:`` over ``build:`` over its fields, Compose's
``services:``): items keyed by their names, as a list's ``- key:`` lines are items."""
_FENCE = re.compile(r"(?m)^[ \t]*(```|~~~).*$")
"""A markdown code fence's line (```` ```yaml ````, ```` ``` ````): no YAML, it bounds a block."""
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _json_schema(value: dict[str, Any]) -> bool:
    """Whether a mapping is a JSON Schema of an object (a tool's parameters, as a framework's
    recorded state or a request lists them): its ``properties`` are fields, never steps.

    >>> _json_schema({"type": "object", "properties": {"press": {"type": "string"}}})
    True
    >>> _json_schema({"properties": {"a": {}}, "required": ["a"]}), _json_schema({"a": {}})
    (True, False)
    """
    return isinstance(value.get("properties"), dict) and (
        value.get("type") == "object" or isinstance(value.get("required"), list)
    )


def _item_lists(text: str, depth: int = 0, least: int = 2) -> Iterable[list[dict[str, Any]]]:
    r"""The lists of mappings a text states (a mapping of at least two mappings too, each item
    with its key under ``""``): the text as JSON (lists of ``least`` or more: a re-plan's may
    hold the one step still to do), else its Org-mode outline's steps, its markdown and
    delimited tables, stanzas, XML element lists and URI lines (one item or more: an amendment
    may name one step) and each of its paragraphs as YAML from its first line that parses (a
    heading or field marker above it); strings inside those that span lines are read the same way.

    >>> [len(x) for x in _item_lists('{"plan": "steps:\\n- id: a\\n- id: b"}')]
    [2]
    >>> [[i[""] for i in x] for x in _item_lists("```yaml\njobs:\n  a:\n    uses: x\n  b:\n"
    ...                                               "    uses: y\n```")]
    [['a', 'b']]
    >>> list(_item_lists("- id: a\n  on: 2027-02-30\n- id: b"))  # no date: not read as YAML
    []
    """
    documents: list[Any] = []
    try:
        documents.append(safejson.loads(text))
    except ValueError:
        if _on("textproto"):
            # a text-format message's repeated fields, before the line readers take its
            # ``name: value`` lines apart
            yield from _nested_lists(list(_textprotos(text)), depth, least)
        documents.extend(_embedded_json(text))
        if _on("org"):
            yield from _org_outlines(text)
        yield from _tables(text)
        if _on("sections"):
            yield from _sections(text)
        if _on("stanzas"):
            yield from _stanzas(text)
        if _on("elements"):
            yield from _elements(text)
        if _on("uri_lines"):
            yield from _uri_lines(text)
        if _on("gantt") and _GANTT.search(text):  # most texts hold no gantt chart
            yield from _gantt_tasks(text)
        # a fenced block is a paragraph of its own: its fences are no YAML (the closing one
        # failed every parse of a fenced document)
        for paragraph in re.split(r"\n\s*\n", _FENCE.sub("", text)):
            if not (_YAML_LIST_ITEM.search(paragraph) or _YAML_NESTED_MAP.search(paragraph)):
                continue
            lines = paragraph.split("\n")
            for start in range(min(len(lines), 4)):
                try:
                    value = yaml.load("\n".join(lines[start:]), Loader=_LOADER)
                except (yaml.YAMLError, ValueError):
                    # ValueError: a scalar YAML types but cannot build (``2027-02-30`` as a date)
                    continue
                if isinstance(value, dict | list):
                    documents.append(value)
                    break
    yield from _nested_lists(documents, depth, least)


def _nested_lists(documents: list[Any], depth: int, least: int) -> Iterable[list[dict[str, Any]]]:
    """The lists of mappings (of ``least`` or more) and mappings of mappings in documents read
    (:func:`_item_lists`), breadth first: the outermost list of a document comes first."""
    for value in documents:
        if isinstance(value, list):
            if len(value) >= least and all(isinstance(v, dict) and v for v in value):
                yield value
            documents.extend(value)
        elif isinstance(value, dict):
            if _json_schema(value):
                continue  # a tool's parameters (an agent's state lists its tools): no steps
            if len(value) >= 2 and all(isinstance(v, dict) and v for v in value.values()):
                # steps keyed by their names (``{"pick": {...}, "ship": {...}}``): the names are
                # one more key of the items
                yield [{"": k, **v} for k, v in value.items()]
            documents.extend(value.values())
        elif isinstance(value, str) and "\n" in value and depth < 2:
            yield from _item_lists(value, depth + 1, least)


_BULLET = re.compile(r"([ \t]*)[-*+][ \t]+(\S.*?)[ \t]*")
"""A markdown bullet line: its indentation and its text."""
_OUTLINE_ITEM = re.compile(rf"({_WORD.pattern})(?:[ \t]+\[([^\[\]\n]*)\])?[ \t]*:(?:[ \t]+(.*))?")
"""An outline item: a name, maybe a bracketed state (``[done]``, ``[x]``), a colon and its
text (``pick: take 4 crates``, ``pick [done]: 4 crates taken``)."""
_OUTLINE_FIELD = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?")
"""A sub-item that is a field: ``key: value``, or ``key:`` over sub-items of its own."""
_OUTLINE_NOTE = re.compile(r"[ \t]*\(([A-Za-z_][\w-]*):[ \t]*([^()]*?)[ \t]*\)[ \t]*$")
"""A parenthesised field closing an item's text: ``(after: pick, pack)``."""
_OUTLINE_ARGUMENTS = "*"
"""The key of an outline item's fields as one mapping (no field can be so named)."""


def _outlines(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The items of each markdown bullet outline in a text (a plan as nested bullets): the
    top-level bullets each ``name: text`` (:data:`_OUTLINE_ITEM`), their sub-bullets fields
    ``key: value`` (a field over sub-bullets of its own a mapping of them), at least one
    item with fields. An item is its name under ``""``, its text under ``goal`` (a closing
    parenthesised field, ``(after: a, b)``, taken out of it as a field, its value split at
    commas), its bracketed state under ``state``, its fields, and, when no field is a
    mapping, its fields as one mapping (its arguments, :data:`_OUTLINE_ARGUMENTS`); a field
    some items lack is empty in them (a done item names no call). Any other bullet, or a
    line of text between them, ends the outline.

    >>> (items,) = _outlines("Plan:\n- pick: take 4 crates\n  - call: wms\n  - bin: A2\n"
    ...                      "- ship: send them (after: pick)\n  - call: courier")
    >>> items[1]["after"], items[1]["bin"], items[1]["*"]
    (['pick'], '', {'call': 'courier'})
    """
    tree: list[tuple[str, list[Any]]] = []  # (text, sub-bullets) of the outline being read
    stack: list[tuple[int, list[Any]]] = []  # (indent, the list its bullets go into)
    outlines: list[list[tuple[str, list[Any]]]] = []
    for line in [*text.split("\n"), "end"]:
        if not line.strip():
            continue
        m = _BULLET.fullmatch(line)
        if m is None:
            if tree:
                outlines.append(tree)
            tree, stack = [], []
            continue
        indent = len(m.group(1).expandtabs(4))
        while stack and indent < stack[-1][0]:
            stack.pop()
        if not stack:
            stack.append((indent, tree))
        elif indent > stack[-1][0]:
            parent = stack[-1][1]
            if not parent:  # deeper than the first bullet: no outline of ours
                continue
            stack.append((indent, parent[-1][1]))
        stack[-1][1].append((m.group(2), []))
    for outline in outlines:
        items = [_outline_item(name, below) for name, below in outline]
        found = [i for i in items if i is not None]
        if len(found) == len(items) and any(below for _, below in outline):
            keys = list(dict.fromkeys(k for i in found for k in i if k != _OUTLINE_ARGUMENTS))
            yield [
                {
                    **{k: i.get(k, "") for k in keys},
                    _OUTLINE_ARGUMENTS: i[_OUTLINE_ARGUMENTS],
                }
                for i in found
            ]


def _outline_item(text: str, below: list[Any]) -> dict[str, Any] | None:
    """One top-level bullet of :func:`_outlines` as an item, or None when it is no
    ``name: text`` item or a sub-bullet is no field."""
    m = _OUTLINE_ITEM.fullmatch(text)
    fields = _outline_fields(below)
    if m is None or fields is None:
        return None
    goal = m.group(3) or ""
    notes: dict[str, Any] = {}
    while note := _OUTLINE_NOTE.search(goal):
        notes = {note[1]: [v.strip() for v in note[2].split(",") if v.strip()], **notes}
        goal = goal[: note.start()]
    nested = any(isinstance(v, dict) for v in fields.values())
    return {
        "": m.group(1),
        "goal": goal.strip(),
        **notes,
        "state": m.group(2) or "",
        **fields,
        _OUTLINE_ARGUMENTS: {} if nested else dict(fields),
    }


def _outline_fields(below: list[Any]) -> dict[str, Any] | None:
    """Sub-bullets as fields (:func:`_outlines`), or None when one is no ``key: value``."""
    out: dict[str, Any] = {}
    for text, deeper in below:
        m = _OUTLINE_FIELD.fullmatch(text)
        if m is None:
            return None
        if deeper:
            if m.group(2) or (value := _outline_fields(deeper)) is None:
                return None
            out[m.group(1)] = value
        else:
            out[m.group(1)] = _whole_number(m.group(2) or "")
    return out


def _without_tool(args: Any, item: Mapping[str, Any], tool_key: str | None) -> Any:
    """A step's arguments but the field naming its tool, when the item states it both beside
    its arguments and among them (an outline's ``- call: fn`` sub-item is one of its
    fields): the call, not an argument."""
    if not isinstance(args, dict) or tool_key is None or tool_key not in args:
        return args
    if args[tool_key] != item.get(tool_key):
        return args
    return {k: v for k, v in args.items() if k != tool_key}


_JSON_LINE = re.compile(r"(?m)^[ \t]*(?=[\[{])")


def _embedded_json(text: str) -> Iterable[Any]:
    r"""The JSON objects and arrays a text holds on lines of their own (a fenced code block in
    chat text, a document after a sentence), each from the line it starts on.

    >>> list(_embedded_json('Plan:\n```json\n[{"id": "a"}]\n```'))
    [[{'id': 'a'}]]
    """
    decoder = json.JSONDecoder()
    end = 0
    for m in _JSON_LINE.finditer(text):
        if m.end() < end:
            continue
        try:
            value, end = decoder.raw_decode(text, m.end())
        except RecursionError:
            # nested past the stack (far past any plan, safejson.MAX_DEPTH): so are the lines
            # inside it, each as costly to try (a thousand levels down)
            return
        except ValueError:
            continue
        yield value


_TABLE_RULE = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")
_PAIR = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=\s*(.*?)\s*")


def _tables(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The markdown tables of a text, each as its rows: a header row naming the columns, a rule
    line (``|---|---|``), then one row per item, a mapping of each cell by its column's header;
    a cell that is a JSON object, or ``key=value`` pairs (``;`` between them, else ``,``; a
    quoted pair keeps its delimiters), is that mapping (whole numbers as numbers); then its
    header-less tables (:func:`_bare_tables`) and its delimited ones (:func:`_delimited_tables`).

    >>> next(_tables("Plan:\n| # | name | with |\n|---|---|---|\n| 1 | pick | order=7; bin=A |"))
    [{'#': '1', 'name': 'pick', 'with': {'order': 7, 'bin': 'A'}}]
    """
    lines = [line.strip() for line in text.splitlines()]
    i = 0
    while i + 1 < len(lines):
        if not (lines[i].startswith("|") and _TABLE_RULE.fullmatch(lines[i + 1])):
            i += 1
            continue
        header = _cells(lines[i])
        rows = []
        i += 2
        while i < len(lines) and lines[i].startswith("|"):
            cells = _cells(lines[i])
            if len(cells) == len(header):
                rows.append({h: _cell(c) for h, c in zip(header, cells, strict=True)})
            i += 1
        if rows and len(set(header)) == len(header):
            yield rows
    yield from _bare_tables(lines)
    yield from _delimited_tables(lines)


_DELIMITERS = (",", "\t", ";")
"""The delimiters of a delimited table (CSV, TSV, ``;`` as spreadsheets of some locales write)."""
_COLUMN = re.compile(r"[A-Za-z_][\w.-]*")
"""A delimited table's column name: a name, no sentence (prose with commas is no header)."""


def _delimited_tables(lines: list[str]) -> Iterable[list[dict[str, Any]]]:
    r"""The delimited tables of a text's stripped lines (CSV, TSV; RFC 4180 quoting): a line
    opening a block (the text's first, or after a blank line or a code fence) of three or more
    distinct column names (:data:`_COLUMN`) and one delimiter (:data:`_DELIMITERS`) between
    them is a header; each line after it of as many cells is a row, a mapping of each cell by
    its column's name (a cell read as :func:`_tables` reads one). A planner asked for a
    spreadsheet's rows answers so; a table readers split by its delimiter, never by its column
    order, is the same table as a markdown one.

    >>> next(_delimited_tables(["```csv", "id,tool,with", 'pick,wms,"order=7;bin=A, B"', "```"]))
    [{'id': 'pick', 'tool': 'wms', 'with': {'order': 7, 'bin': 'A, B'}}]
    >>> list(_delimited_tables(["Pick, pack and ship", "then 1, 2, 3"]))
    []
    """
    for i, line in enumerate(lines):
        if i and lines[i - 1] and not _FENCE.fullmatch(lines[i - 1]):
            continue  # a header opens its block: a line inside a paragraph is prose
        for delimiter in _DELIMITERS:
            header = [h.strip() for h in line.split(delimiter)]
            if len(header) < 3 or len(set(header)) < len(header):
                continue
            if not all(_COLUMN.fullmatch(h) for h in header):
                continue
            rows = []
            for row in lines[i + 1 :]:
                cells = [c.strip() for c in next(csv.reader([row], delimiter=delimiter), [])]
                if len(cells) != len(header):
                    break
                rows.append({h: _cell(c) for h, c in zip(header, cells, strict=True)})
            if rows:
                yield rows
            break


def _bare_tables(lines: list[str]) -> Iterable[list[dict[str, Any]]]:
    r"""The header-less pipe tables of a text's lines: two or more consecutive lines of the same
    number (three or more) of ``|``-separated cells, none starting with ``|``, each row a
    mapping of each cell by its column's number (from 1; a cell read as :func:`_tables` reads
    one).

    >>> next(_bare_tables(["Sheet:", "1 | pick | {\"bin\": \"A\"}", "2 | pack | box=3"]))
    [{'1': '1', '2': 'pick', '3': {'bin': 'A'}}, {'1': '2', '2': 'pack', '3': {'box': 3}}]
    """
    rows: list[list[str]] = []
    for line in [*lines, ""]:
        # a line that starts with "|" is a markdown table's (one with no rule line is no table)
        cells = _cells(line) if "|" in line and not line.startswith("|") else []
        if len(cells) >= 3 and (not rows or len(cells) == len(rows[0])):
            rows.append(cells)
            continue
        if len(rows) >= 2:
            yield [{str(n): _cell(c) for n, c in enumerate(r, 1)} for r in rows]
        rows = [cells] if len(cells) >= 3 else []


_COUNTER = re.compile(
    r"(?:(?:[A-Za-z]+[ \t]+)?\d+(?:[.)]|[ \t]*[:\u2013\u2014-])|#\d+[.):]?)[ \t]+"
)
"""A heading's counter and its separator, no part of its name (``Step 3 —``, ``Task 2:``,
``3.``, ``#3``); a number with no separator after it is the text's (``Pack 4 crates``)."""


def _heading_name(heading: str) -> str:
    """The name a step heading gives its step: its text after a counter (:data:`_COUNTER`),
    when that is a name, or the name before a colon or dash that opens a sentence
    (``pick: take 4 crates``, ``pick — take 4 crates``); else the text's slug (as markdown
    renderers make a heading's anchor).

    >>> _heading_name("Step 2 \u2014 ship-order"), _heading_name("3. Book the venue")
    ('ship-order', 'book-the-venue')
    >>> _heading_name("Pack 4 crates")  # a number inside the text is no counter
    'pack-4-crates'
    """
    counter = _COUNTER.match(heading)
    text = heading[counter.end() if counter else 0 :].strip()
    if _WORD.fullmatch(text):
        return text
    if (m := re.match(r"([A-Za-z_][\w-]*)[ \t]*(?::|\u2013|\u2014| - )[ \t]+\S", text)) and m[1]:
        return m[1]
    return re.sub(r"[^\w]+", "-", text.lower()).strip("-")


def _sections(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The steps a markdown document states as sections (docs/semantic-conventions.md, "Plans
    written as markdown sections"): two or more headings of the same level (the deepest level
    that has two), each section's body holding exactly one JSON object (in a fenced code block
    or on a line of its own: the step's call), as one mapping each: the heading's name
    (:func:`_heading_name`) under ``""``, the body's prose under ``goal``, then the object's
    fields. A section with no object or several, or a heading between that is no sibling, is no
    step: the document is then no plan. Headings inside fenced code are no headings.

    >>> (items,) = _sections('# Plan\n## 1. pick\nTake them.\n```json\n{"tool": "wms"}\n```\n'
    ...                      '## 2. ship\n{"tool": "courier", "args": {"box": "@pick"}}')
    >>> [(i[""], i["goal"], i["tool"]) for i in items]
    [('pick', 'Take them.', 'wms'), ('ship', '', 'courier')]
    """
    if "#" not in text:
        return
    headings: list[tuple[int, str, list[str]]] = []  # (level, text, body lines)
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := _HEADING.fullmatch(line)):  # an ATX heading line
            headings.append((len(m[1]), m[2], []))
            continue
        if headings:
            headings[-1][2].append(line)
    levels = [level for level, _, _ in headings]
    level = max((lv for lv in set(levels) if levels.count(lv) >= 2), default=0)
    if not level:
        return
    first = levels.index(level)
    steps = headings[first:]
    if any(lv != level for lv, _, _ in steps):
        return  # another heading among the steps': a document of other parts
    items: list[dict[str, Any]] = []
    for _, heading, body in steps:
        joined = "\n".join(body)
        objects = [v for v in _embedded_json(joined) if isinstance(v, dict)]
        if len(objects) != 1:
            return
        prose: list[str] = []
        inside = False
        for line in body:  # the sentences outside code and the object's line
            if _FENCE.match(line):
                inside = not inside
            elif not inside and line.strip() and not line.lstrip().startswith(("{", "[")):
                prose.append(line.strip())
        items.append({"": _heading_name(heading), "goal": " ".join(prose), **objects[0]})
    yield items


_FIELD = re.compile(r"([A-Za-z][\w-]*):(?:[ \t]+(.*)|)")


def _stanzas(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The records a text states as stanzas of ``Field: value`` lines (RFC 822 headers, Debian
    control files), stanzas apart by blank lines, a line that starts with a blank continuing
    its field: the stanzas whose first field has the same name, each as a mapping (a stanza of
    another line is none). A field family ``Name-key`` is one mapping under ``Name`` (whole
    numbers as numbers).

    >>> list(_stanzas("Order: 7\n\nStep: pick\nWith-bin: A\nWith-n: 2\n\nStep: ship\n"))[1]
    [{'Step': 'pick', 'With': {'bin': 'A', 'n': 2}}, {'Step': 'ship'}]

    The stanzas of a content-line document are its components (:func:`_components`).
    """
    if ":" not in text:
        return
    if "BEGIN:" in text:  # most texts hold no component: the pattern is not tried on them
        yield from _components(text)
    groups: dict[str, list[dict[str, Any]]] = {}
    for paragraph in re.split(r"\n[ \t]*\n", text.strip()):
        fields: dict[str, str] = {}
        for line in paragraph.strip("\n").splitlines():
            if line[:1] in (" ", "\t") and fields:
                last = next(reversed(fields))
                fields[last] = f"{fields[last]} {line.strip()}".strip()
            elif (m := _FIELD.fullmatch(line.rstrip())) is not None:
                fields[m[1]] = (m[2] or "").strip()
            else:
                fields = {}
                break
        if fields:
            groups.setdefault(next(iter(fields)), []).append(_field_families(fields))
    yield from groups.values()


_CONTENT_LINE = re.compile(r'([A-Za-z][A-Za-z0-9-]*)((?:;[A-Za-z0-9-]+=(?:"[^"]*"|[^;:"]*))*):(.*)')
"""An RFC 5545 / RFC 6350 content line: ``NAME;PARAM=value;...:value``."""
_TEXT_ESCAPE = re.compile(r"\\([\\;,nN])")


def _components(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The records a content-line document states (RFC 5545 iCalendar, RFC 6350 vCard: the
    syntax of CalDAV and CardDAV, which an app whose diary or address book runs on them asks
    a model to answer in): ``BEGIN:NAME`` ... ``END:NAME`` components, nested, of
    ``NAME;PARAM=value:value`` lines folded at 75 octets (a line break and one blank continue
    the line). The components of one name in one parent, each as a mapping of its properties
    (parameters dropped, text escapes undone, a repeated property's first value) read as
    stanza fields: the extension mark ``X-`` dropped (``X-ARG-DAY`` is the field ``ARG-DAY``,
    one of the family ``ARG``: :func:`_field_families`).

    >>> doc = ("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:pick\r\nX-TOOL:wms\r\nX-ARG-BIN:A\\, 2\r\n"
    ...        "X-ARG-N;VALUE=INTEGER:1\r\n 2\r\nEND:VTODO\r\nBEGIN:VTODO\r\nUID:ship\r\n"
    ...        "END:VTODO\r\nEND:VCALENDAR")
    >>> list(_components(doc))[0]
    [{'UID': 'pick', 'TOOL': 'wms', 'ARG': {'BIN': 'A, 2', 'N': 12}}, {'UID': 'ship'}]
    """
    # unfolded first: a folded line is one line whose break and one blank were added (3.1)
    stack: list[tuple[str, dict[str, str], dict[str, list[dict[str, Any]]]]] = []
    top: dict[str, list[dict[str, Any]]] = {}
    for line in re.sub(r"\r?\n[ \t]", "", text).splitlines():
        m = _CONTENT_LINE.fullmatch(line.strip())
        if m is None:
            continue  # the prose and fences around the document
        name, value = m[1].upper(), m[3]
        if name == "BEGIN":
            stack.append((value.upper(), {}, {}))
        elif name == "END" and stack and stack[-1][0] == value.upper():
            component, fields, inner = stack.pop()
            yield from inner.values()
            (stack[-1][2] if stack else top).setdefault(component, []).append(
                _field_families(fields)
            )
        elif stack:
            own = name.removeprefix("X-")
            stack[-1][1].setdefault(own, _TEXT_ESCAPE.sub(_unescaped_text, value))
    for _, _, inner in stack:  # a document cut short: what it closed
        yield from inner.values()
    yield from top.values()  # the documents themselves (vCards one after another)


def _unescaped_text(m: re.Match[str]) -> str:
    """An escaped character of a content line's text (RFC 5545 3.3.11: ``\\n`` a line break)."""
    return "\n" if m[1] in "nN" else m[1]


# --- Protocol Buffers text format -------------------------------------------------------------
_PB_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|(?P<s>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"|(?P<n>-?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?)(?![\w.]))"
    r"|(?P<i>-?[A-Za-z_]\w*|\[[\w./]+\])|(?P<p>[:{}<>\[\],;])"
)
"""A token of the Protocol Buffers text format: blanks and ``#`` comments (skipped), a quoted
string, a number, an identifier (a field name, an enum value, ``true``; ``[ext.name]`` an
extension or an ``Any``'s type URL) or a punctuation mark."""
_PB_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{4}|[0-7]{1,3}|.)")
_PB_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_PB_CLOSE = {"{": "}", "<": ">"}


def _pb_unescaped(m: re.Match[str]) -> str:
    """An escaped character of a text-format string (C escapes: ``\\n``, ``\\x41``, ``\\101``)."""
    e = m[1]
    if e[0] in "xu" and len(e) > 1:
        return chr(int(e[1:], 16))
    if e[0].isdigit():
        return chr(int(e, 8))
    return _PB_CHARS.get(e, e)


def _pb_scalar(kind: str, token: str) -> Any:
    """A scalar token's value: a number as a number, ``true`` / ``false`` as booleans, an enum
    value (an identifier) as its name."""
    if kind == "n":
        if token.lstrip("-")[:2] in ("0x", "0X"):
            return int(token, 16)
        if any(c in token for c in ".eEfF"):
            return float(token.rstrip("fF"))
        return int(token)
    return {"true": True, "True": True, "false": False, "False": False}.get(token, token)


def _textproto(text: str) -> dict[str, Any] | None:
    r"""A Protocol Buffers text-format message (the syntax of ``.textproto`` / ``.pbtxt``
    files: ``name: scalar``, ``name { ... }`` or ``name < ... >`` a message, ``name: [ ... ]``
    a list, ``#`` comments, separators ``,`` / ``;`` optional), read with no schema; None
    when the text is not one whole message with at least one message field. A field written
    once is its value, a field written more than once the list of its values; a message with
    a ``key`` field is a map entry (``map<K, V>`` is written as repeated entries ``{ key: ...
    value: ... }``), always in a list: a map of one entry is still a map.

    >>> _textproto('n: 1 step { id: "a" arg { key: "x" int_value: 2 } } step < id: "b" >')
    {'n': 1, 'step': [{'id': 'a', 'arg': [{'key': 'x', 'int_value': 2}]}, {'id': 'b'}]}
    >>> _textproto('name: "x" size: 3') is None  # no message field: stanzas, YAML read it
    True
    >>> _textproto("Here is the plan: step { id: a }") is None
    True
    """
    tokens: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        m = _PB_TOKEN.match(text, at)
        if m is None:
            return None
        at = m.end()
        if m.lastgroup:
            tokens.append((m.lastgroup, m[m.lastgroup]))
    tokens.append(("", ""))
    nested = False
    pos = 0

    def value() -> Any:
        nonlocal pos, nested
        kind, token = tokens[pos]
        if token in _PB_CLOSE:
            pos += 1
            nested = True
            return message(_PB_CLOSE[token])
        if kind == "s":
            parts = []
            while tokens[pos][0] == "s":  # adjacent strings are one string
                parts.append(_PB_ESCAPE.sub(_pb_unescaped, tokens[pos][1][1:-1]))
                pos += 1
            return "".join(parts)
        if kind in ("n", "i") and not token.startswith("["):
            pos += 1
            return _pb_scalar(kind, token)
        raise ValueError(token)

    def message(end: str) -> dict[str, Any]:
        nonlocal pos
        fields: dict[str, list[Any]] = {}
        while tokens[pos][1] != end:
            kind, name = tokens[pos]
            if kind != "i" or name.startswith("-"):
                raise ValueError(name)
            pos += 1
            colon = tokens[pos][1] == ":"
            pos += colon
            if tokens[pos][1] == "[" and colon:
                pos += 1
                items: list[Any] = []
                while tokens[pos][1] != "]":
                    items.append(value())
                    if tokens[pos][1] == ",":
                        pos += 1
                pos += 1
                fields.setdefault(name.strip("[]"), []).extend(items)
            elif colon or tokens[pos][1] in _PB_CLOSE:
                fields.setdefault(name.strip("[]"), []).append(value())
            else:
                raise ValueError(name)
            if tokens[pos][1] in (",", ";"):
                pos += 1
        pos += 1
        return {
            k: v[0] if len(v) == 1 and not (isinstance(v[0], dict) and "key" in v[0]) else v
            for k, v in fields.items()
        }

    try:
        out = message("")
    except (ValueError, IndexError):
        return None
    return out if nested and pos == len(tokens) else None


_PB_FENCED = re.compile(r"(?ms)^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$")
"""A fenced block of a markdown text: its body."""


def _textprotos(text: str) -> Iterable[dict[str, Any]]:
    r"""The Protocol Buffers text-format messages a text holds (:func:`_textproto`): the text
    itself, else each of its fenced blocks.

    >>> list(_textprotos('The plan:\n```textproto\nstep { id: "a" }\nstep { id: "b" }\n```'))
    [{'step': [{'id': 'a'}, {'id': 'b'}]}]
    """
    if not re.search(r"[\w\]][ \t]*:?[ \t]*[{<]", text):
        return  # no message field: most texts are not tried
    whole = _textproto(text)
    if whole is not None:
        yield whole
        return
    for m in _PB_FENCED.finditer(text):
        if (found := _textproto(m[2])) is not None:
            yield found


def _elements(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The element lists of the XML document a text holds (from its first ``<`` to its last
    ``>``; the parser resolves no external entity): the children of an element that share a
    tag and carry attributes, each as its attributes, its own children that have a ``name``
    as one mapping under their tag (each name's text, else its other attributes; whole numbers
    as numbers).

    >>> next(_elements('Plan: <plan><step id="a"><arg name="n">2</arg></step><step id="b"/>'
    ...                '</plan>'))
    [{'id': 'a', 'arg': {'n': 2}}, {'id': 'b'}]
    """
    start, end = text.find("<"), text.rfind(">")
    if start < 0 or end < start:
        return
    try:
        root = ElementTree.fromstring(text[start : end + 1])
    except ElementTree.ParseError:
        return
    for parent in root.iter():
        groups: dict[str, list[dict[str, Any]]] = {}
        for child in parent:
            if child.attrib:
                groups.setdefault(child.tag, []).append(_element_item(child))
        yield from groups.values()


_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s/]\S*")


def _uri_lines(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The records a text states as lines that are each one URI with a scheme and no authority
    (``scheme:path?query#fragment``, RFC 3986: a ``step:pick/wms?order=7#Pick+it`` line): the
    lines of the same scheme, each as a mapping of its percent-decoded parts: its path's
    segments under ``/1``, ``/2``, ..., its query's arguments as one mapping under ``?`` (form
    decoded, whole numbers as numbers), its fragment under ``#`` (``+`` a space, as
    ``quote_plus`` writes it).

    >>> _, steps = _uri_lines("plan:7\nstep:pick/wms?order=7&bin=%40a#Pick+it\nstep:ship/courier")
    >>> steps[0], len(steps)
    ({'/1': 'pick', '/2': 'wms', '?': {'order': 7, 'bin': '@a'}, '#': 'Pick it'}, 2)
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for line in text.splitlines():
        if not _URI.fullmatch(line := line.strip()):
            continue
        uri = urlsplit(line)
        item: dict[str, Any] = {
            f"/{i}": unquote(segment) for i, segment in enumerate(uri.path.split("/"), 1)
        }
        if uri.query:
            item["?"] = {k: _whole_number(v) for k, v in parse_qsl(uri.query)}
        if uri.fragment:
            item["#"] = unquote_plus(uri.fragment)
        groups.setdefault(uri.scheme, []).append(item)
    yield from groups.values()


_GANTT = re.compile(r"(?m)^[ \t]*gantt[ \t]*$")
"""The line that opens a Mermaid gantt diagram."""
_GANTT_KEYWORDS = frozenset(
    {"title", "dateformat", "axisformat", "tickinterval", "excludes", "includes", "todaymarker",
     "weekday", "weekend", "section", "inclusiveenddates", "topaxis", "displaymode",
     "acctitle", "accdescr", "click"}
)  # fmt: skip
"""The first words of a gantt diagram's lines that are no task (its settings, sections and
interactions; Mermaid's gantt syntax)."""
_GANTT_TAGS = frozenset({"active", "done", "crit", "milestone"})
_GANTT_ID = re.compile(r"[A-Za-z_][\w-]*")
_GANTT_CALL = re.compile(r"([A-Za-z_][\w.:-]*)[ \t]+(\{.*\})")


def _gantt_tasks(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The tasks of each Mermaid gantt diagram in a text (a fenced ````mermaid```` block or a
    bare diagram from its ``gantt`` line to the end of its block), as Mermaid reads a task line
    ``Title : [tags,] [id,] [start,] end|length``: its metadata after the last colon, split at
    commas; the leading tags (``done``, ``active``, ``crit``, ``milestone``) under ``tags``;
    then with three items left the first is the task's **id** (under ``""``), the next its
    start (``after a b``: the tasks it follows, under ``after``), the last its end or length;
    the title under ``title``. A ``%%`` comment line is no Mermaid syntax but a note: the
    comments under a task that read ``key: value`` are fields of that task (a value that is a
    name and a JSON object: the name, and the object under ``key`` + ``" with"``).

    >>> chart = ("gantt\n  dateFormat YYYY-MM-DD\n  section Yard\n"
    ...          "  Pick the crates :done, pick, 2027-01-04, 1d\n"
    ...          "  %% call: wms {\"bin\": \"A\"}\n  Ship them :ship, after pick, 2d\n")
    >>> [(t[""], t["title"], t.get("after")) for t in next(_gantt_tasks(chart))]
    [('pick', 'Pick the crates', None), ('ship', 'Ship them', ['pick'])]
    >>> next(_gantt_tasks(chart))[0]["call"], next(_gantt_tasks(chart))[0]["call with"]
    ('wms', {'bin': 'A'})
    """
    for block in _FENCE.split(text):  # the fences' marks come back too: no gantt line in them
        opened = _GANTT.search(block)
        if opened is None:
            continue
        tasks: list[dict[str, Any]] = []
        for line in block[opened.end() :].splitlines():
            line = line.strip()
            if line.startswith("%%"):
                note = line[2:].strip()
                key, colon, value = note.partition(":")
                if not (tasks and colon and _GANTT_ID.fullmatch(key.strip())):
                    continue
                value = value.strip()
                if (call := _GANTT_CALL.fullmatch(value)) is not None:
                    try:
                        args = safejson.loads(call[2])
                    except ValueError:
                        args = None
                    if isinstance(args, dict):
                        tasks[-1].setdefault(key.strip(), call[1])
                        tasks[-1].setdefault(f"{key.strip()} with", args)
                        continue
                tasks[-1].setdefault(key.strip(), value)
                continue
            if not line or line.split()[0].lower().rstrip(":") in _GANTT_KEYWORDS:
                continue
            title, colon, meta = line.partition(":")  # a title holds no colon (its grammar)
            if not colon or not title.strip():
                continue
            parts = [p.strip() for p in meta.split(",")]
            task: dict[str, Any] = {"title": title.strip()}
            tags = []
            while parts and parts[0] in _GANTT_TAGS:
                tags.append(parts.pop(0))
            if tags:
                task["tags"] = tags
            if len(parts) >= 3 and _GANTT_ID.fullmatch(parts[0]):
                task[""] = parts.pop(0)
            else:
                task[""] = task["title"]  # Mermaid numbers a task with no id: its title names it
            if len(parts) >= 2:
                start = parts.pop(0)
                if start.startswith("after "):
                    task["after"] = start.split()[1:]
                else:
                    task["start"] = start
            if parts:
                task["end"] = parts[-1]
            tasks.append(task)
        if tasks:
            yield tasks


def _element_item(element: ElementTree.Element) -> dict[str, Any]:
    """An element's attributes, its named children one mapping under their tag."""
    item: dict[str, Any] = dict(element.attrib)
    for child in element:
        name = child.attrib.get("name")
        if name is None or not isinstance(item.get(child.tag, {}), dict):
            continue
        others = {k: v for k, v in child.attrib.items() if k != "name"}
        text = (child.text or "").strip()
        item.setdefault(child.tag, {})[name] = _whole_number(text) if text else others
    return item


def _field_families(fields: dict[str, str]) -> dict[str, Any]:
    """A stanza's fields, those named ``Name-key`` as one mapping under ``Name``."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        family, _, key = name.partition("-")
        if key and not isinstance(out.get(family, {}), dict):
            key = ""
        if key:
            out.setdefault(family, {})[key] = _whole_number(value)
        else:
            out[name] = value
    return out


# --- Org-mode outlines (issue #13) ---------------------------------------------------------
_ORG_KEYWORDS = frozenset(
    {"TODO", "NEXT", "STARTED", "WAITING", "HOLD", "SOMEDAY", "DONE", "CANCELLED", "CANCELED"}
)
"""The TODO keywords read without a ``#+TODO:`` line: Org's default pair and the states its
manual's examples and most configurations add (a heading's first word in capitals)."""
_ORG_TODO_LINE = re.compile(r"(?i)[ \t]*#\+(?:SEQ_|TYP_)?TODO:[ \t]*(.*)")
_ORG_SETTING = re.compile(r"[ \t]*#\+[A-Za-z_]+:.*")
_ORG_HEADING = re.compile(r"(\*+)[ \t]+(.*?)[ \t]*")
_ORG_TAGS = re.compile(r"[ \t]+(:(?:[\w@#%]+:)+)$")
_ORG_PRIORITY = re.compile(r"\[#[A-Za-z0-9]\][ \t]*")
_ORG_COOKIE = re.compile(r"[ \t]*\[(?:\d*%|\d*/\d*)\]")
_ORG_DRAWER = re.compile(r"[ \t]*:([\w-]+):[ \t]*")
_ORG_PROPERTY = re.compile(r"[ \t]*:([^\s:]+?)(\+)?:(?:[ \t]+(.*?))?[ \t]*")
_ORG_PLANNING = re.compile(r"[ \t]*(?:SCHEDULED|DEADLINE|CLOSED):")
_ORG_BLOCK = re.compile(r"(?i)[ \t]*#\+(BEGIN|END)_(\w+)")
_ORG_ITEM = re.compile(r"[ \t]*(?:[-+]|\d+[.)])[ \t]+(?:\[([ xX-])\][ \t]+)?(.*)")
_ORG_DESCRIBED = re.compile(r"(\S.*?)[ \t]+::[ \t]+(.*)")
_ORG_LINK = re.compile(r"\[\[([^\[\]]+)\](?:\[([^\[\]]*)\])?\]")
_ORG_CALL = re.compile(r"(?<![\w.\[])([A-Za-z_][\w.]*)\(([^()]*)\)")
_ORG_LABEL = re.compile(
    r"([A-Za-z_][\w.-]*)(?::(?:[ \t]+(.*))?)?|([a-z_][a-z0-9_.-]*)[ \t]+([A-Z].*)"
)
_ORG_UUID = re.compile(r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ORG_NAME_KEYS = ("CUSTOM_ID", "NAME", "STEP", "STEP_ID", "SLUG", "ID")
"""The properties that name a step, in the order a step's id is taken from them (``ID``: only
when it is a name, not org-id's UUID)."""
_ORG_TOOL_KEYS = frozenset(
    {"TOOL", "CALL", "ACTION", "FUNCTION", "FN", "COMMAND", "CMD", "INVOKE", "USES", "SKILL"}
)
_ORG_DEPENDS_KEYS = frozenset({"BLOCKER", "DEPENDS", "DEPENDS_ON", "DEPENDSON", "AFTER"})
_ORG_ARGS_KEYS = frozenset({"ARGS", "ARGUMENTS", "PARAMS", "PARAMETERS", "INPUT", "INPUTS"})
_ORG_ARG_PREFIX = re.compile(r"(?i)(?:ARGS?|PARAMS?|INPUT)[_-](?=\w)")
_ORG_NOT_ARGS = frozenset(
    {"TRIGGER", "ORDERED", "RESULT", "RESULTS", "OUTPUT", "OUTCOME", "CATEGORY", "EFFORT",
     "COOKIE_DATA", "LOGGING", "ARCHIVE", "VISIBILITY", "COLUMNS", "STYLE", "LAST_REPEAT",
     "CREATED", "CLOCK_MODELINE_TOTAL", "NOBLOCKING", "ALLTAGS", "TAGS", "ITEM", "TODO",
     "PRIORITY", "SCHEDULED", "DEADLINE", "CLOSED", "BLOCKED", "FILE", "TIMESTAMP"}
)  # fmt: skip
"""Properties that are Org's own (the manual's special and standard properties) or a step's
outcome: no argument of the step."""


@dataclass
class _OrgNode:
    """One Org heading: its level, TODO keyword, title (no keyword, priority, cookie or tags),
    tags, properties, body lines (drawers and planning lines out), source blocks, children."""

    level: int
    keyword: str
    title: str
    tags: tuple[str, ...]
    props: dict[str, str] = field(default_factory=dict)
    """Its properties by their names in capitals (Org's names are case-insensitive)."""
    spelt: dict[str, str] = field(default_factory=dict)
    """Each property's name as written, by its name in capitals."""
    body: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    children: list[_OrgNode] = field(default_factory=list)
    parent: _OrgNode | None = None


def _org_keywords(lines: list[str]) -> frozenset[str]:
    """The TODO keywords of a document: :data:`_ORG_KEYWORDS` and those of its ``#+TODO:``
    lines (``#+TODO: TODO(t) NEXT | DONE(d@)``: fast-access keys and log marks dropped)."""
    found = set(_ORG_KEYWORDS)
    for line in lines:
        if m := _ORG_TODO_LINE.fullmatch(line):
            found |= {re.sub(r"\(.*\)$", "", w) for w in m[1].split() if w != "|"}
    return frozenset(found)


def _org_tree(text: str) -> list[_OrgNode] | None:
    """The headings of an Org document in order (each with its parent), or None when the text
    is no Org outline: it needs a heading line (``* ...``) and something only Org writes
    (a ``#+KEYWORD:`` line, a property drawer, a TODO keyword or tags on a heading, a deeper
    ``**`` heading, a SCHEDULED / DEADLINE line): a markdown bullet list (``* item``) is none."""
    lines = text.splitlines()
    keywords = _org_keywords(lines)
    nodes: list[_OrgNode] = []
    stack: list[_OrgNode] = []
    org = False
    drawer = ""
    block: list[str] | None = None
    for line in lines:
        if block is not None:
            if (m := _ORG_BLOCK.match(line)) and m[1].upper() == "END":
                if stack:
                    stack[-1].blocks.append("\n".join(block))
                block = None
            else:
                block.append(line)
            continue
        if (m := _ORG_BLOCK.match(line)) and m[1].upper() == "BEGIN":
            block = []
            org = True
            continue
        heading = _ORG_HEADING.fullmatch(line)
        if heading is not None:
            drawer = ""
            level, rest = len(heading[1]), heading[2]
            word, _, after = rest.partition(" ")
            keyword = word if word in keywords else ""
            if keyword:
                rest = after.strip()
            rest = _ORG_PRIORITY.sub("", rest, count=1)
            tags: tuple[str, ...] = ()
            if t := _ORG_TAGS.search(" " + rest):
                tags = tuple(x for x in t[1].split(":") if x)
                rest = (" " + rest)[: t.start()].strip()
            rest = _ORG_COOKIE.sub("", rest).strip()
            org = org or bool(keyword or tags or level > 1)
            while stack and stack[-1].level >= level:
                stack.pop()
            node = _OrgNode(level, keyword, rest, tags, parent=stack[-1] if stack else None)
            if node.parent is not None:
                node.parent.children.append(node)
            nodes.append(node)
            stack.append(node)
            continue
        if _ORG_SETTING.fullmatch(line):
            org = True
            continue
        if not stack:
            continue
        if drawer:
            if (m := _ORG_DRAWER.fullmatch(line)) and m[1].upper() == "END":
                drawer = ""
            elif drawer == "PROPERTIES" and (p := _ORG_PROPERTY.fullmatch(line)):
                key, value = p[1].upper(), (p[3] or "").strip()
                props = stack[-1].props
                props[key] = f"{props[key]} {value}".strip() if p[2] and key in props else value
                stack[-1].spelt.setdefault(key, p[1])
            continue
        if m := _ORG_DRAWER.fullmatch(line):
            drawer = m[1].upper()
            org = True
            continue
        if _ORG_PLANNING.match(line):
            org = True
            continue
        if line.strip():
            stack[-1].body.append(line)
    return nodes if org and nodes else None


def _org_slug(title: str) -> str:
    """A heading's slug: its link descriptions' text, lower case, each run of other
    characters than letters and digits one ``_`` (as org-roam and most exporters make one)."""
    text = _ORG_LINK.sub(lambda m: m[2] or m[1], title)
    return re.sub(r"[\W_]+", "_", text.lower()).strip("_")


def _org_label(title: str) -> str:
    """The name a heading's title starts with, when it writes one: the title itself when it is
    a name (``find_crew``), a name before a colon (``pick: Take 4 crates``), or a lower-case
    name before a capitalised sentence (``pick Take 4 crates``); '' otherwise (``Book the
    venue``: its slug names it)."""
    m = _ORG_LABEL.fullmatch(title)
    return (m[1] or m[3]) if m else ""


def _org_id(node: _OrgNode) -> str:
    """A step heading's id (docs/semantic-conventions.md, "Plans written as an Org-mode
    outline"): its ``CUSTOM_ID``, else a name property (``NAME``, ``STEP``, ``STEP_ID``,
    ``SLUG``), else its ``ID`` when that is a name (not org-id's UUID), else the name its
    title starts with (:func:`_org_label`), else its title's slug (:func:`_org_slug`)."""
    for key in _ORG_NAME_KEYS:
        value = node.props.get(key, "").strip()
        if value and (key != "ID" or (_WORD.fullmatch(value) and not _ORG_UUID.search(value))):
            return value.removeprefix("#")
    title = _org_title(node.title)
    return _org_label(title) or _org_slug(title)


def _org_title(title: str) -> str:
    """A title without the calls it writes (``Tell the guests: send_invites(n=40)``) and
    their verbatim marks, nor a trailing colon: what names the heading."""
    return _ORG_CALL.sub("", title).replace("=", " ").replace("~", " ").strip().rstrip(":").strip()


def _org_call(node: _OrgNode, title: str, names: Mapping[str, str]) -> tuple[str, str] | None:
    """The call a heading writes as ``name(args)``: in a tool property's value, else its
    title, its body lines, its source blocks (first found); (name, the text of its
    arguments)."""
    texts = [v for k, v in node.props.items() if k in _ORG_TOOL_KEYS]
    body = [line for line in node.body if not _org_checkbox(line)]
    texts += [_org_value(t, names) for t in (title, *body, *node.blocks)]
    for text in texts:
        if m := _ORG_CALL.search(text):
            return m[1], m[2]
    return None


def _org_outlines(text: str) -> Iterable[list[dict[str, Any]]]:
    r"""The steps an Org-mode outline states (:func:`_org_tree`), as one list of mappings
    (``id``, ``tool``, ``args`` when any, ``depends_on``, ``goal``): its leaf headings (when
    some carry a TODO keyword, those that do), ``COMMENT`` and ``:ARCHIVE:`` subtrees left out;
    then, when a step heading states no call and lists checkbox items (``- [ ] ...``), the
    same with those items as its steps. A step's id: :func:`_org_id`; its tool: a tool-like
    property (``:TOOL:``, ``:CALL:``, ``:ACTION:`` ...) or a ``name(args)`` call in it; its
    arguments: its other properties (``ARG_`` / ``PARAM_`` prefixes dropped, Org's own
    special properties left out), an ``ARGS`` property's pairs, the call's, and description
    items (``- key :: value``); it depends on the steps its links name (``[[#custom-id]]``,
    ``[[*Heading]]``, ``[[id:...]]``, ``[[name]]``: written as ``[[<step id>]]`` in its
    values), its ``BLOCKER`` / ``DEPENDS`` (org-edna's ``ids(...)``, org-depend's ids,
    ``previous-sibling``), the ``TRIGGER`` of an earlier step naming it, and, under an
    ``:ORDERED: t`` parent, the sibling before it.

    >>> (steps,) = _org_outlines("#+TITLE: Gala\n* TODO [#A] Book the hall :venue:\n"
    ...     "  :PROPERTIES:\n  :CUSTOM_ID: hall\n  :TOOL: reserve_hall\n  :date: 2027-03-01\n"
    ...     "  :END:\n* NEXT Tell the guests\n  send_invites(hall=\"[[#hall]]\", n=40)\n")
    >>> [(s["id"], s["tool"], s.get("args"), s["depends_on"]) for s in steps][1]
    ('tell_the_guests', 'send_invites', {'hall': '[[hall]]', 'n': 40}, ['hall'])
    """
    if "*" not in text or not re.search(r"(?m)^\*+[ \t]", text):
        return  # most texts hold no heading: the outline is not parsed
    nodes = _org_tree(text)
    if nodes is None:
        return
    hidden: set[int] = set()  # a parent comes before its children: one pass
    for n in nodes:
        if n.title.startswith("COMMENT") or "ARCHIVE" in n.tags or id(n.parent) in hidden:
            hidden.add(id(n))
    live = [n for n in nodes if id(n) not in hidden]
    leaves = [n for n in live if all(id(c) in hidden for c in n.children)]
    if any(n.keyword for n in leaves):
        leaves = [n for n in leaves if n.keyword]
    if not leaves:
        return
    ids = {id(n): _org_id(n) for n in live}
    names: dict[str, str] = {}  # every way a link or a dependency may name a heading
    for n in live:
        for key in ("ID", "CUSTOM_ID"):
            if n.props.get(key):
                names.setdefault(n.props[key], ids[id(n)])
        names.setdefault(n.title, ids[id(n)])
        names.setdefault(ids[id(n)], ids[id(n)])
    steps = [_org_step(n, ids[id(n)], names) for n in leaves]
    _org_order(leaves, steps, names)
    yield steps
    parts: list[list[_OrgNode] | dict[str, Any]] = []
    for node, step in zip(leaves, steps, strict=True):
        items = [i for line in node.body if (i := _org_checkbox(line))]
        if items and not step["tool"]:
            parts.append([_OrgNode(0, "", i.strip(), ()) for i in items])
        else:
            parts.append(step)
    if all(isinstance(p, dict) for p in parts):
        return
    items_named = dict(names)
    for part in parts:
        for item in part if isinstance(part, list) else ():
            items_named.setdefault(_org_id(item), _org_id(item))
    yield [
        s
        for part in parts
        for s in (
            [_org_step(i, _org_id(i), items_named) for i in part]
            if isinstance(part, list)
            else [part]
        )
    ]


def _org_checkbox(line: str) -> str:
    """A checkbox item's text (``- [ ] Book the hall``), '' for any other line."""
    m = _ORG_ITEM.fullmatch(line)
    return m[2] if m and m[1] else ""


def _org_target(path: str) -> str:
    """A link's path as the heading it may name: ``id:``, ``#`` (custom id) and ``*`` (title)
    marks dropped."""
    return path.removeprefix("id:").removeprefix("#").removeprefix("*").strip()


def _org_value(value: str, names: Mapping[str, str]) -> str:
    """A property's or an argument's value with each link to a heading written as
    ``[[<its step id>]]`` (``[[#hall]]``, ``[[*Book the hall]]``, ``[[id:...]]``); a link of
    another type (``[[result:pick]]``) or to nothing the outline names (a URL) kept as
    written."""

    def link(m: re.Match[str]) -> str:
        target = _org_target(m[1])
        return f"[[{names[target]}]]" if target in names else m[0]

    return _ORG_LINK.sub(link, value)


_ORG_LINK_TYPE = re.compile(r"[A-Za-z][\w-]*:")


def _org_linked(texts: Iterable[str], names: Mapping[str, str]) -> list[str]:
    """The step ids the links of ``texts`` name, in order: a link to a heading
    (:func:`_org_value`), or a link of any type whose path is a step's name (an app's
    ``[[result:pick]]``: that step's result)."""
    out: list[str] = []
    for text in texts:
        for m in _ORG_LINK.finditer(text):
            target = _org_target(m[1])
            if target not in names and (typed := _ORG_LINK_TYPE.match(target)):
                target = target[typed.end() :]
            if target in names and names[target] not in out:
                out.append(names[target])
    return out


def _org_step(node: _OrgNode, step_id: str, names: Mapping[str, str]) -> dict[str, Any]:
    """One step heading as a plan item (:func:`_org_outlines`)."""
    goal = _org_title(node.title)
    label = _org_label(goal)
    if label and goal != label:
        goal = re.sub(rf"^{re.escape(label)}:?[ \t]*", "", goal)
    call = _org_call(node, node.title, names)
    tool = next((v.split("(")[0].split()[0] for k, v in node.props.items()
                 if k in _ORG_TOOL_KEYS and v.strip()), "")  # fmt: skip
    args: dict[str, Any] = {}
    if call is not None:
        tool = tool or call[0]
        args |= _org_pairs(call[1], {call[0], step_id}, names)
    for key, value in node.props.items():
        if key in _ORG_ARGS_KEYS:
            args |= _org_pairs(value, {tool, step_id}, names)
        elif not (
            key in _ORG_TOOL_KEYS
            or key in _ORG_NOT_ARGS
            or key in _ORG_DEPENDS_KEYS
            or key in _ORG_NAME_KEYS
        ):
            name = _ORG_ARG_PREFIX.sub("", node.spelt.get(key, key), count=1)
            args.setdefault(name, _whole_number(_org_value(value, names)))
    for line in node.body:
        item = _ORG_ITEM.fullmatch(line)
        if (
            item
            and not item[1]
            and "::" in item[2]  # most items describe nothing: the pattern is not tried
            and (described := _ORG_DESCRIBED.fullmatch(item[2]))
        ):
            key = described[1].strip("=~*/ ")
            args.setdefault(key, _whole_number(_org_value(described[2].strip(), names)))
    own = {step_id}
    depends = [
        s
        for s in _org_linked([node.title, *node.body, *node.props.values()], names)
        if s not in own
    ]
    for key in _ORG_DEPENDS_KEYS & node.props.keys():
        depends += [s for s in _org_named(node.props[key], names) if s not in own | set(depends)]
    step: dict[str, Any] = {"id": step_id, "tool": tool, "goal": " ".join([goal, *node.body])}
    if args:
        step["args"] = args
    step["depends_on"] = depends
    return step


def _org_pairs(text: str, exclude: set[str], names: Mapping[str, str]) -> dict[str, Any]:
    """The arguments a call's parentheses or an ``ARGS`` property write: a JSON object, else
    pairs in any syntax (:func:`_pairs`), links to headings as ``[[<step id>]]``."""
    text = text.strip()
    if (value := _json_object(text)) is not None:
        return value
    return {
        k: _org_value(v, names) if isinstance(v, str) else v
        for k, v in _pairs(text, exclude).items()
    }


def _org_named(value: str, names: Mapping[str, str]) -> list[str]:
    """The step ids a ``BLOCKER`` / ``DEPENDS`` / ``TRIGGER`` value names: org-edna's
    ``ids("a" b)``, org-depend's space-separated ids (``a(NEXT)`` its trigger form), links."""
    out = _org_linked([value], names)
    for found in re.finditer(r"ids\(([^()]*)\)", value):
        value += " " + found[1]
    for word in re.split(r"[\s,()]+", _ORG_LINK.sub(" ", value)):
        word = word.strip("\"'").removeprefix("id:").removeprefix("#")
        if word in names and names[word] not in out:
            out.append(names[word])
    return out


def _org_order(
    leaves: list[_OrgNode], steps: list[dict[str, Any]], names: Mapping[str, str]
) -> None:
    """Add the dependencies an outline's order writes: under an ``:ORDERED: t`` parent (and
    for a ``previous-sibling`` blocker) the step sibling before, and the steps an earlier
    step's ``TRIGGER`` names (``chain-siblings`` / ``next-sibling``: the sibling after)."""
    by_node = {id(n): s for n, s in zip(leaves, steps, strict=True)}

    def sibling(node: _OrgNode, offset: int) -> dict[str, Any] | None:
        kin = [c for c in (node.parent.children if node.parent else leaves) if id(c) in by_node]
        at = next((i for i, c in enumerate(kin) if c is node), None)
        if at is None or not 0 <= at + offset < len(kin):
            return None
        return by_node[id(kin[at + offset])]

    def depend(step: dict[str, Any] | None, on: str) -> None:
        if step is not None and on != step["id"] and on not in step["depends_on"]:
            step["depends_on"].append(on)

    ids = {s["id"]: s for s in steps}
    for node, step in zip(leaves, steps, strict=True):
        ordered = node.parent is not None and node.parent.props.get("ORDERED", "").lower() in (
            "t",
            "true",
            "yes",
        )
        blocker = " ".join(node.props.get(k, "") for k in _ORG_DEPENDS_KEYS)
        if (ordered or re.search(r"(?i)prev(ious)?-sibling", blocker)) and (
            before := sibling(node, -1)
        ):
            depend(step, before["id"])
        trigger = node.props.get("TRIGGER", "")
        if re.search(r"(?i)chain-siblings|next-sibling", trigger):
            depend(sibling(node, 1), step["id"])
        for other in _org_named(trigger, names):
            depend(ids.get(other), step["id"])


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().removeprefix("|").removesuffix("|").split("|")]


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` states (it starts with ``{``), else None.

    >>> _json_object('{"bin": "A2"}'), _json_object("bin=A2"), _json_object("{not json")
    ({'bin': 'A2'}, None, None)
    """
    if not text.startswith("{"):
        return None
    try:
        value = safejson.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _cell(text: str) -> Any:
    """A table cell's value: a mapping when it states one (:func:`_tables`; a URL query string,
    :data:`_QUERY`, form-decoded as :func:`_pairs` reads one), else its text.

    >>> _cell("hall=ref:find&day=2027-05-11&by=Kettle+%26+Drum"), _cell('"a=1; b";c=2')
    ({'hall': 'ref:find', 'day': '2027-05-11', 'by': 'Kettle & Drum'}, {'a': '1; b', 'c': 2})
    """
    if (value := _json_object(text)) is not None:
        return value
    if "&" in text and _QUERY.fullmatch(text):  # a query string: its ``&`` separates pairs
        return {k: _whole_number(v) for k, v in parse_qsl(text, keep_blank_values=True)}
    # quoted as a CSV cell is (RFC 4180): a value may hold the delimiter
    parts = next(csv.reader([text], delimiter=";" if ";" in text else ",", skipinitialspace=True))
    pairs = [m.groups() for p in parts if (m := _PAIR.fullmatch(p))]
    if not pairs or len(pairs) < len([p for p in parts if p.strip()]):
        return text
    return {k: _whole_number(v) for k, v in pairs}


# --- what an LLM call was asked -----------------------------------------------------------------
# The flattened message attributes of OpenInference (llm.input_messages.{i}.message.role /
# .content / .contents.{j}.message_content.text) and the older OpenLLMetry
# (gen_ai.prompt.{i}.role / .content) that user_request reads; "[.]" instead of "\\." keeps
# SQL and regex escaping apart.
_FLAT_MESSAGE_KEYS = (
    f"^{A.OI_INPUT_MESSAGES.replace('.', '[.]')}[.][0-9]+[.]message[.]"
    "(role|content|contents[.][0-9]+[.]message_content[.]text)$",
    f"^{A.GEN_AI_PROMPT.replace('.', '[.]')}[.][0-9]+[.](role|content)$",
)


_APP_STEP_KEY = r"([.]step|step_id|[.]step[.]id)$"
"""An application's attribute naming the step of the work its span does (``app.step``,
``app.step_id``), as a framework copies an app's attributes onto every span of an agent call
(Strands Agents' ``trace_attributes``)."""


def app_step(attributes: Mapping[str, Any]) -> str:
    """The step an application's attribute names (:data:`_APP_STEP_KEY`; the first such key,
    by key), empty when none.

    >>> app_step({"gen_ai.agent.name": "executor", "shop.step": "pick", "shop.attempt": 2})
    'pick'
    """
    keys = sorted(k for k in attributes if re.search(_APP_STEP_KEY, k))
    return str(attributes[keys[0]]).strip() if keys else ""


_USER_EVENT = A.GEN_AI_USER_MESSAGE_EVENT
_CHOICE_EVENT = A.GEN_AI_CHOICE_EVENT
_TOOL_EVENT = A.GEN_AI_TOOL_MESSAGE_EVENT
_CHAT_END_EVENT = A.LLAMAINDEX_CHAT_END_EVENT
_COMPLETION_END_EVENT = A.LLAMAINDEX_COMPLETION_END_EVENT
_ANSWER_EVENTS = (_CHOICE_EVENT, _CHAT_END_EVENT, _COMPLETION_END_EVENT)
_EVENT_VALUES = {
    _USER_EVENT: "content",
    _CHOICE_EVENT: "message",
    _TOOL_EVENT: "content",
    _CHAT_END_EVENT: "response.message.blocks",
    _COMPLETION_END_EVENT: "response.text",
}
"""Events a span records its messages as (Strands Agents' own GenAI events: what an agent
call or chat call was asked, ``gen_ai.user.message``; what it answered, ``gen_ai.choice``;
what a tool call was called with, ``gen_ai.tool.message``; LlamaIndex's native OpenTelemetry
integration: what a chat call answered, ``LLMChatEndEvent``'s ``response.message.blocks`` (a
JSON list of content blocks), a completion call ``LLMCompletionEndEvent``'s ``response.text``)
and the attribute holding each event's message: read as attributes named after the event
(:func:`event_values_sql`) where a span has no attribute saying the same."""


def event_values_sql(names: Iterable[str], events: str = "Events") -> str:
    """SQL for a Map of the message of each event of ``names`` (:data:`_EVENT_VALUES`) that a
    span of ``otel_traces`` records (its first such event), keyed by the event's name.

    >>> event_values_sql(["gen_ai.choice"]).endswith(
    ...     "Events.Attributes[indexOf(Events.Name, 'gen_ai.choice')]['message'], '')))")
    True
    """
    entries = ", ".join(
        f"'{n}', if(has({events}.Name, '{n}'), "
        f"{events}.Attributes[indexOf({events}.Name, '{n}')]['{_EVENT_VALUES[n]}'], '')"
        for n in names
    )
    return f"mapFilter((k, v) -> v != '', map({entries}))"


def event_values(events: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """What :func:`event_values_sql` selects, of a span's events as the trace API holds them
    (``name``, ``attributes``): the message of its first event of each of those names.

    >>> event_values([{"name": "gen_ai.choice", "attributes": {"message": "Plan: a"}},
    ...               {"name": "gen_ai.choice", "attributes": {"message": "again"}}])
    {'gen_ai.choice': 'Plan: a'}
    """
    out: dict[str, str] = {}
    for e in events:
        name = e["name"]
        if name in _EVENT_VALUES and name not in out:
            out[name] = str(e["attributes"].get(_EVENT_VALUES[name]) or "")
    return {k: v for k, v in out.items() if v}


def _event_text(value: str) -> str:
    """An event's message as text: a JSON list of content blocks (``[{"text": ...}]``, as
    Strands Agents records them) their texts, one per line; any other value as it is.

    >>> _event_text('[{"text": "1. fetch"}, {"toolUse": {}}]'), _event_text("done")
    ('1. fetch', 'done')
    """
    if not value.startswith("[{"):
        return value
    try:
        decoded = safejson.loads(value)
    except ValueError:
        return value
    if not isinstance(decoded, list):
        return value
    texts = [b["text"] for b in decoded if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(texts)


def user_request_sql(column: str = "SpanAttributes") -> str:
    """SQL for the attributes of ``column`` (an ``otel_traces`` attribute map) that
    :func:`user_request` reads: a Map, empty for a span that records no input messages.

    >>> user_request_sql().startswith("mapUpdate(mapFilter((k, v) -> v != '', map('gen_ai.user")
    True
    """
    keys = " OR ".join(f"match(k, '{pattern}')" for pattern in _FLAT_MESSAGE_KEYS)
    # a Langfuse observation's or an MLflow span's input is a chat call's messages only when it
    # names roles (as is a Logfire OpenAI span's request_data) or is a Gemini request's
    # ``contents`` (MLflow's Gemini autologging; one string when the app passed one: no role)
    inputs = f"'{A.LF_OBSERVATION_INPUT}', '{A.MLFLOW_SPAN_INPUTS}', '{A.LOGFIRE_REQUEST_DATA}'"
    asks = "(position(v, '\"role\"') > 0 OR position(v, '\"contents\"') > 0)"
    chat = f"(k IN ({inputs}) AND {asks})"
    # Google ADK's request (a tool span's is an empty object)
    adk = f"(k = '{A.ADK_LLM_REQUEST}' AND v != '{{}}')"
    said = (
        f"mapFilter((k, v) -> k IN ('{A.GEN_AI_INPUT_MESSAGES}', '{A.AI_SDK_PROMPT_MESSAGES}') "
        f"OR {keys} OR {chat} OR {adk}, "
        f"{column})"
    )
    return f"mapUpdate({event_values_sql([_USER_EVENT])}, {said})"


def user_request(attributes: Mapping[str, str]) -> str:
    """The user's text an LLM call was given (its user messages, lines joined; empty when none),
    from its span's attributes in any convention the span model reads: GenAI
    ``gen_ai.input.messages`` (parts, as pydantic-ai and OpenLLMetry write them, or a string
    ``content``), else the Vercel AI SDK's ``ai.prompt.messages`` (content parts), else
    OpenInference's ``llm.input_messages.{i}.message.*``, else the older OpenLLMetry
    ``gen_ai.prompt.{i}.role`` / ``.content``, else a Langfuse generation's
    ``langfuse.observation.input`` or an MLflow chat span's ``mlflow.spanInputs`` (the messages,
    or a request holding them, also a Gemini request's ``contents``: :func:`_json_messages`),
    else a Logfire OpenAI span's ``request_data`` (the request, data format version 1), else
    its first ``gen_ai.user.message`` event's content (Strands Agents),
    else Google ADK's ``gcp.vertex.agent.llm_request`` (:func:`_adk_request`: the agent's
    instruction and the user contents); after them, the arguments of the conversation's latest
    handoff (``_conversation.handed_over``: an OpenAI Agents SDK agent handed a work order).

    >>> user_request({"gen_ai.input.messages": '[{"role": "system", "content": "Be brief."},'
    ...               ' {"role": "user", "parts": [{"type": "text", "content": "Ship 1.2.3"}]}]'})
    'Ship 1.2.3'
    >>> user_request({"llm.input_messages.0.message.role": "system",
    ...               "llm.input_messages.0.message.content": "You plan.",
    ...               "llm.input_messages.1.message.role": "user",
    ...               "llm.input_messages.1.message.content": "Refund order 42"})
    'Refund order 42'
    >>> user_request({"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Book a hotel"})
    'Book a hotel'
    >>> user_request({"ai.prompt.messages": '[{"role": "system", "content": "Act."}, {"role": '
    ...               '"user", "content": [{"type": "text", "text": "Step refund: do it"}]}]'})
    'Step refund: do it'
    >>> user_request({"langfuse.observation.input": '{"messages": [{"role": "user", '
    ...               '"content": "Move on May 2"}], "tools": []}'})
    'Move on May 2'
    >>> user_request({"request_data": '{"messages": [{"role": "user", "content": "Fund it"}], '
    ...               '"model": "gpt-4o-mini"}'})
    'Fund it'
    >>> user_request({"gen_ai.user.message": '[{"text": "Cast bell 7"}]'})
    'Cast bell 7'
    >>> user_request({"gcp.vertex.agent.llm_request": '{"config": {"system_instruction": '
    ...               '"Renew loan 7."}, "contents": [{"role": "user", '
    ...               '"parts": [{"text": "Go"}]}]}'})
    'Renew loan 7.\\nGo'
    >>> user_request({"gen_ai.input.messages": '[{"role": "user", "content": "Ship 7"}, '
    ...               '{"role": "assistant", "parts": [{"type": "tool_call", "id": "c", '
    ...               '"name": "transfer_to_desk", "arguments": {"step": "pick"}}]}, '
    ...               '{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", '
    ...               '"response": "{\\\\"assistant\\\\": \\\\"desk\\\\"}"}]}]'})
    'Ship 7\\n{"step": "pick"}'
    """
    messages = _json_messages(attributes.get(A.GEN_AI_INPUT_MESSAGES))
    if not messages:  # the Vercel AI SDK's provider call: its messages (content parts)
        messages = _json_messages(attributes.get(A.AI_SDK_PROMPT_MESSAGES))
    if not messages:
        for prefix in (A.OI_INPUT_MESSAGES, A.GEN_AI_PROMPT):
            if messages := flat_messages(attributes, prefix + "."):
                break
    if not messages:
        messages = _json_messages(attributes.get(A.LF_OBSERVATION_INPUT))
    if not messages:
        messages = _json_messages(attributes.get(A.MLFLOW_SPAN_INPUTS))
    if not messages:
        messages = _json_messages(attributes.get(A.LOGFIRE_REQUEST_DATA))
    if not messages and (said := attributes.get(_USER_EVENT)):
        return _event_text(said)
    if not messages and (said := attributes.get(A.ADK_LLM_REQUEST)):
        return _adk_request(said)
    messages = [m for m in messages if isinstance(m, dict)]
    users = [
        text
        for m in messages
        if m.get("role") == "user"
        for text in _texts(m.get("content"), m.get("parts"))
    ]
    # what a handoff gave the agent now answering (its work order: in no span of its own)
    return "\n".join(filter(None, [*users, handed_over(messages)]))


_LLM_ANSWER_KEYS = (
    A.OI_OUTPUT_MESSAGE_CONTENT,
    "llm.output_messages.0.message.contents.0.message_content.text",
    A.GEN_AI_OUTPUT_MESSAGES,
    A.GEN_AI_COMPLETION_CONTENT,
    A.LF_OBSERVATION_OUTPUT,
    A.MLFLOW_SPAN_OUTPUTS,
    A.LOGFIRE_RESPONSE_DATA,
    A.LOGFIRE_AGENTS_OUTPUT,
    A.ADK_LLM_RESPONSE,
    A.GEN_AI_COMPLETION,
    A.HAYSTACK_LLM_OUTPUT,
    A.HAYSTACK_COMPONENT_OUTPUT,
    A.AI_SDK_RESPONSE_TEXT,
    *_ANSWER_EVENTS,
)
"""Where an LLM call's answer text is, in the conventions the span model reads (an OpenInference
LLM span's ``output.value`` is the message envelope, not its text; a Langfuse generation's
output is the message, or its text; an MLflow chat span's the provider's response; a Logfire
OpenAI span's ``response_data`` holds the message; a Logfire openai-agents model call's
``output`` the messages the model answered; Google ADK's ``call_llm`` its ``LlmResponse``;
LangSmith's OpenTelemetry export's llm run its outputs in a bare ``gen_ai.completion``, LangChain's
``LLMResult``; Haystack's own tracer's Agent LLM step, or a pipeline's generator component, its
output ``{"replies": [ChatMessage...]}``; the Vercel AI SDK's provider call its
``ai.response.text``; LlamaIndex's native integration's chat or completion end event)."""
_RUN_ANSWER_KEYS = (
    A.OI_OUTPUT_VALUE,
    A.TL_ENTITY_OUTPUT,
    "final_result",
    A.GEN_AI_OUTPUT_MESSAGES,
    A.LF_OBSERVATION_OUTPUT,
    A.MLFLOW_SPAN_OUTPUTS,
    _CHOICE_EVENT,
)
"""Where an agent run's output is: OpenInference, Traceloop, pydantic-ai's typed output, GenAI,
Langfuse, MLflow, else its ``gen_ai.choice`` event (Strands Agents)."""
_TOOL_ARGUMENT_KEYS = (
    A.GEN_AI_TOOL_CALL_ARGUMENTS,
    A.AI_SDK_TOOL_ARGS,
    A.OI_INPUT_VALUE,
    A.TL_ENTITY_INPUT,
    "tool_arguments",
    A.TL_TOOL_ARGUMENTS,
    A.LF_OBSERVATION_INPUT,
    A.MLFLOW_SPAN_INPUTS,
    A.ADK_TOOL_CALL_ARGS,
    A.GEN_AI_PROMPT,
    _TOOL_EVENT,
)
"""Where a tool call's arguments are, in the order the span model's ``Arguments`` column reads
them (migrations 0029, 0034, 0038; Google ADK's: 0048; LangSmith's bare ``gen_ai.prompt``:
0050; the Vercel AI SDK's ``ai.toolCall.args``: 0057), else its ``gen_ai.tool.message`` event
(Strands Agents): what a planner said through the tools it called."""
_TOOL_RESULT_KEY = A.GEN_AI_TOOL_CALL_RESULT
"""Where a tool call's result is (GenAI): what an agent run as a tool answered when its own
spans are traced beside the call, not under it (:func:`_agent_tools`)."""


_OI_CALL_ARGUMENTS = (
    r"^llm[.]output_messages[.]0[.]message[.]tool_calls[.]([0-9]+)"
    r"[.]tool_call[.]function[.]arguments$"
)
"""An OpenInference LLM span's attribute holding the arguments of one tool call its answer made
(the call's index in the group): what a model that answered by calling a function said (a
structured-output call: LlamaIndex's ``structured_predict``, LangChain's
``with_structured_output(method="function_calling")``)."""
_PLAN_SPAN = r"(^|[.])plan$"
"""An app's span that states a plan: named ``<prefix>.plan`` (``shop.plan``)."""
_PLAN_TEXT_KEY = r"[.]plan[.](text|body|source)$"
"""The attribute of a plan span (:data:`_PLAN_SPAN`) that holds the plan's text
(``shop.plan.text``): what it answered, offered to the format readers."""


def answer_sql(
    column: str = "SpanAttributes",
    kind: str = "SpanModelKind",
    inferred: str = "SpanModelInferred",
    name: str = "SpanName",
) -> str:
    """SQL for the attributes of ``column`` (an ``otel_traces`` attribute map) that
    :func:`answer` reads for a span of kind ``kind`` (a column; ``inferred`` the column saying
    whether the span model inferred it; an AutoGen ``process`` span's message whatever its
    kind; what the span said in GenAI message events, :func:`event_values_sql`; for an
    inferred step, the attributes :func:`app_step` reads; for an app's plan span, named ``name``,
    its plan text; for an app's step span and a Burr function span, what :func:`step_io`
    reads): a Map, empty for a span
    that records no answer or is none of the spans :func:`answer` reads.

    >>> answer_sql().startswith("if(SpanModelKind IN ('llm', 'tool') OR (SpanModelKind = 'step'")
    True
    """
    keys = ", ".join(f"'{k}'" for k in dict.fromkeys(_LLM_ANSWER_KEYS + _RUN_ANSWER_KEYS))
    tool_keys = ", ".join(f"'{k}'" for k in (*_TOOL_ARGUMENT_KEYS, _TOOL_RESULT_KEY))
    # what an AutoGen runtime's process span delivers (its message's JSON)
    operation, message = A.AUTOGEN_MESSAGING_OPERATION, A.AUTOGEN_MESSAGE
    runtime = (
        f"if({column}['{operation}'] = 'process' AND {column}['{message}'] != '', "
        f"mapFilter((k, v) -> k IN ('{operation}', '{message}'), {column}), map())"
    )
    burr, burr_attributes = _burr.function_sql(column)  # a function span's io: step_io
    # what a span records as events instead (Strands Agents): read as attributes named after
    # the events, attributes first
    evented = f"if({kind} = '{A.KIND_TOOL}', {event_values_sql([_TOOL_EVENT])}, " + (
        f"{event_values_sql(_ANSWER_EVENTS)})"
    )
    return (
        f"if({kind} IN ('{A.KIND_LLM}', '{A.KIND_TOOL}') OR ({kind} = '{A.KIND_STEP}' "
        f"AND {inferred} = 1), mapUpdate({evented}, mapFilter((k, v) -> has(if({kind} = "
        f"'{A.KIND_TOOL}', [{tool_keys}], [{keys}]), k) OR ({kind} = '{A.KIND_STEP}' AND "
        f"match(k, '{_APP_STEP_KEY}')) OR ({kind} = '{A.KIND_LLM}' AND "
        f"match(k, '{_OI_CALL_ARGUMENTS}')), {column})), if({kind} = '{A.KIND_RUN}' "
        f"AND {inferred} = 1, mapFilter((k, v) -> startsWith(v, '[{{'), {column}), "
        f"if({kind} = '{A.KIND_OTHER}' AND match({name}, '{_PLAN_SPAN}'), "
        f"mapFilter((k, v) -> match(k, '{_PLAN_TEXT_KEY}'), {column}), "
        f"if({kind} = '{A.KIND_OTHER}' AND {name} = '{A.HAYSTACK_PIPELINE_RUN}', "
        f"mapFilter((k, v) -> k = '{A.HAYSTACK_PIPELINE_OUTPUT}', {column}), "
        f"if({kind} = '{A.KIND_OTHER}' AND (match({name}, '{_STEP_SPAN_NAME}') OR "
        f"arrayExists(k -> match(k, '{_STEP_ID_KEY}'), mapKeys({column}))), "
        f"mapFilter((k, v) -> match(k, '{APP_ARGUMENTS_KEY}') OR match(k, '{APP_RESULT_KEY}') "
        f"OR match(k, '{_STEP_ID_KEY}'), "
        f"{column}), if({kind} = '{A.KIND_OTHER}' AND {burr}, {burr_attributes}, {runtime}))))))"
    )


def _plan_span(n: SpanNode) -> bool:
    """Whether a span is an app's plan span (:data:`_PLAN_SPAN`): its answer its plan text; or
    a Haystack pipeline's run inside the app's work, its answer what the pipeline returned (a
    planner pipeline's last component parses the model's plan: its steps as data)."""
    return n.kind == A.KIND_OTHER and (
        re.search(_PLAN_SPAN, n.name) is not None or n.name == A.HAYSTACK_PIPELINE_RUN
    )


def recorded_work(attributes: Mapping[str, str], kind: str) -> tuple[str, tuple[str, str]]:
    """What binding reads of a span's own attributes besides its answer, by the span model's
    ``kind``: the step an app's attribute names (:func:`app_step`; step spans and plain spans,
    where ``<prefix>.step.id`` makes an app's step span) and, for a plain span, what its work was
    given and gave back (:func:`step_io`); for a tool call, its result (what it gave back: an
    agent run as a tool answered it, :func:`_agent_tools`). The one rule the loader, the run
    model and the trace API apply when they build a :class:`SpanNode`.

    >>> recorded_work({"shop.step.id": "pick", "shop.step.args": '{"n": 2}'}, "other")
    ('pick', ('{"n": 2}', ''))
    >>> recorded_work({"shop.step.id": "pick"}, "llm")
    ('', ('', ''))
    >>> recorded_work({"gen_ai.tool.call.result": '{"steps": []}'}, "tool")
    ('', ('', '{"steps": []}'))
    """
    step = app_step(attributes) if kind in (A.KIND_STEP, A.KIND_OTHER) else ""
    if kind == A.KIND_TOOL:  # its arguments are its answer (what its caller said through it)
        return step, ("", attributes.get(_TOOL_RESULT_KEY, ""))
    return step, step_io(attributes) if kind == A.KIND_OTHER else ("", "")


def step_io(attributes: Mapping[str, str]) -> tuple[str, str]:
    """What an app's step span recorded as its work's arguments (the first attribute, by key,
    named ``<prefix>.args`` / ``.arguments`` / ``.input(s)`` / ``.params`` / ``.parameters``
    that holds a JSON object) and result (the first not empty, :data:`APP_RESULT_KEY`: the
    loader reads a component call's result by the same rule); for a Burr
    function span, its function's arguments and ``return`` (``_burr.function_io``).

    >>> step_io({"shop.step.args": '{"order": 7}', "shop.step.result": "PCK-1", "shop.n": "2"})
    ('{"order": 7}', 'PCK-1')
    >>> step_io({"shop.tool.output": "", "shop.tool.result": "PCK-1"})
    ('', 'PCK-1')
    """
    if (function := _burr.function_io(attributes)) is not None:
        return function
    keys = sorted(attributes)
    given = (attributes[k] for k in keys if re.search(APP_ARGUMENTS_KEY, k))
    back = (attributes[k] for k in keys if re.search(APP_RESULT_KEY, k))
    return next((v for v in given if v.startswith("{")), ""), next((v for v in back if v), "")


def answer(attributes: Mapping[str, str], kind: str, inferred: bool) -> str:
    """The text an LLM call (``kind`` ``llm``) or an agent run the span model inferred
    (``step``, ``inferred``) answered, or the arguments a tool call (``tool``) was called with
    (as text: what its caller said through it), from its span's attributes in any convention
    the span model reads (GenAI output messages: their text parts, else the arguments of
    their tool calls); for a run the span model inferred (``run``, ``inferred``), the first of
    its attributes (by key) that is a JSON list of two or more mappings (a task list it states
    as its plan); for an AutoGen runtime's ``process`` span, whatever its kind, the message it
    delivered (``_autogen.message_text``); empty when none, and for any other span
    (planscope's own agent runs declare their plans).

    >>> answer({"gen_ai.output.messages": '[{"role": "assistant", "parts": '
    ...         '[{"type": "text", "content": "1. fetch"}]}]'}, "llm", False)
    '1. fetch'
    >>> answer({"output.value": "Plan: fetch, then parse"}, "step", True)
    'Plan: fetch, then parse'
    >>> answer({"output.value": "Plan: fetch, then parse"}, "step", False)
    ''
    >>> answer({"input.value": '{"step": "fetch"}', "output.value": "ok"}, "tool", False)
    '{"step": "fetch"}'
    >>> answer({"crew.tasks": '[{"name": "fetch"}, {"name": "parse"}]'}, "run", True)
    '[{"name": "fetch"}, {"name": "parse"}]'
    >>> answer({"langfuse.observation.output": '{"role": "assistant", "content": "<plan/>"}'},
    ...        "llm", False)
    '<plan/>'
    >>> answer({"mlflow.spanOutputs": '{"choices": [{"message": {"role": "assistant", '
    ...         '"content": "Step: fetch"}}]}'}, "llm", False)
    'Step: fetch'
    >>> answer({"gen_ai.choice": '[{"text": "Plan: fetch"}]'}, "step", True)
    'Plan: fetch'
    >>> answer({"shop.plan.text": "@step{pick, tool = {wms}}"}, "other", False)
    '@step{pick, tool = {wms}}'
    >>> answer({"haystack.pipeline.output_data": '{"parser": {"tasks": []}}'}, "other", False)
    '{"parser": {"tasks": []}}'
    """
    if said := message_text(attributes):
        return said
    if kind == A.KIND_RUN and inferred:
        # a run that states its plan as an attribute: a JSON list of task mappings
        return next((v for _, v in sorted(attributes.items()) if _task_list(v)), "")
    if kind == A.KIND_OTHER:  # an app's plan span (answer_sql reads only its plan text)
        planned = (v for k, v in sorted(attributes.items()) if re.search(_PLAN_TEXT_KEY, k))
        # a Haystack pipeline run inside the app's work: what the pipeline returned (its last
        # components' outputs, JSON), as a planner pipeline's parsed plan
        return next(planned, "") or attributes.get(A.HAYSTACK_PIPELINE_OUTPUT, "")
    if kind not in (A.KIND_LLM, A.KIND_TOOL) and not (kind == A.KIND_STEP and inferred):
        return ""
    keys = {A.KIND_LLM: _LLM_ANSWER_KEYS, A.KIND_TOOL: _TOOL_ARGUMENT_KEYS}
    for key in keys.get(kind, _RUN_ANSWER_KEYS):
        value = attributes.get(key) or ""
        if value and key == A.GEN_AI_OUTPUT_MESSAGES:
            try:
                decoded = safejson.loads(value)
            except ValueError:
                decoded = None
            messages = [
                m for m in (decoded if isinstance(decoded, list) else []) if isinstance(m, dict)
            ]
            value = "\n".join(t for m in messages for t in _texts(m.get("content"), m.get("parts")))
            # no text: it answered by calling tools (a function-calling planner's plan)
            value = value or "\n".join(a for m in messages for a in _call_arguments(m.get("parts")))
        elif value and key == A.MLFLOW_SPAN_OUTPUTS:
            value = _mlflow_output(value, kind)
        elif value and key == A.LF_OBSERVATION_OUTPUT and kind == A.KIND_LLM:
            value = _message_answer(value)
        elif value and key == A.LOGFIRE_RESPONSE_DATA:
            value = _response_data_answer(value)
        elif value and key == A.LOGFIRE_AGENTS_OUTPUT:
            value = _answered_messages(value)
        elif value and key == A.ADK_LLM_RESPONSE:
            value = _adk_response(value)
        elif value and key == A.GEN_AI_COMPLETION:
            value = _generations_answer(value)
        elif value and key in (A.HAYSTACK_LLM_OUTPUT, A.HAYSTACK_COMPONENT_OUTPUT):
            value = _replies_answer(value)
        elif value and key in _ANSWER_EVENTS:
            value = _event_text(value)
        if value:
            return value
    # no text: it answered by calling tools (a function-calling planner's plan), as GenAI's
    # output messages are read above
    return "\n".join(_oi_call_arguments(attributes)) if kind == A.KIND_LLM else ""


def _generations_answer(text: str) -> str:
    """The text of LangChain's ``LLMResult`` as LangSmith's OpenTelemetry export records an llm
    run's outputs (``{"generations": [[{"text": ...}, ...]], ...}``): its first prompt's
    generations' texts; '' for any other value.

    >>> _generations_answer('{"generations": [[{"text": "1. fetch", "type": "ChatGeneration"}]]}')
    '1. fetch'
    >>> _generations_answer('[{"text": "x"}]'), _generations_answer("plain")
    ('', '')
    """
    first = safejson.load_object(text).get("generations")
    if not isinstance(first, list) or not first or not isinstance(first[0], list):
        return ""
    return "\n".join(
        g["text"] for g in first[0] if isinstance(g, dict) and isinstance(g.get("text"), str)
    )


def _oi_call_arguments(attributes: Mapping[str, str]) -> list[str]:
    """The arguments of the tool calls an OpenInference LLM span's answer made
    (:data:`_OI_CALL_ARGUMENTS`), in call order.

    >>> key = "llm.output_messages.0.message.tool_calls.{}.tool_call.function.arguments"
    >>> _oi_call_arguments({key.format(10): '{"b": 2}', key.format(2): '{"a": 1}'})
    ['{"a": 1}', '{"b": 2}']
    """
    found = ((re.fullmatch(_OI_CALL_ARGUMENTS, k), v) for k, v in attributes.items())
    return [v for _, v in sorted((int(m[1]), v) for m, v in found if m and v)]


def _json_messages(text: str | None) -> list[Any]:
    """The messages of a JSON message list, or of a request object holding one under
    ``messages`` (as Langfuse's OpenAI integration records a generation's input), or under
    ``contents`` (a Gemini ``generateContent`` request, as MLflow's Gemini autologging records
    it: ``Content`` objects of a role and parts, or one string, the SDK's shorthand for one
    user message); [] else.

    >>> _json_messages('{"model": "m", "contents": [{"role": "user", "parts": [{"text": "Go"}]}]}')
    [{'role': 'user', 'parts': [{'text': 'Go'}]}]
    >>> _json_messages('{"model": "m", "contents": "Ship order 7", "config": {}}')
    [{'role': 'user', 'content': 'Ship order 7'}]
    """
    if not text or text[0] not in "[{":
        return []
    try:
        decoded = safejson.loads(text)
    except ValueError:
        return []
    if isinstance(decoded, dict):
        messages = decoded.get("messages")
        if messages is None and "contents" in decoded:
            # a Gemini request's turns: the user's text of a step's conversation (what it was
            # asked) is in them, as it is in a chat request's messages
            messages = decoded["contents"]
            if isinstance(messages, str):
                messages = [{"role": "user", "content": messages}]
        decoded = messages
    return decoded if isinstance(decoded, list) else []


def _mlflow_output(text: str, kind: str) -> str:
    """An MLflow span's output as text: MLflow writes every attribute value JSON-encoded (a
    function that returned a string has a JSON string as output: its text); a chat span's
    output is the provider's response (:func:`_message_answer`).

    MLflow's smolagents autologging records a result as its ``__dict__``: smolagents' agent
    types (``AgentText``, a ``str`` holding its text in ``_value``) as ``{"_value": text}``,
    that text.

    >>> _mlflow_output('"Outcome: done"', "step")
    'Outcome: done'
    >>> _mlflow_output('{"_value": "1. pick; 2. ship"}', "step")
    '1. pick; 2. ship'
    """
    if text.startswith('{"' + A.MLFLOW_SMOLAGENTS_VALUE + '"'):
        try:
            decoded = safejson.loads(text)
        except ValueError:
            return text
        if isinstance(decoded, dict) and list(decoded) == [A.MLFLOW_SMOLAGENTS_VALUE]:
            value = decoded[A.MLFLOW_SMOLAGENTS_VALUE]
            return value if isinstance(value, str) else json.dumps(value)
        return text
    if text.startswith('"'):
        try:
            decoded = safejson.loads(text)
        except ValueError:
            return text
        return decoded if isinstance(decoded, str) else text
    return _message_answer(text) if kind == A.KIND_LLM else text


def _message_answer(text: str) -> str:
    """A chat call's answer text from its recorded output: the answer message (text content,
    else its tool calls' arguments, OpenAI-shaped), or an OpenAI chat completion holding it in
    ``choices`` (as MLflow records a chat span's output), or LlamaIndex's ``ChatResponse``
    holding it in ``message``, its text in content ``blocks`` (as MLflow's LlamaIndex
    autologging records it); else the text itself.

    >>> _message_answer('{"role": "assistant", "content": null, "tool_calls": [{"function": '
    ...                 '{"name": "plan", "arguments": "[1, 2]"}}]}')
    '[1, 2]'
    >>> _message_answer('{"message": {"role": "assistant", "blocks": [{"block_type": "text", '
    ...                 '"text": "1. pick"}]}, "raw": {}}')
    '1. pick'
    """
    if not text.startswith("{"):
        return text
    try:
        decoded = safejson.loads(text)
    except ValueError:
        return text
    said = _decoded_answer(decoded)
    return text if said is None else said


def _decoded_answer(decoded: Any) -> str | None:
    """:func:`_message_answer` of an already decoded output; None when it holds no answer
    message (the caller keeps its text)."""
    choices = decoded.get("choices") if isinstance(decoded, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        decoded = choices[0].get("message")
    elif (
        isinstance(decoded, dict)
        and "role" not in decoded
        and isinstance(message := decoded.get(A.LLAMAINDEX_CHAT_MESSAGE), dict)
        and isinstance(message.get(A.LLAMAINDEX_CONTENT_BLOCKS), list)
    ):
        decoded = message  # LlamaIndex's ChatResponse (MLflow's LlamaIndex autologging)
    if not isinstance(decoded, dict) or "role" not in decoded:
        return None
    # a LlamaIndex ChatMessage keeps its text in content blocks (TextBlock: block_type "text")
    blocks = decoded.get(A.LLAMAINDEX_CONTENT_BLOCKS)
    texts = _texts(decoded.get("content"), None) or _texts(
        [
            {"type": b.get("block_type"), "text": b.get("text")}
            for b in (blocks if isinstance(blocks, list) else [])
            if isinstance(b, dict)
        ],
        None,
    )
    if texts:
        return "\n".join(texts)
    calls = decoded.get("tool_calls")
    return "\n".join(
        str(c["function"].get("arguments") or "")
        for c in (calls if isinstance(calls, list) else [])
        if isinstance(c, dict) and isinstance(c.get("function"), dict)
    )


def _response_data_answer(text: str) -> str:
    """What a Logfire OpenAI span's ``response_data`` (``logfire.instrument_openai`` with data
    format version 1) says the model answered: its chat ``message`` read as
    :func:`_message_answer` reads an OpenAI message, else a completion's ``text``.

    >>> _response_data_answer('{"message": {"role": "assistant", "content": "a: b"}, "usage": {}}')
    'a: b'
    """
    decoded = safejson.load_object(text)
    if isinstance(message := decoded.get("message"), dict):
        return _message_answer(json.dumps(message))
    return str(decoded.get("text") or "")


def _answered_messages(text: str) -> str:
    """What a model call answered as a JSON list of OpenAI-shaped messages (a Logfire
    openai-agents model call's ``output``): each message read as :func:`_message_answer` reads
    one, lines joined; empty when ``text`` is no such list (an ``output`` of another shape
    says nothing here).

    >>> _answered_messages('[{"role": "assistant", "content": "Step: fetch"}]')
    'Step: fetch'
    >>> _answered_messages('{"role": "assistant"}'), _answered_messages('[1, 2]')
    ('', '')
    """
    messages = _json_messages(text) if text.startswith("[") else []
    said = []
    for m in messages:
        if isinstance(m, dict) and "role" in m:
            answer = _decoded_answer(m)
            # one holding no answer message says its JSON, as _message_answer of its text does
            said.append(json.dumps(m) if answer is None else answer)
    return "\n".join(filter(None, said))


def _adk_parts(content: Any) -> tuple[list[str], list[str]]:
    """The text parts and the function calls' arguments (JSON) of a Gemini ``Content`` as
    Google ADK records it (``{"role": ..., "parts": [{"text": ...}, {"function_call": {"name",
    "args"}}]}``), or of a bare string."""
    if isinstance(content, str):
        return [content], []
    parts = content.get("parts") if isinstance(content, dict) else None
    texts, calls = [], []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        if isinstance(text := part.get("text"), str) and text and not part.get("thought"):
            texts.append(text)
        elif isinstance(call := part.get("function_call"), dict):
            calls.append(json.dumps(call.get("args") or {}))
    return texts, calls


def _adk_request(text: str) -> str:
    """What a Google ADK model call was asked, from its ``gcp.vertex.agent.llm_request`` (the
    ``LlmRequest``: ``config.system_instruction``, ``contents``): the agent's instruction (ADK
    fills the agent's task into it from the session state: how a custom agent hands a sub-agent
    its work) and the text of the user contents, lines joined.

    >>> _adk_request('{"config": {"system_instruction": "Step 2: renew."}, "contents": []}')
    'Step 2: renew.'
    """
    request = safejson.load_object(text)
    config = request.get("config")
    said = _adk_parts(config.get("system_instruction")) if isinstance(config, dict) else ([], [])
    contents = request.get("contents")
    users = [
        t
        for c in (contents if isinstance(contents, list) else ())
        if isinstance(c, dict) and c.get("role") == "user"
        for t in _adk_parts(c)[0]
    ]
    return "\n".join(said[0] + users)


def _adk_response(text: str) -> str:
    """What a Google ADK model call answered, from its ``gcp.vertex.agent.llm_response`` (the
    ``LlmResponse``): its content's text parts, else, when it answered only by calling
    functions, their arguments (a function-calling planner's plan), lines joined.

    >>> _adk_response('{"content": {"role": "model", "parts": [{"text": "1. renew"}]}}')
    '1. renew'
    >>> _adk_response('{"content": {"parts": [{"function_call": {"name": "renew", '
    ...               '"args": {"loan": 7}}}]}}')
    '{"loan": 7}'
    """
    texts, calls = _adk_parts(safejson.load_object(text).get("content"))
    return "\n".join(texts or calls)


def _replies_answer(text: str) -> str:
    """What a Haystack chat generator answered, from its output ``{"replies": [ChatMessage...]}``
    as Haystack's tracer writes it (a message's ``content`` a list of parts): the replies' text
    parts, else, when it answered only by calling tools, their arguments (as JSON), lines joined.

    >>> _replies_answer('{"replies": [{"role": "assistant", "content": [{"text": "1. renew"}]}]}')
    '1. renew'
    >>> _replies_answer('{"replies": [{"role": "assistant", "content": [{"tool_call": '
    ...                 '{"tool_name": "renew", "arguments": {"loan": 7}, "id": "c1"}}]}]}')
    '{"loan": 7}'
    """
    replies = safejson.load_object(text).get("replies")
    messages = [m for m in (replies if isinstance(replies, list) else []) if isinstance(m, dict)]
    texts = [t for m in messages for t in _texts(m.get("content"), None)]
    parts = [p for m in messages if isinstance(m.get("content"), list) for p in m["content"]]
    calls = [
        json.dumps(p["tool_call"].get("arguments"))
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("tool_call"), dict)
    ]
    return "\n".join(texts or calls)


def _task_list(text: str) -> bool:
    """Whether ``text`` is a JSON list of two or more mappings."""
    if not text.startswith("[{"):
        return False
    try:
        doc = safejson.loads(text)
    except ValueError:
        return False
    return isinstance(doc, list) and len(doc) >= 2 and all(isinstance(i, dict) for i in doc)


def _call_arguments(parts: Any) -> list[str]:
    """The arguments of a message's tool calls (GenAI ``tool_call`` parts), each as JSON text.

    >>> _call_arguments([{"type": "tool_call", "name": "plan", "arguments": {"steps": []}}])
    ['{"steps": []}']
    """
    out = []
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict) and part.get("type") == "tool_call":
            arguments = part.get("arguments")
            if isinstance(arguments, dict | list):
                out.append(json.dumps(arguments))
            elif isinstance(arguments, str) and arguments:
                out.append(arguments)
    return out


def _texts(content: Any, parts: Any) -> list[str]:
    """The text of one message: its string content, else its text parts (GenAI ``parts``, or a
    content that is a list of parts, also as a JSON string, as older OpenLLMetry writes it)."""
    if isinstance(content, str) and content.startswith("[{"):
        try:
            decoded = safejson.loads(content)
        except ValueError:
            decoded = None
        if (
            isinstance(decoded, list)
            and decoded
            and all(isinstance(p, dict) and "type" in p for p in decoded)
        ):
            content = decoded
    if isinstance(content, str):
        return [content] if content else []
    out = []
    for part in (content if isinstance(content, list) else []) + list(parts or ()):
        if isinstance(part, dict) and part.get("type", "text") == "text":
            text = part.get("content", part.get("text"))
            if isinstance(text, str) and text:
                out.append(text)
    return out
