"""Stable fingerprints shared by the SDK, the importers and the analyzer (one implementation).

An error fingerprint is the first 16 hex digits of sha256(``error.type`` + newline + the
normalised message), where normalising replaces uuids, hex runs and numbers by placeholders
(docs/semantic-conventions.md, "Error fingerprint"); a loop repeating "the same error" is found
even when ids and counters change. ``stable_hash`` is the hash of step inputs and tool arguments.

>>> from planscope.fingerprints import fingerprint, status_fingerprint
>>> fingerprint("ToolError", "503 on 0x1f") == fingerprint("ToolError", "503 on 0x2e")
True
>>> from_status = status_fingerprint("ToolError", "ToolError: 503 on 0x1f")  # prefix dropped
>>> from_status == fingerprint("ToolError", "504 on 0x2e")
True
"""

from ._capture import fingerprint, normalise_message, stable_hash, status_fingerprint

__all__ = ["fingerprint", "normalise_message", "stable_hash", "status_fingerprint"]
