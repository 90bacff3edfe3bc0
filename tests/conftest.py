"""Fixtures shared by every test folder: real collectors on loopback ports, real chDB stores.

chDB opens one data directory per process at a time, so in-process collectors are strictly
sequential (function scope, closed at teardown); tests that need several live collectors, or a
crash, run ``planscope serve`` in a subprocess.
"""

from __future__ import annotations

import os

os.environ.setdefault("PLANSCOPE_RAISE_INTERNAL_ERRORS", "1")
