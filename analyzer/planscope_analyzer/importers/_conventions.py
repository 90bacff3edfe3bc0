"""Attribute names the importers use.

planscope's own (``planscope.import.*``, ``planscope.ledger.*``) are defined in
``planscope.semconv`` and re-exported here. The importers read no foreign convention: the
collector's span model maps OpenInference, OpenLLMetry and GenAI spans at ingest.
"""

from __future__ import annotations

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
    LEDGER_IN_LOOP,
    LEDGER_NEXT_SPEAKER,
    LEDGER_PROGRESS,
    LEDGER_REASON,
    LEDGER_SATISFIED,
)
