"""Every SQL statement of the analyzer, in one module (the "load" and "findings" families).

Values are always bound server-side (``{name:Type}``). Loads read the typed tables of the
span model (migration 0011) by their primary key prefix ``(Project, TraceId, ...)`` and prune daily
partitions with a ``Start`` lower bound, so analysing N new traces reads about N traces' rows
whatever the size of the store. Attribute names never appear here: the derived tables already
hold them as columns (a test checks that any ``planscope.*``/``gen_ai.*`` literal in this
module exists in ``planscope.semconv``).
"""

from __future__ import annotations

from planscope import semconv as A
from planscope_collector.observed import (
    APP_ARGUMENTS_KEY,
    APP_RESULT_KEY,
    answer_sql,
    conversation_calls_sql,
    conversation_sql,
    event_values_sql,
    function_call_sql,
    function_calls_sql,
    function_results_sql,
    tool_event_sql,
    user_request_sql,
)
from planscope_collector.runmodel import RUN_OUTCOME_REASON
from planscope_collector.storage import (
    SPAN_STATUS_CODE_SQL,
    SPAN_STATUS_MESSAGE_SQL,
    status_code_sql,
)

# ``Error``/``Ok``/``Unset``, also for rows an older clickhouseexporter wrote (``STATUS_CODE_*``).
_STATUS = status_code_sql()

# A batch of traces: bound as {project:String}, {ids:String} (comma-separated hex ids: one
# string binds ~50x faster than an Array of thousands), {since:DateTime64(9)}. The ids are a
# subquery, so they become a hash set once (a bare ``IN splitByChar(...)`` cost up to 40% more
# CPU per typed read of 2,000 traces).
TRACE_FILTER = (
    "Project = {project:String} AND TraceId IN (SELECT arrayJoin(splitByChar(',', {ids:String}))) "
    "AND Start >= {since:DateTime64(9)}"
)

# The typed rows of a batch: TRACE_FILTER plus an upper bound, the batch's latest span end (from
# the trace index) + slack. No span of a trace starts after the trace's last end, so the bound
# only prunes: daily partitions newer than the batch are not read at all.
TYPED_FILTER = TRACE_FILTER + " AND Start <= {until:DateTime64(9)}"

# The typed rows of a batch of a window pass (every trace of the project that started in a time
# range): the time bounds alone, no id list. They also select rows of the few neighbouring
# traces that overlap the range (the loader keeps only the batch's own); binding and matching
# 2,000 ids cost more than reading those (a third of a typed read's CPU).
TIME_FILTER = (
    "Project = {project:String} AND Start >= {since:DateTime64(9)} "
    "AND Start <= {until:DateTime64(9)}"
)

# The reads that aggregate (one row per trace, or per trace and parent span) run on one thread:
# with more, each thread builds its own hash table of tens of thousands of string keys and the
# tables are then merged, which costs more CPU than the threads save (a 1M-span window pass,
# alternating: the LLM reads ~0.5 instead of ~1.2 CPU s, the window's trace index 0.27 instead of
# 0.39). The plain reads gain nothing from it (docs/benchmarks-log.md, 2026-12-03).
LOAD_INDEX = """
SELECT TraceId AS trace_id,
       toUnixTimestamp64Nano(min(Start)) AS start_ns,
       toUnixTimestamp64Nano(max(End)) AS end_ns,
       sum(SpanCount) AS spans,
       max(RootSpanName) != '' AS has_root
FROM planscope_trace_index
WHERE {filter}
GROUP BY TraceId
SETTINGS max_threads = 1
"""

# The typed reads below come unordered: the loader orders, in Arrow, only the rows that become
# Python values (by trace, then start or plan position). An ORDER BY here sorted every row of
# the range, a third to a half of each read's CPU (docs/benchmarks-log.md, 2026-12-04).
LOAD_RUNS = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id, RunId AS run_id,
       Variant AS variant, Outcome AS outcome, {RUN_OUTCOME_REASON} AS outcome_reason,
       Budget AS budget,
       toUnixTimestamp64Nano(Start) AS start_ns, toUnixTimestamp64Nano(End) AS end_ns,
       {_STATUS} AS status_code, Objective AS objective, Inferred AS inferred,
       AgentName AS agent
FROM planscope_runs
WHERE {{filter}}
"""

# The plan JSON and the objective it states only for the traces in {failed:String} (as the tool
# arguments below: plan propagation reads which values the planner wrote).
LOAD_PLANS = """
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id, PlanId AS plan_id,
       Version AS version, Scope AS scope, ReplanReason AS replan_reason,
       StepCount AS step_count, PlanJsonValid AS json_valid,
       toUnixTimestamp64Nano(Start) AS start_ns, Inferred AS inferred,
       if(TraceId IN splitByChar(',', {{failed:String}}), PlanJson, '') AS json,
       if(TraceId IN splitByChar(',', {{failed:String}}), Objective, '') AS objective
FROM planscope_plans
WHERE {filter}
"""

LOAD_PLAN_STEPS = """
SELECT TraceId AS trace_id, PlanSpanId AS plan_span_id, PlanId AS plan_id,
       PlanVersion AS plan_version, Position AS position, StepId AS step_id,
       Description AS description, Executor AS executor, Tool AS tool, DependsOn AS depends_on,
       Requires AS requires, Produces AS produces, Irreversible AS irreversible
FROM planscope_plan_steps
WHERE {filter}
"""

# Tokens/cost of the LLM calls made directly inside each span (usually a step attempt).
LOAD_STEP_ATTEMPTS = """
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       PlanId AS plan_id, PlanVersion AS plan_version, StepId AS step_id, Attempt AS attempt,
       Status AS status, ErrorType AS error_type, ErrorFingerprint AS fingerprint,
       Executor AS executor, ContextKeys AS context_keys, ContextTokens AS context_tokens,
       SelfAssessment AS self_assessment, Depth AS depth, InputHash AS input_hash,
       toUnixTimestamp64Nano(Start) AS start_ns, toUnixTimestamp64Nano(End) AS end_ns,
       StatusMessage AS status_message, Inferred AS inferred
FROM planscope_step_attempts
WHERE {filter}
"""

# A tool call's arguments: for a LangChain callback's input envelope (OpenLLMetry's entity
# input: ``input_str``, ``inputs`` and per-call ``metadata``/``kwargs`` such as the graph step
# and the tool-call id) only its ``inputs``, the call's arguments by name. Without
# planscope.tool.args_hash they stand in for it, so that identical calls hash alike. The
# arguments and results themselves are read only for the traces in {failed:String} (those
# whose run failed: plan propagation traces a wrong value through them; healthy runs never
# need them).
_CALL_ARGUMENTS = """if(JSONHas(Arguments, 'input_str') AND JSONHas(Arguments, 'inputs'),
    JSONExtractRaw(Arguments, 'inputs'), Arguments)"""
LOAD_TOOL_CALLS = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       StepId AS step_id, Attempt AS attempt, PlanId AS plan_id, PlanVersion AS plan_version,
       ToolName AS tool, Resource AS resource, Effect AS effect,
       multiIf(ArgsHash != '', ArgsHash, Arguments != '', lower(hex(cityHash64(
           {_CALL_ARGUMENTS}))), '') AS args_key,
       ErrorType AS error_type, {_STATUS} AS status_code,
       toUnixTimestamp64Nano(Start) AS start_ns, Duration AS duration_ns,
       if(TraceId IN splitByChar(',', {{{{failed:String}}}}), {_CALL_ARGUMENTS}, '') AS arguments,
       if(TraceId IN splitByChar(',', {{{{failed:String}}}}), Result, '') AS result
FROM planscope_tool_calls
WHERE {{filter}}
"""

LOAD_LLM_BY_PARENT = """
SELECT TraceId AS trace_id, ParentSpanId AS parent_span_id,
       sum(InputTokens + OutputTokens) AS tokens, sum(EffectiveCostUsd) AS cost_usd,
       count() AS calls, groupArray(SpanId) AS span_ids
FROM planscope_llm_costs
WHERE {filter}
GROUP BY TraceId, ParentSpanId
SETTINGS max_threads = 1
"""

# A span's message as the loader reads it (a log's own message where the span is a log).
_MESSAGE = f"if(SpanModelLogLevel != 0, SpanModelLogMessage, {SPAN_STATUS_MESSAGE_SQL})"
# The error envelope a tool call returned, in _MESSAGE: an ALIAS that reads the attribute map of
# every row it is read for (~1.7 CPU s per million spans), '' wherever SpanModelReturned (a
# stored column) is 0; LOAD_RAW leaves it out and says ``returned``, LOAD_RETURNED_MESSAGES reads
# the whole message of the few spans that returned one (docs/benchmarks.md, ``scalecheck``).
_RETURNED_BRANCH = "SpanModelReturnedMessage != '', SpanModelReturnedMessage, "
if _RETURNED_BRANCH not in _MESSAGE:
    raise ImportError("SPAN_STATUS_MESSAGE_SQL changed: LOAD_RAW's message needs a look")

# The raw spans a batch needs from otel_traces, in one scan: every span of the traces in
# {partial:String} (spans outside the typed tables: a central scheduler's queue waits and
# context switches, third-party spans), and the step attempts of the traces in
# {ambiguous:String} that recorded an explicitly empty context (``[]``), which the typed table
# cannot tell from no record at all. Both come from columns materialised at insert (0022's
# SpanModelContextEmpty, 0032's one column per scheduler attribute), never from an attribute
# map: decompressing SpanAttributes was most of this read's cost, SchedulerAttributes' lookups
# a third of what was left.
# Unordered, as the typed reads: the loader orders the rows it keeps by trace, start and span
# id (detectors name raw spans as evidence in this order); sorting the whole read here was a
# third of its CPU once the scheduler attributes were columns (docs/benchmarks-log.md,
# 2026-12-04 ``anaspeed7``).
LOAD_RAW = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       SpanName AS name, {SPAN_STATUS_CODE_SQL} AS status_code,
       {_MESSAGE.replace(_RETURNED_BRANCH, "")} AS message, SpanModelReturned AS returned,
       SpanModelLogLevel AS log_level,
       toUnixTimestamp64Nano(Timestamp) AS start_ns, Duration AS duration_ns,
       toUnixTimestamp64Nano(Timestamp) + Duration AS end_ns,
       SpanModelContextEmpty = 1 AS empty_context,
       SpanName IN ('scheduler.queue', 'scheduler.context_switch') AS scheduler,
       SchedulerId AS scheduler_id, SchedulerPolicy AS policy, SchedulerRequester AS requester,
       SchedulerRequestId AS request_id, SchedulerSwitchOp AS switch_op,
       SchedulerContextHash AS context_hash, SchedulerContextTokens AS context_tokens,
       SchedulerSavedHash AS saved_hash, SchedulerSavedTokens AS saved_tokens,
       SchedulerOvertaken AS overtaken
FROM otel_traces
WHERE Project = {{project:String}}
  AND Timestamp >= {{since:DateTime64(9)}} AND Timestamp < {{until:DateTime64(9)}}
  AND (TraceId IN (SELECT arrayJoin(splitByChar(',', {{partial:String}})))
       OR (TraceId IN (SELECT arrayJoin(splitByChar(',', {{ambiguous:String}}))) AND empty_context))
"""

# The events of the traces in {ids:String} that observed.event_calls reads (GenAI events with a
# tool call id: the tool calls said only as events); unordered: event_calls orders them.
LOAD_TOOL_EVENTS = f"""
SELECT TraceId AS trace_id, SpanId AS span_id,
       toUnixTimestamp64Nano(Events.Timestamp) AS time_ns, Events.Name AS name,
       Events.Attributes AS attributes
FROM otel_traces
ARRAY JOIN Events
WHERE Project = {{project:String}}
  AND Timestamp >= {{since:DateTime64(9)}} AND Timestamp < {{until:DateTime64(9)}}
  AND TraceId IN (SELECT arrayJoin(splitByChar(',', {{ids:String}})))
  AND {tool_event_sql()}
"""

_OF_IDS = """Project = {project:String}
  AND Timestamp >= {since:DateTime64(9)} AND Timestamp < {until:DateTime64(9)}
  AND TraceId IN (SELECT arrayJoin(splitByChar(',', {ids:String})))"""

# What the failed spans of the traces in {ids:String} whose name is Logfire's message template
# say with their arguments filled in (``logfire.msg``: RawSpan.title), for the loader's
# skeletons: a failed application check's name says what it checked. Only failed spans named
# by a template: the attribute map is read for a few rows, never by LOAD_RAW.
LOAD_FAILED_TITLES = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, SpanAttributes['{A.LOGFIRE_MSG}'] AS title
FROM otel_traces
WHERE {_OF_IDS} AND {SPAN_STATUS_CODE_SQL} = 'Error' AND SpanModelLogLevel = 0
  AND SpanAttributes['{A.LOGFIRE_MSG_TEMPLATE}'] = SpanName
  AND SpanAttributes['{A.LOGFIRE_MSG}'] NOT IN ('', SpanName)
"""

# The LLM calls of the traces in {ids:String} whose messages may say tool calls binding takes
# (observed.conversation_calls_sql), with the message attributes that
# observed.conversation_tool_events reads (the tool calls only their conversation says).
LOAD_CONVERSATIONS = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       toUnixTimestamp64Nano(Timestamp) AS start_ns,
       toUnixTimestamp64Nano(Timestamp) + Duration AS end_ns, {conversation_sql()} AS messages
FROM otel_traces
WHERE {_OF_IDS} AND {conversation_calls_sql(_OF_IDS)}
"""

# The LLM calls of the traces in {ids:String} that may be handed a tool's error
# (observed.function_calls_sql), with their function results when one is an error
# (observed.function_results_sql; the calls handed none are left out).
LOAD_FUNCTION_RESULTS = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       toUnixTimestamp64Nano(Timestamp) AS start_ns, {function_results_sql()} AS results
FROM otel_traces
WHERE {_OF_IDS} AND {function_calls_sql(_OF_IDS)} AND notEmpty(results)
"""

# The whole message (LOAD_RAW's, the error envelope's included) of the spans of the traces in
# {ids:String} that returned an error envelope (SpanModelReturned: the map read for those only).
LOAD_RETURNED_MESSAGES = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, {_MESSAGE} AS message
FROM otel_traces
WHERE {_OF_IDS} AND SpanModelReturned = 1
"""

# The span names of the inferred step attempts of the traces in {ids:String} (a step named
# only in its span's name: observed.bind).
LOAD_ATTEMPT_NAMES = """
SELECT TraceId AS trace_id, SpanId AS span_id, SpanName AS name
FROM otel_traces
WHERE Project = {project:String}
  AND Timestamp >= {since:DateTime64(9)} AND Timestamp < {until:DateTime64(9)}
  AND TraceId IN (SELECT arrayJoin(splitByChar(',', {ids:String})))
  AND SpanModelKind = 'step' AND SpanModelInferred
"""

# What the LLM calls of the traces in {ids:String} were asked (runs that failed without an
# objective: the loader takes the planner's prompt as the objective): their input-message
# attributes in every convention, as planscope_collector.observed.user_request reads them.
# Unordered (the loader orders them in Arrow) and on one thread: these input messages are most
# of a framework batch's bytes, and an ORDER BY here, or reading threads, held several times
# the result (peak RSS, docs/benchmarks-log.md, 2026-12-05).
LOAD_PROMPTS = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, toUnixTimestamp64Nano(Timestamp) AS start_ns,
       {user_request_sql()} AS messages
FROM otel_traces
WHERE Project = {{project:String}}
  AND Timestamp >= {{since:DateTime64(9)}} AND Timestamp < {{until:DateTime64(9)}}
  AND TraceId IN (SELECT arrayJoin(splitByChar(',', {{ids:String}})))
  AND notEmpty(messages)
SETTINGS max_threads = 1
"""

# What the LLM calls and inferred agent runs of the traces in {ids:String} answered and what
# their tool calls were called with (traces with no plan the span model read:
# observed.read_plans looks for one in what a planner said), as
# planscope_collector.observed.answer reads it. One thread, as LOAD_PROMPTS.
LOAD_ANSWERS = f"""
SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       toUnixTimestamp64Nano(Timestamp) AS start_ns, Duration AS duration_ns,
       toString(SpanModelKind) AS kind, SpanModelInferred AS inferred, {answer_sql()} AS answers
FROM otel_traces
WHERE Project = {{project:String}}
  AND Timestamp >= {{since:DateTime64(9)}} AND Timestamp < {{until:DateTime64(9)}}
  AND TraceId IN (SELECT arrayJoin(splitByChar(',', {{ids:String}})))
  AND notEmpty(answers)
SETTINGS max_threads = 1
"""


def _first_set(*keys: str, otherwise: str = "''") -> str:
    """SQL for the first of these span attributes that is set, else ``otherwise`` (SQL)."""
    return (
        "multiIf("
        + ", ".join(f"SpanAttributes['{k}'] != '', SpanAttributes['{k}']" for k in keys)
        + f", {otherwise})"
    )


# Logfire's fields: its spans carry a call's arguments (``@logfire.instrument``) or a span's
# fields (``logfire.span``) as attributes of their own, named in ``logfire.json_schema``'s
# properties; the result among them is ``return`` (``record_return=True``), else a field the app
# named for what the work gave back (``result`` / ``output``, as an app's own attribute is read:
# observed.APP_RESULT_KEY; set on the span after the call, Logfire lists it as a field too); the
# other fields are the arguments (a poll asked the same question each time has the same ones)
_LOGFIRE_FIELDS = f"JSONExtractKeys(SpanAttributes['{A.LOGFIRE_JSON_SCHEMA}'], 'properties')"
_LOGFIRE_RESULT_FIELD = (
    f"arrayFirst(k -> has({_LOGFIRE_FIELDS}, k) AND SpanAttributes[k] != '', "
    f"['{A.LOGFIRE_RETURN}', {', '.join(repr(k) for k in A.LOGFIRE_RESULT_FIELDS)}])"
)
_LOGFIRE_ARGUMENTS = (
    f"if(empty({_LOGFIRE_FIELDS}), '', toJSONString(mapFilter((k, v) -> has({_LOGFIRE_FIELDS}, k)"
    f" AND k != '{A.LOGFIRE_RETURN}' AND k != {_LOGFIRE_RESULT_FIELD}, SpanAttributes)))"
)
_LOGFIRE_RESULT = f"if({_LOGFIRE_RESULT_FIELD} != '', SpanAttributes[{_LOGFIRE_RESULT_FIELD}], '')"


def _app_attribute(key: str, holds: str) -> str:
    """SQL of an app's own plain span's first attribute (by key) whose name matches ``key`` and
    whose value ``v`` ``holds`` (a ClickHouse condition on ``v``), as ``observed.step_io``
    reads a plain span."""
    return (
        f"arrayFirst(v -> {holds}, arrayMap(k -> SpanAttributes[k], arraySort(arrayFilter("
        f"k -> match(k, '{key}'), mapKeys(SpanAttributes)))))"
    )


# an app's own plain span: the first attribute named ``<prefix>.args`` (or ``.arguments``,
# ``.input``, ``.params``) that holds a JSON object (``app.tool.args``), and what it gave back:
# the first named ``<prefix>.result`` (or ``.output``) that is not empty (``app.tool.result``)
_APP_ARGUMENTS = _app_attribute(APP_ARGUMENTS_KEY, "startsWith(v, '{')")
_APP_RESULT = _app_attribute(APP_RESULT_KEY, "v != ''")

# Burr's @trace() function span: its other attributes the arguments, its ``return`` the result
_BURR_ARGUMENTS, _BURR_RESULT = function_call_sql()

# a tool span's own events (Strands Agents): its gen_ai.tool.message the arguments, its
# gen_ai.choice the result (a JSON list of content blocks: the first block's text)
_EVENT_ARGUMENTS = (
    f"{event_values_sql([A.GEN_AI_TOOL_MESSAGE_EVENT])}['{A.GEN_AI_TOOL_MESSAGE_EVENT}']"
)
_EVENT_CHOICE = f"{event_values_sql([A.GEN_AI_CHOICE_EVENT])}['{A.GEN_AI_CHOICE_EVENT}']"
_EVENT_RESULT = (
    f"if(JSONExtractString({_EVENT_CHOICE}, 1, 'text') != '', "
    f"JSONExtractString({_EVENT_CHOICE}, 1, 'text'), {_EVENT_CHOICE})"
)

# a tool call's arguments, in the conventions the span model reads them from, else
# Logfire's fields, else an app's own attribute, else the span's events
_TOOL_ARGUMENTS = _first_set(
    A.GEN_AI_TOOL_CALL_ARGUMENTS,
    A.OI_INPUT_VALUE,
    A.TL_ENTITY_INPUT,
    A.LF_OBSERVATION_INPUT,
    A.MLFLOW_SPAN_INPUTS,
    otherwise=f"multiIf({_LOGFIRE_ARGUMENTS} != '', {_LOGFIRE_ARGUMENTS}, {_APP_ARGUMENTS} != '', "
    f"{_APP_ARGUMENTS}, {_BURR_ARGUMENTS} != '', {_BURR_ARGUMENTS}, {_EVENT_ARGUMENTS})",
)
# what the tool returned as the span model reads it (migration 0046), else Logfire's, Burr's,
# an app's own attribute, else the span's events
_TOOL_RESULT = (
    f"multiIf(SpanModelToolResult != '', SpanModelToolResult, {_LOGFIRE_RESULT} != '', "
    f"{_LOGFIRE_RESULT}, {_BURR_RESULT} != '', {_BURR_RESULT}, {_APP_RESULT} != '', "
    f"{_APP_RESULT}, {_EVENT_RESULT})"
)

# The arguments and result of the spans in {spans:String} of the traces in {ids:String} that
# binding found to be tool calls although the span model did not (observed.bind, component
# calls), read as the span model reads a tool call's (migration 0029).
LOAD_COMPONENT_CALLS = f"""
SELECT SpanId AS span_id,
       {_TOOL_ARGUMENTS} AS arguments,
       if(arguments != '', lower(hex(cityHash64(arguments))), '') AS args_key,
       {_TOOL_RESULT} AS result
FROM otel_traces
WHERE Project = {{project:String}}
  AND Timestamp >= {{since:DateTime64(9)}} AND Timestamp < {{until:DateTime64(9)}}
  AND TraceId IN (SELECT arrayJoin(splitByChar(',', {{ids:String}})))
  AND SpanId IN (SELECT arrayJoin(splitByChar(',', {{spans:String}})))
"""

# --- selecting work ---------------------------------------------------------------------------
# Traces whose first span started in [since, until) (a full or time-windowed pass), with what
# LOAD_INDEX reads for each (so a window pass asks the trace index once, not once per batch).
# Index rows older than a day before the window belong to traces that started before it; the
# rows after ``until`` of a trace that started inside the window are counted.
WINDOW_INDEX = """
SELECT TraceId AS trace_id,
       toUnixTimestamp64Nano(min(Start)) AS start_ns,
       toUnixTimestamp64Nano(max(End)) AS end_ns,
       sum(SpanCount) AS spans,
       max(RootSpanName) != '' AS has_root
FROM planscope_trace_index
WHERE Project = {project:String} AND Start >= {since:DateTime64(9)} - INTERVAL 1 DAY
GROUP BY TraceId
HAVING min(Start) >= {since:DateTime64(9)} AND min(Start) < {until:DateTime64(9)}
ORDER BY TraceId
SETTINGS max_threads = 1
"""

PROJECTS = "SELECT DISTINCT Project AS project FROM planscope_trace_index"

# Traces that changed since they were last analysed (or were never analysed) and went quiet:
# those with trace index rows since {since:DateTime64(9)} (new spans land in new rows), whose
# span count over all their rows differs from the count their last analysis recorded. Reads
# the window's index rows, then those traces' rows by primary key: the cost follows the new
# data, not the store. A trace that started before the window and got late spans counts too.
CHANGED_TRACES = """
WITH touched AS (
    SELECT DISTINCT TraceId FROM planscope_trace_index
    WHERE Project = {project:String} AND Start >= {since:DateTime64(9)}
)
SELECT t.trace_id AS trace_id, toUnixTimestamp64Nano(t.first_start) AS start_ns
FROM (
    SELECT TraceId AS trace_id, sum(SpanCount) AS spans, min(Start) AS first_start,
           max(End) AS last_end
    FROM planscope_trace_index
    WHERE Project = {project:String} AND TraceId IN touched
    GROUP BY TraceId
    HAVING last_end < {quiet_before:DateTime64(9)}
) AS t
LEFT JOIN (
    SELECT TraceId AS analysed_id, argMax(SpanCount, AnalyzedAt) AS analysed_spans
    FROM analysis_progress
    WHERE Project = {project:String} AND TraceId IN touched
    GROUP BY TraceId
) AS a ON a.analysed_id = t.trace_id
WHERE a.analysed_spans != t.spans
ORDER BY t.first_start
LIMIT {limit:UInt32}
"""

# The stored bindings of a batch's traces (migration 0035, ``_bindings.read_bindings``): those
# of this binding version or a newer one whose trace started in the batch's range ({filter}:
# BINDING_TIME_FILTER for a window batch, BINDING_TRACE_FILTER for traces named by id); a newer
# version's text is not read (only that the row exists: this build must not replace it). Not
# FINAL: a trace re-bound after new spans has several rows until they merge, and the reader keeps
# the newest one whose span count and end the trace index still gives. One thread: the read is
# mostly decompressing the texts, and it runs beside the rules (the pass's loader thread); two
# threads cost 4-10% more CPU (docs/benchmarks.md, speed14).
LOAD_BINDINGS = """
SELECT TraceId AS trace_id, SpanCount AS spans, toUnixTimestamp64Nano(TraceEnd) AS end_ns,
       if(BindingVersion = {{version:UInt32}}, Binding, '') AS binding,
       toUnixTimestamp64Micro(BoundAt) AS bound_at, BindingVersion > {{version:UInt32}} AS newer
FROM planscope_trace_bindings
WHERE {filter} AND BindingVersion >= {{version:UInt32}}
SETTINGS max_threads = 1
"""
BINDING_TIME_FILTER = (
    "Project = {project:String} AND TraceStart >= {since:DateTime64(9)} "
    "AND TraceStart <= {until:DateTime64(9)}"
)
BINDING_TRACE_FILTER = (
    BINDING_TIME_FILTER + " AND TraceId IN (SELECT arrayJoin(splitByChar(',', {ids:String})))"
)

# --- findings ------------------------------------------------------------------------------------
FINDING_NAMES = (
    "Project", "TraceId", "RunId", "Kind", "FindingKey", "Severity", "Component", "StepId",
    "EvidenceSpanIds", "Explanation", "WastedTokens", "WastedCostUsd", "WastedNs", "Detail",
    "DetectorVersion", "TraceStart", "AnalyzedAt", "IsDeleted",
)  # fmt: skip
"""Columns of ``findings`` rows as the analyzer writes them (columnar inserts)."""
FINDING_TYPES = (
    "string", "string", "string", "string", "string", "string", "string", "string",
    "list<string>", "string", "uint64", "double", "uint64", "string",
    "string", "timestamp[ns]", "timestamp[us]", "uint8",
)  # fmt: skip
"""The Arrow type of each of :data:`FINDING_NAMES` as the engine inserts them (a time as
integer nanoseconds or microseconds since the epoch, as its ``DateTime64`` column holds it)."""

PROGRESS_NAMES = (
    "Project", "TraceId", "TraceStart", "SpanCount", "FindingCount", "AnalyzerVersion",
    "AnalyzedAt",
)  # fmt: skip
"""Columns of ``analysis_progress`` rows as the analyzer writes them."""
PROGRESS_TYPES = (
    "string", "string", "timestamp[ns]", "uint64", "uint32", "string", "timestamp[us]",
)  # fmt: skip
"""The Arrow type of each of :data:`PROGRESS_NAMES` (as :data:`FINDING_TYPES`)."""

# Live finding keys of some traces (to tombstone those a re-analysis no longer produces).
LIVE_KEYS = """
SELECT TraceId AS trace_id, Kind AS kind, FindingKey AS key, toUnixTimestamp64Nano(TraceStart) AS ts
FROM findings FINAL
WHERE Project = {project:String} AND TraceId IN splitByChar(',', {ids:String})
  AND IsDeleted = 0
"""

FINDING_SELECT = """
SELECT Project AS project, TraceId AS trace_id, RunId AS run_id, Kind AS kind,
       FindingKey AS key, Severity AS severity, Component AS component, StepId AS step_id,
       EvidenceSpanIds AS evidence_span_ids, Explanation AS explanation,
       WastedTokens AS wasted_tokens, WastedCostUsd AS wasted_cost_usd,
       round(WastedNs / 1e6, 3) AS wasted_ms, Detail AS detail,
       DetectorVersion AS detector_version,
       toUnixTimestamp64Nano(TraceStart) AS trace_start_ns,
       toUnixTimestamp64Micro(AnalyzedAt) AS analyzed_at_us
FROM findings FINAL
WHERE Project = {project:String} AND IsDeleted = 0
"""
