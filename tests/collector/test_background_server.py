"""A BackgroundServer that does not start in time says so as a collector error, and leaves no
server thread running behind it (one left opening the store while the interpreter exits
crashed `planscope demo` with SIGSEGV on a machine at load 25)."""

from __future__ import annotations

from pathlib import Path

import pytest
from planscope import PlanscopeError
from planscope_collector import BackgroundServer, CollectorSettings, ServerNotStarted


def test_a_server_that_does_not_start_in_time_is_stopped_before_the_error(tmp_path: Path) -> None:
    server = BackgroundServer(CollectorSettings(data_dir=tmp_path, port=0))
    with pytest.raises(ServerNotStarted, match="within 0 s") as raised:
        server.start(timeout=0)
    assert isinstance(raised.value, PlanscopeError) and isinstance(raised.value, RuntimeError)
    assert not server._thread.is_alive()
    # the same data directory opens again at once: nothing of the first start holds it
    with BackgroundServer(CollectorSettings(data_dir=tmp_path, port=0)) as again:
        assert again.url.startswith("http://127.0.0.1:")
