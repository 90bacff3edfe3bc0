from __future__ import annotations

import threading
import time
from pathlib import Path

from planscope_collector._spool import Record, Segment, Spool


def rec(i: int) -> Record:
    return Record("p", i.to_bytes(32, "big"), 1, f"body-{i}".encode())


def read_all(spool: Spool) -> list[Record]:
    return [r for seg in spool.seal() for r in seg.records()]


def test_records_survive_reopen_in_order(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    for i in range(5):
        spool.append(rec(i))
    spool.close()
    reopened = Spool(tmp_path)
    assert [r.body for r in read_all(reopened)] == [f"body-{i}".encode() for i in range(5)]
    assert reopened.spool_id == spool.spool_id


def test_torn_tail_is_ignored_and_earlier_records_kept(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append(rec(1))
    spool.append(rec(2))
    spool.close()
    (segment,) = sorted(tmp_path.glob("*.seg"))
    data = segment.read_bytes()
    segment.write_bytes(data[:-3])  # a crash in the middle of the second write
    assert [r.body for r in read_all(Spool(tmp_path))] == [b"body-1"]


def test_corrupt_record_stops_the_segment_not_the_spool(tmp_path: Path) -> None:
    spool = Spool(tmp_path, segment_max_bytes=1)  # one record per segment
    for i in range(3):
        spool.append(rec(i))
    spool.close()
    first = sorted(tmp_path.glob("*.seg"))[0]
    raw = bytearray(first.read_bytes())
    raw[-1] ^= 0xFF
    first.write_bytes(bytes(raw))
    assert [r.body for r in read_all(Spool(tmp_path))] == [b"body-1", b"body-2"]


def test_rotation_and_pending_bytes(tmp_path: Path) -> None:
    spool = Spool(tmp_path, segment_max_bytes=100)
    for i in range(10):
        spool.append(rec(i))
    segments = spool.seal()
    assert len(segments) >= 3
    assert spool.pending_bytes == sum(s.path.stat().st_size for s in segments)
    for s in segments:
        spool.remove(s)
    assert spool.pending_bytes == 0
    assert spool.seal() == []


def test_seal_respects_age(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append(rec(1))
    assert spool.seal(min_age_seconds=3600) == []
    assert len(spool.seal(min_age_seconds=0)) == 1


def test_seal_age_counts_from_the_oldest_record(tmp_path: Path) -> None:
    """An active segment that waited empty is not sealed the moment a record arrives: the age
    that seals it is its oldest record's (the writer's freshness bound)."""
    spool = Spool(tmp_path)
    time.sleep(0.3)
    assert spool.oldest_age() == 0.0
    spool.append(rec(1))
    assert spool.seal(min_age_seconds=0.25) == []
    spool.append(rec(2))
    time.sleep(0.3)
    assert spool.oldest_age() >= 0.3
    assert [len(list(s.records())) for s in spool.seal(min_age_seconds=0.25)] == [2]
    assert spool.oldest_age() == 0.0


def test_concurrent_appends_are_all_durable(tmp_path: Path) -> None:
    spool = Spool(tmp_path, segment_max_bytes=4096)
    threads = [
        threading.Thread(target=lambda k=k: [spool.append(rec(k * 100 + j)) for j in range(50)])
        for k in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bodies = sorted(bytes(r.body) for r in read_all(spool))
    assert bodies == sorted(f"body-{k * 100 + j}".encode() for k in range(8) for j in range(50))


def test_quarantine_keeps_each_request_with_its_reason_across_restarts(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.quarantine.add("000000000001-000000", rec(1), "Code: 407. overflow")
    spool.quarantine.add("000000000001-000002", rec(3), "flatten failed")
    spool.close()
    items = Spool(tmp_path).quarantine.list()
    assert [(i.id, i.project, i.reason) for i in items] == [
        ("000000000001-000000", "p", "Code: 407. overflow"),
        ("000000000001-000002", "p", "flatten failed"),
    ]
    assert [r.body for r in Segment(0, items[1].path).records()] == [b"body-3"]


def test_dedup_token_is_stable_per_segment(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append(rec(1))
    (segment,) = spool.seal()
    token = spool.dedup_token(segment)
    spool.close()
    (again,) = Spool(tmp_path).seal()
    assert Spool(tmp_path).dedup_token(again) == token


def test_tokens_differ_when_a_drained_spool_reuses_segment_numbers(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append(rec(1))
    (first,) = spool.seal()
    token = spool.dedup_token(first)
    spool.remove(first)
    spool.close()
    reopened = Spool(tmp_path)  # drained: numbering starts again
    reopened.append(rec(2))
    (second,) = reopened.seal()
    assert second.number == first.number
    assert reopened.dedup_token(second) != token
