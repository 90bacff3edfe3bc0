"""Attribute names the importers add on top of ``planscope._attributes``.

They describe where an imported span came from. They belong in ``sdk/planscope/_attributes.py``
(the single source of truth); until they are moved there, this module is the only place that
spells them, and docs/importers.md documents them.
"""

from __future__ import annotations

from typing import Final

IMPORT_FORMAT: Final = "planscope.import.format"
"""``whowhen``, ``otlp-json`` or ``openinference``: the format the span was imported from."""
IMPORT_SOURCE: Final = "planscope.import.source"
"""The file name the span was read from (base name only)."""
IMPORT_RECORD: Final = "planscope.import.record"
"""Where in the file: for Who&When the index into ``history`` (int); for OTLP the span path."""
IMPORT_ROLE: Final = "planscope.import.role"
"""The speaker label as written in the log (``Orchestrator (-> WebSurfer)``)."""
IMPORT_SOURCE_ID: Final = "planscope.import.source_id"
"""The run's id in the source (Who&When ``question_ID``)."""
IMPORT_ORIGINAL_START: Final = "planscope.import.original_start_unix_nano"
"""The span's start time as recorded in the file, before re-timing (int, Unix ns)."""
IMPORT_SOURCE_KIND: Final = "planscope.import.source_kind"
"""The span kind in the source convention (``openinference:AGENT``, ``traceloop:workflow``)."""
IMPORT_FRAMEWORK: Final = "planscope.import.framework"
"""The multi-agent framework that produced a log (``magentic-one``, ``ag2-captainagent``)."""

EVENT_LEDGER: Final = "planscope.import.ledger"
"""A planner's progress ledger (Magentic-One), on the planner's LLM span."""
LEDGER_IN_LOOP: Final = "planscope.ledger.is_in_loop"
LEDGER_PROGRESS: Final = "planscope.ledger.is_progress_being_made"
LEDGER_SATISFIED: Final = "planscope.ledger.is_request_satisfied"
LEDGER_NEXT_SPEAKER: Final = "planscope.ledger.next_speaker"
LEDGER_REASON: Final = "planscope.ledger.reason"

# OpenInference (Arize) and OpenLLMetry (Traceloop) names we read. Not ours: spelled here once.
OI_SPAN_KIND: Final = "openinference.span.kind"
OI_INPUT: Final = "input.value"
OI_OUTPUT: Final = "output.value"
OI_MODEL: Final = "llm.model_name"
OI_PROVIDER: Final = "llm.provider"
OI_SYSTEM: Final = "llm.system"
OI_PROMPT_TOKENS: Final = "llm.token_count.prompt"
OI_COMPLETION_TOKENS: Final = "llm.token_count.completion"
OI_TOOL_NAME: Final = "tool.name"
OI_TOOL_PARAMETERS: Final = "tool.parameters"
OI_SESSION_ID: Final = "session.id"
OI_AGENT_NAME: Final = "agent.name"
TL_SPAN_KIND: Final = "traceloop.span.kind"
TL_ENTITY_NAME: Final = "traceloop.entity.name"
TL_ENTITY_INPUT: Final = "traceloop.entity.input"
TL_ENTITY_OUTPUT: Final = "traceloop.entity.output"
TL_WORKFLOW_NAME: Final = "traceloop.workflow.name"
TL_REQUEST_TYPE: Final = "llm.request.type"
GEN_AI_SYSTEM: Final = "gen_ai.system"
GEN_AI_PROMPT_TOKENS_OLD: Final = "gen_ai.usage.prompt_tokens"
GEN_AI_COMPLETION_TOKENS_OLD: Final = "gen_ai.usage.completion_tokens"
