"""planscope's semantic conventions: every span attribute, event, value and finding kind.

This public module is the single source of truth, like ``opentelemetry.semconv``: the SDK
writes these names, the collector's materialized views extract them, the analyzers and the
dashboard read them, the reference runtime labels its faults with the finding kinds. A runtime
in another language follows docs/semantic-conventions.md, which documents the names below.

Where the OpenTelemetry GenAI conventions define a name, it is used as is (``gen_ai.*``,
``error.type``); what they lack (plans, plan steps, attempts, context, outcome, budgets) lives in
the ``planscope.*`` namespace.

Values that are lists or objects (plan JSON, context keys, budgets) are JSON strings, because
OTLP attribute arrays become strings in ClickHouse anyway and JSON keeps them parseable.

>>> from planscope import semconv
>>> semconv.STEP_ID, semconv.FINDING_RUNAWAY_LOOP
('planscope.step.id', 'runaway_loop')
"""

from __future__ import annotations

from typing import Final

# --- OpenTelemetry GenAI conventions (used verbatim) ------------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
ERROR_TYPE: Final = "error.type"
SERVICE_NAME: Final = "service.name"

# GenAI names the collector's span model also reads (docs/semantic-conventions.md, "Spans
# planscope did not shape"); planscope's SDK does not write them.
GEN_AI_SYSTEM: Final = "gen_ai.system"  # deprecated for gen_ai.provider.name; OpenLLMetry
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_COMPLETION_CONTENT: Final = "gen_ai.completion.0.content"  # older OpenLLMetry
GEN_AI_PROMPT: Final = "gen_ai.prompt"  # older OpenLLMetry: gen_ai.prompt.{i}.role / .content
GEN_AI_COMPLETION: Final = "gen_ai.completion"  # bare: LangSmith's OTel export, a run's outputs
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
# older or vendor spellings of the same usage numbers (OpenLLMetry, OpenLIT)
GEN_AI_USAGE_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"
GEN_AI_USAGE_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS_OLD: Final = "gen_ai.usage.cache_read_input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS_OLD: Final = "gen_ai.usage.cache_creation_input_tokens"
GEN_AI_USAGE_REASONING_TOKENS_OLD: Final = "gen_ai.usage.reasoning_tokens"
GEN_AI_USAGE_COST: Final = "gen_ai.usage.cost"  # OpenLIT
OP_INVOKE_WORKFLOW: Final = "invoke_workflow"
OP_CREATE_AGENT: Final = "create_agent"
OP_GENERATE_CONTENT: Final = "generate_content"
OP_TEXT_COMPLETION: Final = "text_completion"
OP_EMBEDDINGS: Final = "embeddings"
# OpenInference (Arize) and OpenLLMetry (Traceloop) names the span model reads. Not ours.
OI_SPAN_KIND: Final = "openinference.span.kind"
OI_INPUT_VALUE: Final = "input.value"
OI_OUTPUT_VALUE: Final = "output.value"
OI_OUTPUT_MESSAGE_CONTENT: Final = "llm.output_messages.0.message.content"
OI_INPUT_MESSAGES: Final = "llm.input_messages"  # llm.input_messages.{i}.message.role / .content
OI_MODEL_NAME: Final = "llm.model_name"
OI_PROVIDER: Final = "llm.provider"
OI_SYSTEM: Final = "llm.system"
OI_PROMPT_TOKENS: Final = "llm.token_count.prompt"
OI_COMPLETION_TOKENS: Final = "llm.token_count.completion"
OI_CACHE_READ_TOKENS: Final = "llm.token_count.prompt_details.cache_read"
OI_CACHE_WRITE_TOKENS: Final = "llm.token_count.prompt_details.cache_write"
OI_REASONING_TOKENS: Final = "llm.token_count.completion_details.reasoning"
OI_COST_TOTAL: Final = "llm.cost.total"
OI_TOOL_NAME: Final = "tool.name"
OI_TOOL_CALL_ID: Final = "tool_call.id"
OI_AGENT_NAME: Final = "agent.name"
OI_METADATA: Final = "metadata"  # JSON; LangGraph puts langgraph_node in it
TL_SPAN_KIND: Final = "traceloop.span.kind"
TL_ENTITY_NAME: Final = "traceloop.entity.name"
TL_ENTITY_INPUT: Final = "traceloop.entity.input"
TL_ENTITY_OUTPUT: Final = "traceloop.entity.output"
TL_TOOL_ARGUMENTS: Final = "tool.arguments"  # OpenLLMetry's LlamaIndex call_tool step
TL_REQUEST_TYPE: Final = "llm.request.type"
# Langfuse's OpenTelemetry attributes (its SDKs since Python v3 / JS v4: scope langfuse-sdk;
# langfuse._client.attributes.LangfuseOtelSpanAttributes). Not ours.
LF_OBSERVATION_TYPE: Final = "langfuse.observation.type"  # agent | chain | generation | tool ...
LF_OBSERVATION_LEVEL: Final = "langfuse.observation.level"  # DEBUG | DEFAULT | WARNING | ERROR
LF_OBSERVATION_STATUS_MESSAGE: Final = "langfuse.observation.status_message"
LF_OBSERVATION_INPUT: Final = "langfuse.observation.input"  # JSON or text
LF_OBSERVATION_OUTPUT: Final = "langfuse.observation.output"  # JSON or text
LF_OBSERVATION_MODEL: Final = "langfuse.observation.model.name"
LF_OBSERVATION_USAGE: Final = "langfuse.observation.usage_details"  # JSON: input, output, ...
LF_OBSERVATION_COST: Final = "langfuse.observation.cost_details"  # JSON: total, ...
# MLflow Tracing's attributes (mlflow.tracing.constant.SpanAttributeKey; scope
# mlflow.tracing.provider). Not ours. MLflow writes every value JSON-encoded ('"AGENT"').
MLFLOW_SPAN_TYPE: Final = "mlflow.spanType"  # "AGENT" | "CHAIN" | "TOOL" | "CHAT_MODEL" ...
MLFLOW_SPAN_INPUTS: Final = "mlflow.spanInputs"  # JSON: a function's arguments by name, ...
MLFLOW_SPAN_OUTPUTS: Final = "mlflow.spanOutputs"  # JSON: its return value
MLFLOW_LLM_MODEL: Final = "mlflow.llm.model"
MLFLOW_CHAT_USAGE: Final = "mlflow.chat.tokenUsage"  # JSON: input_tokens, output_tokens, ...
# MLflow's smolagents autologging records a call's result as its __dict__: smolagents' agent
# types (AgentText, a str) as {"_value": <the text>} in mlflow.spanOutputs
MLFLOW_SMOLAGENTS_VALUE: Final = "_value"
# MLflow's LlamaIndex autologging records a chat call's output as LlamaIndex's ChatResponse
# (pydantic model_dump): {"message": <ChatMessage>, "raw": ...}, the ChatMessage's text in its
# content blocks ({"block_type": "text", "text": ...}), not in an OpenAI-style content
LLAMAINDEX_CHAT_MESSAGE: Final = "message"
LLAMAINDEX_CONTENT_BLOCKS: Final = "blocks"
# Logfire's attributes (its Python SDK: scope logfire, logfire.openai, ...;
# logfire._internal.constants). Not ours. A log is a zero-duration span of type ``log``.
LOGFIRE_SPAN_TYPE: Final = "logfire.span_type"  # span | log | pending_span
LOGFIRE_LEVEL_NUM: Final = "logfire.level_num"  # info 9, warn 13, error 17, fatal 21
LOGFIRE_MSG: Final = "logfire.msg"  # the formatted message
LOGFIRE_MSG_TEMPLATE: Final = "logfire.msg_template"  # the span's name
LOGFIRE_JSON_SCHEMA: Final = "logfire.json_schema"  # which attributes are the call's fields
LOGFIRE_RETURN: Final = "return"  # @logfire.instrument(record_return=True)'s return value
# without ``return``, a span's field the app named for what its work gave back (set on the span
# after the call: Logfire lists it among the fields too); read as the result, not an argument
LOGFIRE_RESULT_FIELDS: Final = ("result", "output")
# logfire.instrument_openai(version=1): the request's JSON and {"message": ..., "usage": ...}
LOGFIRE_REQUEST_DATA: Final = "request_data"
LOGFIRE_RESPONSE_DATA: Final = "response_data"
# logfire.instrument_openai_agents(): a model call's answered messages (JSON list)
LOGFIRE_AGENTS_OUTPUT: Final = "output"
LOGFIRE_LEVEL_WARN: Final = 13
LOGFIRE_LEVEL_ERROR: Final = 17
# Google ADK's own tracing (google-adk's telemetry.py, tracer scope ``gcp.vertex.agent``; spans
# `invocation`, `agent_run [name]` in 1.x before the GenAI agent spans, `call_llm`,
# `execute_tool {tool}`). Not ours.
ADK_SCOPE: Final = "gcp.vertex.agent"
ADK_LLM_REQUEST: Final = "gcp.vertex.agent.llm_request"  # JSON: model, config, contents
ADK_LLM_RESPONSE: Final = "gcp.vertex.agent.llm_response"  # JSON: the LlmResponse
ADK_TOOL_CALL_ARGS: Final = "gcp.vertex.agent.tool_call_args"  # JSON: the call's arguments
ADK_TOOL_RESPONSE: Final = "gcp.vertex.agent.tool_response"  # JSON: what the tool returned
# Haystack's own OpenTelemetry tracer (opentelemetry-haystack's OpenTelemetryTracer, content
# tracing on; scope ``haystack``). Not ours.
HAYSTACK_LLM_OUTPUT: Final = "haystack.agent.step.llm.output"  # JSON: {"replies": [...]}
HAYSTACK_COMPONENT_OUTPUT: Final = "haystack.component.output"  # JSON: a component's output
HAYSTACK_PIPELINE_RUN: Final = "haystack.pipeline.run"  # a Pipeline.run's span name
HAYSTACK_PIPELINE_OUTPUT: Final = "haystack.pipeline.output_data"  # JSON: what the run returned
# The Vercel AI SDK's telemetry (npm `ai` 3.x-6.x, experimental_telemetry; tracer ``ai``): every
# span names its operation in ``ai.operationId``. Not ours.
AI_SDK_OPERATION: Final = "ai.operationId"  # ai.generateText, ai.generateText.doGenerate, ...
AI_SDK_PROMPT_MESSAGES: Final = "ai.prompt.messages"  # JSON: a provider call's messages
AI_SDK_RESPONSE_TEXT: Final = "ai.response.text"  # a call's (a provider call's) answer text
AI_SDK_TOOL_NAME: Final = "ai.toolCall.name"
AI_SDK_TOOL_ARGS: Final = "ai.toolCall.args"  # JSON: the tool call's input
AI_SDK_TOOL_RESULT: Final = "ai.toolCall.result"  # JSON: what the tool returned
# AutoGen's runtime message spans (autogen-core's SingleThreadedAgentRuntime with a
# tracer_provider: ``autogen {create|send|publish|process|ack} {destination}``). Not ours.
AUTOGEN_MESSAGING_OPERATION: Final = "messaging.operation"  # create | publish | process | ...
AUTOGEN_MESSAGE: Final = "message"  # JSON: the message the runtime delivers (process spans)
# GenAI message events (the older GenAI events convention; Strands Agents' own tracing writes
# them on its spans): what a call was asked, what it answered, what a tool was called with.
GEN_AI_USER_MESSAGE_EVENT: Final = "gen_ai.user.message"  # attribute `content`
GEN_AI_CHOICE_EVENT: Final = "gen_ai.choice"  # attribute `message`
GEN_AI_TOOL_MESSAGE_EVENT: Final = "gen_ai.tool.message"  # attribute `content`
# LlamaIndex's native OpenTelemetry integration (llama-index-observability-otel): LlamaIndex's
# instrumentation events as span events, each event's fields flattened into its attributes.
LLAMAINDEX_SCOPE: Final = "llamaindex.opentelemetry.tracer"
LLAMAINDEX_CHAT_END_EVENT: Final = "LLMChatEndEvent"  # attribute `response.message.blocks`
LLAMAINDEX_COMPLETION_END_EVENT: Final = "LLMCompletionEndEvent"  # attribute `response.text`
OPERATION_COST: Final = "operation.cost"
PYDANTIC_AI_AGENT_NAME: Final = "agent_name"  # pydantic-ai before the GenAI agent spans
SPAN_STATUS_ERROR: Final = "Error"
"""An error span status as the typed tables store it (the span model normalises the exporter's
older ``STATUS_CODE_ERROR``)."""
KIND_OTHER: Final = "other"
"""The span model's kind for a span that is none of run/plan/step/tool/llm."""
# Values of gen_ai.operation.name. Steps have no GenAI operation; planscope names it.
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_PLAN: Final = "plan"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_CHAT: Final = "chat"
OP_EXECUTE_STEP: Final = "execute_step"

# --- planscope: span kind (present on every planscope span) -----------------------------------
NAMESPACE: Final = "planscope."
"""The prefix of every planscope attribute and event name."""
SPAN_KIND: Final = "planscope.span.kind"
KIND_RUN: Final = "run"
KIND_PLAN: Final = "plan"
KIND_STEP: Final = "step"
KIND_TOOL: Final = "tool"
KIND_LLM: Final = "llm"
SPAN_KINDS: Final = (KIND_RUN, KIND_PLAN, KIND_STEP, KIND_TOOL, KIND_LLM)

# Operation name for each planscope span kind.
OPERATION_FOR_KIND: Final = {
    KIND_RUN: OP_INVOKE_AGENT,
    KIND_PLAN: OP_PLAN,
    KIND_STEP: OP_EXECUTE_STEP,
    KIND_TOOL: OP_EXECUTE_TOOL,
    KIND_LLM: OP_CHAT,
}

# --- run (invoke_agent) ------------------------------------------------------------------------
RUN_ID: Final = "planscope.run.id"
RUN_OBJECTIVE: Final = "planscope.run.objective"
RUN_VARIANT: Final = "planscope.run.variant"
RUN_OUTCOME: Final = "planscope.run.outcome"
RUN_OUTCOME_REASON: Final = "planscope.run.outcome_reason"
RUN_BUDGET: Final = "planscope.run.budget"  # JSON of RetryBudget
OUTCOME_SUCCESS: Final = "success"
OUTCOME_FAILURE: Final = "failure"
OUTCOME_UNKNOWN: Final = "unknown"
OUTCOMES: Final = (OUTCOME_SUCCESS, OUTCOME_FAILURE, OUTCOME_UNKNOWN)

# --- plan ------------------------------------------------------------------------------------
PLAN_ID: Final = "planscope.plan.id"
PLAN_VERSION: Final = "planscope.plan.version"
PLAN_SCOPE: Final = "planscope.plan.scope"
PLAN_PARENT_VERSION: Final = "planscope.plan.parent_version"
PLAN_REPLAN_REASON: Final = "planscope.plan.replan_reason"
PLAN_JSON: Final = "planscope.plan.json"
PLAN_STEP_COUNT: Final = "planscope.plan.step_count"
PLAN_APPROVAL: Final = "planscope.plan.approval"
APPROVAL_PENDING: Final = "pending"
APPROVAL_APPROVED: Final = "approved"
APPROVAL_EDITED: Final = "edited"
APPROVAL_REJECTED: Final = "rejected"
APPROVAL_NOT_REQUIRED: Final = "not_required"

# --- step (executor work on one plan step; one span per attempt) -----------------------------
# A step span also carries PLAN_ID and PLAN_VERSION of the plan it executes.
STEP_ID: Final = "planscope.step.id"
STEP_ATTEMPT: Final = "planscope.step.attempt"  # 1-based
STEP_STATUS: Final = "planscope.step.status"
STEP_ERROR_FINGERPRINT: Final = "planscope.step.error_fingerprint"
STEP_EXECUTOR: Final = "planscope.step.executor"
STEP_CONTEXT_KEYS: Final = "planscope.step.context.keys"  # JSON array of strings
STEP_CONTEXT_TOKENS: Final = "planscope.step.context.tokens"
STEP_SELF_ASSESSMENT: Final = "planscope.step.self_assessment"  # success | failure (ADaPT)
STEP_DEPTH: Final = "planscope.step.depth"  # recursive decomposition depth (ADaPT)
STEP_INPUT_HASH: Final = "planscope.step.input_hash"
STATUS_OK: Final = "ok"
STATUS_ERROR: Final = "error"
STATUS_SKIPPED: Final = "skipped"
STEP_STATUSES: Final = (STATUS_OK, STATUS_ERROR, STATUS_SKIPPED)

# --- tool call (execute_tool) -----------------------------------------------------------------
TOOL_RESOURCE: Final = "planscope.tool.resource"
TOOL_EFFECT: Final = "planscope.tool.effect"
TOOL_ARGS_HASH: Final = "planscope.tool.args_hash"
EFFECT_READ: Final = "read"
EFFECT_WRITE: Final = "write"
EFFECT_IRREVERSIBLE: Final = "irreversible"
TOOL_EFFECTS: Final = (EFFECT_READ, EFFECT_WRITE, EFFECT_IRREVERSIBLE)

# --- LLM call (chat) --------------------------------------------------------------------------
LLM_ROLE: Final = "planscope.llm.role"  # planner | executor | judge
LLM_COST_USD: Final = "planscope.llm.cost_usd"

# --- captured payloads (any span kind; size-capped, redactable) --------------------------------
INPUT: Final = "planscope.input"
OUTPUT: Final = "planscope.output"
TRUNCATED: Final = "planscope.truncated"

# --- project (resource attribute; overridden by the API key's project) ------------------------
PROJECT: Final = "planscope.project"

# --- events -----------------------------------------------------------------------------------
EVENT_RETRY_BUDGET_EXCEEDED: Final = "planscope.retry_budget.exceeded"
EVENT_REPLAN_REQUESTED: Final = "planscope.replan.requested"
EVENT_APPROVAL_GRANTED: Final = "planscope.approval.granted"
EVENT_APPROVAL_DENIED: Final = "planscope.approval.denied"
EVENT_OUTCOME_CHECK: Final = "planscope.outcome.check"
# Attributes of the events above.
BUDGET_LIMIT_NAME: Final = "planscope.budget.limit"  # e.g. max_attempts_per_step
BUDGET_LIMIT_VALUE: Final = "planscope.budget.limit_value"
BUDGET_OBSERVED: Final = "planscope.budget.observed"
BUDGET_ENFORCED: Final = "planscope.budget.enforced"

# --- added by the SDK (appended; see docs/semantic-conventions.md) ----------------------------
APPROVAL_REVIEWER: Final = "planscope.approval.reviewer"  # on approval granted/denied events
OUTCOME_CHECK_NAME: Final = "planscope.outcome.check.name"  # on outcome check events
APPROVAL_REASON: Final = "planscope.approval.reason"  # on approval events: the reviewer's why

# --- imported spans (planscope import: where a span came from; see docs/importers.md) --------
# ``whowhen``, ``otlp-json`` or ``openinference``: the format the span was imported from
IMPORT_FORMAT: Final = "planscope.import.format"
IMPORT_SOURCE: Final = "planscope.import.source"  # the file the span was read from (base name only)
# where in the file: Who&When history index (int), or the OTLP span path
IMPORT_RECORD: Final = "planscope.import.record"
# the speaker label as written in the log (``Orchestrator (-> WebSurfer)``)
IMPORT_ROLE: Final = "planscope.import.role"
# the run's id in the source (Who&When ``question_ID``)
IMPORT_SOURCE_ID: Final = "planscope.import.source_id"
# start time as recorded in the file, before re-timing (int, Unix ns)
IMPORT_ORIGINAL_START: Final = "planscope.import.original_start_unix_nano"
# the multi-agent framework of a log (``magentic-one``, ``ag2-captainagent``)
IMPORT_FRAMEWORK: Final = "planscope.import.framework"
# event: a planner's progress ledger (Magentic-One), on the planner's LLM span
EVENT_LEDGER: Final = "planscope.import.ledger"
LEDGER_IN_LOOP: Final = "planscope.ledger.is_in_loop"  # ledger flag (bool)
LEDGER_PROGRESS: Final = "planscope.ledger.is_progress_being_made"  # ledger flag (bool)
LEDGER_SATISFIED: Final = "planscope.ledger.is_request_satisfied"  # ledger flag (bool)
# the executor the ledger dispatches to next
LEDGER_NEXT_SPEAKER: Final = "planscope.ledger.next_speaker"
LEDGER_REASON: Final = "planscope.ledger.reason"  # the ledger's stated reason

# --- finding kinds (what the analyzer reports; the reference runtime labels its faults with them)
FINDING_RUNAWAY_LOOP: Final = "runaway_loop"
FINDING_CONTEXT_STARVED: Final = "context_starved"
FINDING_PLAN_PROPAGATION: Final = "plan_propagation"
FINDING_IMPLICIT_DEPENDENCY: Final = "implicit_dependency"
FINDING_WRITE_CONFLICT: Final = "write_conflict"
FINDING_IRREVERSIBLE_AFTER_FAILURE: Final = "irreversible_after_failure"
FINDING_UNBOUNDED_REPLAN: Final = "unbounded_replan"
FINDING_SCHEDULER_STARVATION: Final = "scheduler_starvation"
FINDING_CONTEXT_LOST: Final = "context_lost"
FINDING_PLAN_DRIFT: Final = "plan_drift"
FINDING_DATA_QUALITY: Final = "data_quality"
# Kinds the reference runtime's fault injection labels (ground truth for evaluation).
LABELED_FINDING_KINDS: Final = (
    FINDING_RUNAWAY_LOOP,
    FINDING_CONTEXT_STARVED,
    FINDING_PLAN_PROPAGATION,
    FINDING_IMPLICIT_DEPENDENCY,
    FINDING_WRITE_CONFLICT,
    FINDING_IRREVERSIBLE_AFTER_FAILURE,
    FINDING_UNBOUNDED_REPLAN,
    FINDING_SCHEDULER_STARVATION,
    FINDING_CONTEXT_LOST,
)
FINDING_KINDS: Final = (*LABELED_FINDING_KINDS, FINDING_PLAN_DRIFT, FINDING_DATA_QUALITY)

# --- central scheduler (AIOS-style kernel; spans scheduler.queue / scheduler.context_switch) ---
# A kernel that shares a bounded pool of model slots between agents records, on every queue
# wait (``scheduler.queue``, a child of the waiting LLM call) and every context switch
# (``scheduler.context_switch``), which scheduler, policy and requester it concerns.
SPAN_SCHEDULER_QUEUE: Final = "scheduler.queue"
SPAN_SCHEDULER_CONTEXT_SWITCH: Final = "scheduler.context_switch"
SCHEDULER_NAMESPACE: Final = "planscope.scheduler."  # every scheduler attribute below
SCHEDULER_ID: Final = "planscope.scheduler.id"
SCHEDULER_POLICY: Final = "planscope.scheduler.policy"  # fifo | round_robin | ...
SCHEDULER_SLOTS: Final = "planscope.scheduler.slots"  # size of the model-slot pool
SCHEDULER_REQUEST_ID: Final = "planscope.scheduler.request_id"
SCHEDULER_REQUESTER: Final = "planscope.scheduler.requester"  # step id (or "planner")
SCHEDULER_QUEUE_LENGTH: Final = "planscope.scheduler.queue_length"  # requests ahead + this one
SCHEDULER_WAIT_MS: Final = "planscope.scheduler.wait_ms"
SCHEDULER_SLOT: Final = "planscope.scheduler.slot"  # the slot the decision granted
SCHEDULER_REASON: Final = "planscope.scheduler.reason"  # arrival | preempted
SCHEDULER_OVERTAKEN: Final = "planscope.scheduler.overtaken"  # later arrivals served first
SCHEDULER_PEER_WAIT_P50_MS: Final = "planscope.scheduler.peer_wait_p50_ms"  # other requests
SCHEDULER_SLICE: Final = "planscope.scheduler.slice"  # 1-based time slice of the request
SCHEDULER_SWITCH_OP: Final = "planscope.scheduler.switch.op"  # save | restore
SCHEDULER_CONTEXT_HASH: Final = "planscope.scheduler.context.hash"
SCHEDULER_CONTEXT_TOKENS: Final = "planscope.scheduler.context.tokens"
SCHEDULER_SAVED_HASH: Final = "planscope.scheduler.context.saved_hash"  # on restore
SCHEDULER_SAVED_TOKENS: Final = "planscope.scheduler.context.saved_tokens"  # on restore
SWITCH_SAVE: Final = "save"
SWITCH_RESTORE: Final = "restore"
EVENT_SCHEDULER_DECISION: Final = "planscope.scheduler.decision"  # on the queue span, at grant

# --- host agent and application agents (UFO2-style; span agent.handoff) -----------------------
# A host agent routes each sub-task of its plan to an application agent with its own tool set;
# every routing is an ``agent.handoff`` span (a child of the run) that holds the receiving
# agent's step attempts. A model call may propose several tool calls at once (a multi-action
# step): its LLM span counts them, each tool span carries its position in the batch, and the
# actions a failure left unexecuted are an event on the step span.
SPAN_HANDOFF: Final = "agent.handoff"
HANDOFF_FROM: Final = "planscope.handoff.from"  # the routing (host) agent
HANDOFF_TO: Final = "planscope.handoff.to"  # the receiving application agent
HANDOFF_APP: Final = "planscope.handoff.app"  # the application that agent drives
HANDOFF_TOOLS: Final = "planscope.handoff.tools"  # JSON array: the receiver's tool set
HANDOFF_NEEDS: Final = "planscope.handoff.needs"  # JSON array: tools the sub-task calls for
HANDOFF_SUBTASK: Final = "planscope.handoff.subtask"  # the plan step (sub-task) handed over
HANDOFF_STATUS: Final = "planscope.handoff.status"  # completed | failed
HANDOFF_COMPLETED: Final = "completed"
HANDOFF_FAILED: Final = "failed"
LLM_TOOL_CALLS: Final = "planscope.llm.tool_calls"  # tool calls one model answer proposed
TOOL_ACTION_INDEX: Final = "planscope.tool.action_index"  # 1-based position in its batch
TOOL_ACTION_BATCH: Final = "planscope.tool.action_batch"  # tool calls of that model answer
EVENT_ACTIONS_DISCARDED: Final = "planscope.actions.discarded"  # on the step span
ACTIONS_DISCARDED: Final = "planscope.actions.discarded_count"  # attribute of that event

# Plain spans of runtime machinery these conventions define (no planscope kind, yet known).
MACHINERY_SPANS: Final = (SPAN_SCHEDULER_QUEUE, SPAN_SCHEDULER_CONTEXT_SWITCH, SPAN_HANDOFF)
