"""Broken and unknown inputs: a clear error naming the file and the record, nothing sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from planscope_analyzer.importers import ImportFailed, MalformedInput, UnknownFormat, import_files
from planscope_collector import BackgroundServer

from .conftest import trace_count
from .test_otlp_import import openinference_request


def _good_whowhen(tmp_path: Path) -> Path:
    f = tmp_path / "good.json"
    f.write_text(
        json.dumps(
            {
                "question": "q",
                "history": [
                    {"role": "human", "content": "q"},
                    {"role": "Orchestrator (-> Assistant)", "content": "answer q"},
                    {"role": "Assistant", "content": "42"},
                ],
            }
        )
    )
    return f


@pytest.mark.parametrize(
    ("name", "content", "error", "fragment"),
    [
        ("empty.json", "", MalformedInput, "empty.json: the file is empty"),
        ("notes.txt", "hello world", UnknownFormat, "notes.txt: unknown format"),
        ("other.json", '{"messages": []}', UnknownFormat, "neither a Who&When log"),
        (
            "nocontent.json",
            json.dumps({"history": [{"role": "human", "content": "q"}, {"role": "Assistant"}]}),
            MalformedInput,
            "nocontent.json: history[1].content: Field required",
        ),
        (
            "norole.json",
            json.dumps({"history": [{"content": "q"}]}),
            MalformedInput,
            "norole.json: history[0]: has neither 'role' nor 'name'",
        ),
        (
            "badstep.json",
            json.dumps(
                {
                    "history": [{"role": "human", "content": "q"}],
                    "mistake_agent": "X",
                    "mistake_step": "two",
                }
            ),
            MalformedInput,
            "badstep.json: mistake_step: is not an integer",
        ),
    ],
)
def test_bad_files_name_file_and_record(
    tmp_path: Path, name: str, content: str, error: type[Exception], fragment: str
) -> None:
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(error) as info:
        import_files([f], collector="http://127.0.0.1:9")  # never contacted
    assert fragment in str(info.value)


def test_bad_span_in_json_lines_names_line_and_span(tmp_path: Path) -> None:
    req = openinference_request()
    bad = json.loads(json.dumps(req))
    bad["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["spanId"] = "zz"
    f = tmp_path / "spans.jsonl"
    f.write_text(json.dumps(req) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(MalformedInput) as info:
        import_files([f], collector="http://127.0.0.1:9")
    msg = str(info.value)
    assert "spans.jsonl: line 2: resourceSpans[0].scopeSpans[0].spans[2]" in msg
    assert "not hex" in msg


def test_end_before_start_is_refused(tmp_path: Path) -> None:
    req = openinference_request()
    span = req["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    span["endTimeUnixNano"] = "1"
    f = tmp_path / "time.json"
    f.write_text(json.dumps(req))
    with pytest.raises(MalformedInput, match=r"spans\[1\]: endTimeUnixNano is before"):
        import_files([f], collector="http://127.0.0.1:9")


def test_nothing_is_sent_when_one_file_is_broken(
    tmp_path: Path, collector: BackgroundServer
) -> None:
    good = _good_whowhen(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text('{"history": [{"role": "human", "content": "q"}, ')
    before = trace_count(collector.url)
    with pytest.raises(ImportFailed, match=r"broken\.json"):
        import_files([good, broken], collector=collector.url)
    # Give the collector's writer time to flush anything it might have received.
    import time

    time.sleep(0.5)
    assert trace_count(collector.url) == before
    [p] = import_files([good], collector=collector.url)
    assert p.span_count >= 3


def test_unreachable_collector_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed, match="cannot reach the collector"):
        import_files([_good_whowhen(tmp_path)], collector="http://127.0.0.1:9")
