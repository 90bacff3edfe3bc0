"""Analysis leases against the real embedded engine: several replicas = several holders."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from planscope_collector._lease import CLAIM_COLUMNS, LEASES_TABLE, Lease, Leases, _token
from planscope_collector.storage import Store, open_store

from tests.conftest import Migrated


def _claim_rows(store: Store, key: str) -> list[dict[str, object]]:
    return store.query(
        f"SELECT Generation, Holder, Revision FROM {LEASES_TABLE} WHERE LeaseKey = {{k:String}} "
        "ORDER BY Generation, Holder, Revision",
        {"k": key},
    )


def test_one_holder_at_a_time_then_release_hands_over(store: Store) -> None:
    a, b = Leases(store, "replica-a"), Leases(store, "replica-b")
    lease = a.acquire("p", "bucket:1")
    assert lease is not None and lease.generation == 1 and lease.valid
    assert b.acquire("p", "bucket:1") is None
    state = b.current("p", "bucket:1")
    assert state is not None and state.holder == "replica-a" and state.live
    a.release(lease)
    taken = b.acquire("p", "bucket:1")
    assert taken is not None and taken.generation == 2 and taken.holder == "replica-b"
    assert a.acquire("p", "bucket:1") is None
    # keys and projects are independent
    assert a.acquire("p", "bucket:2") is not None
    assert a.acquire("other", "bucket:1") is not None


def test_renew_extends_the_same_generation(store: Store) -> None:
    a = Leases(store, "replica-a", ttl=30, margin=2)
    lease = a.acquire("p", "k")
    assert lease is not None
    before = a.current("p", "k")
    renewed = a.renew(lease)
    assert renewed is not None
    after = a.current("p", "k")
    assert before is not None and after is not None
    assert renewed.generation == lease.generation and renewed.revision == lease.revision + 1
    assert after.expires_at > before.expires_at and after.claimed_at == before.claimed_at
    assert renewed.deadline > lease.deadline
    # re-acquiring a live lease of one's own renews it too
    again = a.acquire("p", "k")
    assert again is not None and again.generation == 1 and again.revision == renewed.revision + 1


def test_expired_lease_is_taken_over_and_never_renewed(store: Store) -> None:
    # a window of 0.9 s between a's local deadline and the server's expiry: the renew and the
    # acquire inside it are two store queries, which took over 0.2 s on a loaded CI machine
    a = Leases(store, "replica-a", ttl=3.0, margin=1.0)
    b = Leases(store, "replica-b", ttl=3.0, margin=1.0)
    lease = a.acquire("p", "k")
    assert lease is not None
    assert b.acquire("p", "k") is None
    time.sleep(2.1)  # past a's local deadline (2.0 s), before the server's expiry (3.0 s)
    assert not lease.valid
    assert a.renew(lease) is None, "a lease past its local deadline must not be renewed"
    assert b.acquire("p", "k") is None, "still live on the server"
    time.sleep(1.0)
    taken = b.acquire("p", "k")
    assert taken is not None and taken.generation == 2
    # a's stale lease cannot come back: the current generation is b's
    assert a.acquire("p", "k") is None
    state = a.current("p", "k")
    assert state is not None and (state.generation, state.holder) == (2, "replica-b")


def test_complete_means_nobody_analyses_the_key_again(store: Store) -> None:
    a, b = Leases(store, "replica-a", ttl=1.0, margin=0.2), Leases(store, "replica-b")
    lease = a.acquire("p", "k")
    assert lease is not None
    a.complete(lease)
    time.sleep(1.1)  # even after the ttl
    assert b.acquire("p", "k") is None and a.acquire("p", "k") is None
    state = b.current("p", "k")
    assert state is not None and state.done


def test_second_claim_of_a_generation_is_deduplicated(store: Store) -> None:
    a, b = Leases(store, "replica-a"), Leases(store, "replica-b")
    assert a.acquire("p", "k") is not None
    # b read the key as free before a's claim landed, and now claims generation 1 as well
    b._write("p", "k", 1, 0, None)
    assert [r["Holder"] for r in _claim_rows(store, "k")] == ["replica-a"]
    state = b.current("p", "k")
    assert state is not None and state.holder == "replica-a"


def test_straggler_beyond_the_dedup_window_loses_the_tie_break(store: Store) -> None:
    a = Leases(store, "replica-z")
    lease = a.acquire("p", "k")
    assert lease is not None
    # A claim of generation 1 whose token ClickHouse no longer remembers (beyond the window):
    # it is stored, but its ClaimedAt (server time at insert) is later, so "replica-a" (which
    # sorts first by name) still loses to the earlier claim.
    row = ["p", "k", 1, "replica-a", 0, 60_000, 0]
    store.insert_rows(LEASES_TABLE, [row], CLAIM_COLUMNS, dedup_token="forgotten-token")
    assert len(_claim_rows(store, "k")) == 2
    state = a.current("p", "k")
    assert state is not None and state.holder == "replica-z"
    assert a.renew(lease) is not None


def test_equal_claim_times_tie_break_on_holder(store: Store) -> None:
    at = "2030-01-01 00:00:00.000000"
    for holder in ("replica-b", "replica-a"):
        store.command(
            f"INSERT INTO {LEASES_TABLE} (Project, LeaseKey, Generation, Holder, Revision, TtlMs, "
            "ClaimedAt) VALUES ({p:String}, {k:String}, 1, {h:String}, 0, 60000, "
            "toDateTime64({at:String}, 6))",
            {"p": "p", "k": "tie", "h": holder, "at": at},
        )
    state = Leases(store, "x").current("p", "tie")
    assert state is not None and state.holder == "replica-a"


def test_claim_token_is_per_project_key_and_generation() -> None:
    assert _token("p", "k", 1) == _token("p", "k", 1)
    assert len({_token("p", "k", 1), _token("p", "k", 2), _token("q", "k", 1)}) == 3
    assert _token("p\x00", "k", 1) != _token("p", "\x00k", 1)


def _race(stores: list[Store], holders: int, keys: list[str]) -> dict[str, list[str]]:
    """Every holder tries every key at once (a barrier per key); returns key -> winners."""
    winners: dict[str, list[str]] = {k: [] for k in keys}
    lock = threading.Lock()
    barrier = threading.Barrier(holders)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        leases = Leases(stores[i % len(stores)], f"replica-{i}", ttl=30, margin=2)
        try:
            for key in keys:
                barrier.wait(timeout=60)
                lease = leases.acquire("p", key)
                if lease is not None:
                    with lock:
                        winners[key].append(lease.holder)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(holders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    return winners


def test_concurrent_replicas_on_one_store_elect_exactly_one_holder(store: Store) -> None:
    keys = [f"bucket:{i}" for i in range(12)]
    winners = _race([store], holders=6, keys=keys)
    for key in keys:
        assert len(winners[key]) == 1, (key, winners[key])
        state = Leases(store, "reader").current("p", key)
        assert state is not None and state.holder == winners[key][0]
        assert len(_claim_rows(store, key)) == 1


def test_concurrent_replicas_with_separate_clients_elect_exactly_one_holder(
    tmp_path: Path, migrated: Migrated
) -> None:
    """Separate Store objects (separate locks, so inserts really overlap in the engine)."""
    path = migrated.store_dsn(tmp_path / "chdb")
    stores = [open_store(path) for _ in range(4)]
    try:
        stores[0].migrate()
        keys = [f"bucket:{i}" for i in range(12)]
        winners = _race(stores, holders=8, keys=keys)
        assert all(len(w) == 1 for w in winners.values()), winners
        wins = Counter(w[0] for w in winners.values())
        assert sum(wins.values()) == len(keys)
    finally:
        for s in stores:
            s.close()


def test_workers_analyse_every_bucket_exactly_once(store: Store) -> None:
    """The scheduler pattern: each replica walks all buckets, analyses what it acquires, then
    completes it; one replica dies mid-bucket and its bucket is finished by another after the
    lease expires."""
    buckets = [f"bucket:{i}" for i in range(10)]
    analysed: list[tuple[str, str]] = []
    lock = threading.Lock()

    def worker(name: str, crash_on: str | None) -> None:
        leases = Leases(store, name, ttl=0.6, margin=0.1)
        for _ in range(3):  # a few passes, as the scheduler would over time
            for bucket in buckets:
                lease = leases.acquire("p", bucket)
                if lease is None:
                    continue
                if bucket == crash_on:
                    return  # dies holding the lease: neither completes nor releases
                with lock:
                    analysed.append((bucket, name))
                leases.complete(lease)
            time.sleep(0.4)

    threads = [
        threading.Thread(target=worker, args=(f"replica-{i}", "bucket:0" if i == 0 else None))
        for i in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    done = Counter(bucket for bucket, _ in analysed)
    # bucket:0 is analysed once by a survivor if replica-0 won it, else once by its winner
    assert done == Counter(buckets), done


def test_lease_parameters_are_validated(store: Store) -> None:
    with pytest.raises(ValueError):
        Leases(store, "x", ttl=1, margin=1)
    lease = Lease("p", "k", 1, "x", 0, 1000, None, deadline=time.monotonic() - 1)  # type: ignore[arg-type]
    assert not lease.valid and lease.fencing_token == 1
