"""Import traces planscope's SDK did not produce: Who&When multi-agent logs (Magentic-One,
AG2/CaptainAgent), single-agent tool-use conversations (τ-bench style), OTLP JSON files, and
OpenInference / OpenLLMetry spans, mapped onto the
run/plan/step/tool/llm model and sent through the collector like any other OTLP client.

>>> from planscope_analyzer.importers import FORMATS
>>> FORMATS
('auto', 'whowhen', 'tool-use', 'otlp-json', 'openinference')
"""

from ._chat_spans import conversation_spans
from ._conversation import Conversation, Labels, Ledger, Turn
from ._errors import ImportFailed, MalformedInput, SendFailed, UnknownFormat
from ._import import FORMATS, Prepared, detect_format, import_files, prepare, send
from ._otlp_files import parse_otlp_json, retime
from ._whowhen import parse_whowhen

__all__ = [
    "FORMATS",
    "Conversation",
    "ImportFailed",
    "Labels",
    "Ledger",
    "MalformedInput",
    "Prepared",
    "SendFailed",
    "Turn",
    "UnknownFormat",
    "conversation_spans",
    "detect_format",
    "import_files",
    "parse_otlp_json",
    "parse_whowhen",
    "prepare",
    "retime",
    "send",
]
