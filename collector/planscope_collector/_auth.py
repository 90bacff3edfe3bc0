"""API keys: a key decides the project its spans go to and the only project it can read."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from ._errors import Unauthorized

DEFAULT_PROJECT = "default"


class Authenticator:
    """Map an ``Authorization: Bearer <key>`` header to a project.

    Without keys the collector is in open mode: ingest keeps each resource's own project and
    queries read the project named in the request (``?project=``), ``default`` otherwise.

    >>> auth = Authenticator({"s3cret": "team-a"})
    >>> auth.project_for("Bearer s3cret")
    'team-a'
    """

    def __init__(self, keys: Mapping[str, str]) -> None:
        self._keys = dict(keys)

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def project_for(self, authorization: str | None) -> str | None:
        """The key's project; None in open mode. Raises ``Unauthorized``."""
        if not self._keys:
            return None
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
        token = token.strip()
        found: str | None = None
        # Compare against every key so the time taken does not reveal which prefix matched.
        for key, project in self._keys.items():
            if hmac.compare_digest(key.encode(), token.encode()):
                found = project
        if found is None:
            raise Unauthorized("unknown API key")
        return found
