"""API keys: a key decides the project its spans go to, the only project it can read, and
what it may do (its scopes: ``ingest``, ``read``, ``admin``)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from ._errors import Forbidden, Unauthorized
from ._settings import ApiKey, Scope

DEFAULT_PROJECT = "default"


class Authenticator:
    """Map an ``Authorization: Bearer <key>`` header to a project.

    Without keys the collector is in open mode: ingest keeps each resource's own project,
    queries read the project named in the request (``?project=``), ``default`` otherwise, and
    every scope is granted.

    >>> auth = Authenticator({"s3cret": ApiKey(project="team-a")})
    >>> auth.project_for("Bearer s3cret")
    'team-a'
    """

    def __init__(self, keys: Mapping[str, ApiKey]) -> None:
        self._keys = dict(keys)

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def key_for(self, authorization: str | None) -> ApiKey | None:
        """The key sent; None in open mode. Raises ``Unauthorized``."""
        if not self._keys:
            return None
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
        sent = token.strip().encode()
        found: ApiKey | None = None
        # Compare against every key so the time taken does not reveal which prefix matched.
        for key, entry in self._keys.items():
            if hmac.compare_digest(key.encode(), sent):
                found = entry
        if found is None:
            raise Unauthorized("unknown API key")
        return found

    def project_for(self, authorization: str | None, scope: Scope = "read") -> str | None:
        """The key's project if it has ``scope``; None in open mode.

        Raises ``Unauthorized`` (no or unknown key) or ``Forbidden`` (the key lacks ``scope``).
        """
        key = self.key_for(authorization)
        if key is None:
            return None
        if scope not in key.scopes:
            raise Forbidden(f"this API key has no {scope!r} scope (it has {', '.join(key.scopes)})")
        return key.project
