"""One error fingerprint: the SDK's attribute equals what the analyzer derives from the span."""

from __future__ import annotations

import planscope
import pytest
from planscope import semconv as A
from planscope.fingerprints import fingerprint, normalise_message, status_fingerprint

from .conftest import Spans

MESSAGES = [
    "job_9f1c2d3e-aaaa-bbbb-cccc-123456789abc failed",
    "timeout after 30s on 0x7f3a",
    "ValueError: nested prefix 42",
    "",
]


@pytest.mark.parametrize("message", MESSAGES)
def test_sdk_fingerprint_equals_the_one_derived_from_the_status(spans: Spans, message: str) -> None:
    @planscope.step("fetch")
    def fetch() -> None:
        raise ValueError(message)

    with planscope.start_run("agent"), pytest.raises(ValueError):
        fetch()

    step = spans.one(A.KIND_STEP)
    attrs = Spans.attrs(step)
    derived = status_fingerprint(attrs[A.ERROR_TYPE], step.status.description or "")
    assert attrs[A.STEP_ERROR_FINGERPRINT] == derived


def test_uuid_inside_a_word_is_normalised() -> None:
    a = "job_9f1c2d3e-aaaa-bbbb-cccc-123456789abc failed"
    b = "job_0a1b2c3d-dddd-eeee-ffff-000000000001 failed"
    assert normalise_message(a) == "job_<uuid> failed"
    assert fingerprint("JobError", a) == fingerprint("JobError", b)
    assert fingerprint("JobError", a) != fingerprint("OtherError", a)
