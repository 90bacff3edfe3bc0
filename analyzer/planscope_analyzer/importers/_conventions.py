"""Attribute names the importers use.

planscope's own (``planscope.import.*``, ``planscope.ledger.*``) are defined in
``planscope.semconv`` and re-exported here; the foreign conventions the importers read
(OpenInference, OpenLLMetry) are spelled here once.
"""

from __future__ import annotations

from typing import Final

# planscope's own import attributes live in the single source of truth; re-exported here.
from planscope.semconv import (  # noqa: F401 - re-exported for the importers
    EVENT_LEDGER,
    IMPORT_FORMAT,
    IMPORT_FRAMEWORK,
    IMPORT_ORIGINAL_START,
    IMPORT_RECORD,
    IMPORT_ROLE,
    IMPORT_SOURCE,
    IMPORT_SOURCE_ID,
    IMPORT_SOURCE_KIND,
    LEDGER_IN_LOOP,
    LEDGER_NEXT_SPEAKER,
    LEDGER_PROGRESS,
    LEDGER_REASON,
    LEDGER_SATISFIED,
)

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
