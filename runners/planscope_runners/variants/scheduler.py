"""A central scheduler in the AIOS style: agents share a bounded pool of model slots.

Every model call of the runs attached to a :class:`Kernel` is a request the kernel queues; a
free slot goes to the request its policy picks (``fifo``: the oldest, run to completion;
``round_robin``: the oldest, for one time slice of ``quantum_tokens`` generated tokens, then
it is preempted if anyone waits). On preemption the kernel saves the request's context (the
conversation and what has been generated so far), releases the slot, queues the request again
and restores the context when the request is next dispatched: the model continues where it
stopped. Generation is simulated: the model answers at once and the kernel spends
``decode_seconds_per_token`` per output token in slices (an HTTP model's call is one slice).

The variant itself runs a task like the DAG variant (ready steps dispatched to a bounded pool
of executors) with planner and executors behind one kernel, so parallel steps compete for the
slots. :func:`run_many` puts several runs, each its own trace, behind one shared kernel.

Spans (names in ``planscope.semconv``): ``scheduler.queue`` for every wait, a child of
the waiting LLM call, with the queue length at arrival, the wait, the slot granted, how many
later arrivals were served first and the median wait of the kernel's other recent requests;
a ``planscope.scheduler.decision`` event at the grant; ``scheduler.context_switch`` for every
save and restore with the context's hash and token count (a restore also carries what was
saved).

Two fault knobs act here: ``scheduler_starvation`` (a buggy priority rule passes over the
target step's requests while anyone else waits) and ``context_lost_on_switch`` (the target's
saved context comes back without its conversation; the executor continues blind).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import statistics
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import planscope
from planscope import semconv as A

from .._core import Run
from .._faults import Fault
from .._models import ChatModel, ChatRequest, ChatResponse, render_messages
from . import dag

if TYPE_CHECKING:
    from .._runner import RunResult

NAME = "scheduler"
DESCRIPTION = "AIOS-style kernel: shared model slots, FIFO / round-robin, context save/restore"
POLICIES = ("fifo", "round_robin")
STARVATION = "scheduler_starvation"
CONTEXT_LOST = "context_lost_on_switch"
_RECENT = 64
"""Completed waits the kernel keeps to report its peers' median wait."""
GATE_TIMEOUT_S = 5.0
"""How long the kernel holds its slots for requesters it admits together (see
:meth:`Kernel.admit_together`) before it serves those that came."""


@dataclass
class _Request:
    id: str
    requester: str
    seq: int = 0
    slot: int | None = None
    overtaken: int = 0
    starved: bool = False


@dataclass(frozen=True)
class SavedContext:
    """What a preempted request needs to continue: its conversation and its progress."""

    messages: str
    generated_tokens: int
    hints_context: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return len(self.messages) // 4 + self.generated_tokens

    @property
    def digest(self) -> str:
        payload = json.dumps(
            [self.messages, self.generated_tokens, self.hints_context], default=str
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class Kernel:
    """The central scheduler: a bounded pool of model slots shared by every attached agent.

    >>> kernel = Kernel("fifo", slots=2)
    >>> kernel.policy, kernel.slots
    ('fifo', 2)
    """

    def __init__(
        self,
        policy: str = "round_robin",
        *,
        slots: int = 1,
        quantum_tokens: int = 16,
        decode_seconds_per_token: float = 0.0002,
        faults: Sequence[Fault] = (),
        on_fault: Callable[[str, str], None] | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown scheduling policy {policy!r}; known: {list(POLICIES)}")
        if slots < 1 or quantum_tokens < 1:
            raise ValueError("a kernel needs at least one slot and a quantum of one token")
        self.id = f"kernel-{uuid.uuid4().hex[:8]}"
        self.policy = policy
        self.slots = slots
        self.quantum_tokens = quantum_tokens
        self.decode_seconds_per_token = decode_seconds_per_token
        self.faults = {f.knob: f for f in faults if f.knob in (STARVATION, CONTEXT_LOST)}
        self.on_fault = on_fault
        self._cond = threading.Condition()
        self._queue: list[_Request] = []
        self._free = list(range(slots))
        self._seq = 0
        self._waits: deque[float] = deque(maxlen=_RECENT)
        self._gate: Counter[str] = Counter()
        self._gate_deadline = 0.0
        self.preemptions = 0

    def admit_together(self, requesters: Sequence[str]) -> None:
        """Serve nobody until each of these requesters (step ids) has a request in the queue,
        or ``GATE_TIMEOUT_S`` passed: executors started together queue together, whatever
        the threads' timing (on a loaded machine the first could otherwise finish its call
        before the next one asks, and nothing would compete for the slots).

        >>> kernel = Kernel(slots=1)
        >>> kernel.admit_together(["read_a", "read_b"])
        """
        with self._cond:
            self._gate.update(requesters)
            self._gate_deadline = time.monotonic() + GATE_TIMEOUT_S

    # --- the model call -------------------------------------------------------------------
    def complete(self, model: ChatModel, request: ChatRequest) -> ChatResponse:
        """Run one model call through the scheduler (queue, slices, context switches)."""
        step = planscope.current_step()
        req = _Request(uuid.uuid4().hex[:12], step.step_id if step is not None else "planner")
        starve = self.faults.get(STARVATION)
        req.starved = starve is not None and starve.target == req.requester
        slot: int | None = self._wait(req, "arrival")
        try:
            response = model.complete(request)
            remaining = response.usage.output_tokens if self.decode_seconds_per_token else 0
            generated, slice_no = 0, 1
            while remaining > 0:
                n = remaining if self.policy == "fifo" else min(self.quantum_tokens, remaining)
                time.sleep(n * self.decode_seconds_per_token)
                generated, remaining = generated + n, remaining - n
                if remaining <= 0 or self.policy == "fifo" or not self._anyone_waiting():
                    continue
                saved = self._save(req, request, generated, slice_no)
                self._release(slot)  # type: ignore[arg-type]  # held during every slice
                slot = None
                slot = self._wait(req, "preempted")
                slice_no += 1
                if self._restore(req, saved, slice_no):
                    continue
                # the conversation is gone: the model goes on from the system prompt alone
                blind = replace(
                    request,
                    messages=request.messages[:1],
                    hints={**request.hints, "context": {}},
                )
                lost = model.complete(blind)
                response = replace(response, content=lost.content, tool_calls=lost.tool_calls)
            return response
        finally:
            if slot is not None:
                self._release(slot)

    # --- queueing and decisions ---------------------------------------------------------------
    def _wait(self, req: _Request, reason: str) -> int:
        attrs: dict[str, Any] = {
            A.SCHEDULER_ID: self.id,
            A.SCHEDULER_POLICY: self.policy,
            A.SCHEDULER_SLOTS: self.slots,
            A.SCHEDULER_REQUEST_ID: req.id,
            A.SCHEDULER_REQUESTER: req.requester,
            A.SCHEDULER_REASON: reason,
        }
        with planscope.start_span(A.SPAN_SCHEDULER_QUEUE, attrs) as span:
            started = time.perf_counter()
            with self._cond:
                req.seq, self._seq = self._seq, self._seq + 1
                req.slot, req.overtaken = None, 0
                self._queue.append(req)
                if self._gate[req.requester] > 0:
                    self._gate[req.requester] -= 1
                span.set_attribute(A.SCHEDULER_QUEUE_LENGTH, len(self._queue))
                self._dispatch()
                while req.slot is None:
                    held = self._gate_left()
                    self._cond.wait(held or None)
                    if held and not self._gate_left():  # the gate timed out: serve who came
                        self._dispatch()
                slot = req.slot
                peers = list(self._waits)
                wait_ms = (time.perf_counter() - started) * 1000
                self._waits.append(wait_ms)
                behind = len(self._queue)
            if req.overtaken and req.starved and self.on_fault is not None:
                self.on_fault(req.requester, STARVATION)
            span.set_attribute(A.SCHEDULER_WAIT_MS, round(wait_ms, 3))
            span.set_attribute(A.SCHEDULER_SLOT, slot)
            span.set_attribute(A.SCHEDULER_OVERTAKEN, req.overtaken)
            if peers:
                span.set_attribute(A.SCHEDULER_PEER_WAIT_P50_MS, round(statistics.median(peers), 3))
            span.record_event(
                A.EVENT_SCHEDULER_DECISION,
                **{A.SCHEDULER_SLOT: slot, A.SCHEDULER_QUEUE_LENGTH: behind},
            )
        return slot

    def _pick(self) -> _Request:
        """The policy's choice among the waiting requests (the queue is in arrival order).

        FIFO and round-robin both serve the oldest arrival; round-robin differs in that a
        preempted request arrives again at the tail. The starvation fault is a priority rule
        gone wrong: it passes over its target while anyone else waits."""
        fair = [r for r in self._queue if not r.starved]
        return fair[0] if fair else self._queue[0]

    def _gate_left(self) -> float:
        """Seconds the gate still holds the slots (0 when it is open)."""
        left = self._gate_deadline - time.monotonic()
        if +self._gate and left > 0:
            return left
        self._gate.clear()
        return 0.0

    def _dispatch(self) -> None:
        if self._gate_left():
            return
        while self._free and self._queue:
            chosen = self._pick()
            self._queue.remove(chosen)
            for other in self._queue:
                if other.seq < chosen.seq:
                    other.overtaken += 1
            chosen.slot = self._free.pop(0)
        self._cond.notify_all()

    def _release(self, slot: int) -> None:
        with self._cond:
            self._free.append(slot)
            self._dispatch()

    def _anyone_waiting(self) -> bool:
        with self._cond:
            return bool(self._queue)

    # --- context switches -----------------------------------------------------------------------
    def _save(
        self, req: _Request, request: ChatRequest, generated: int, slice_no: int
    ) -> SavedContext:
        saved = SavedContext(
            render_messages(request.messages),
            generated,
            dict(request.hints.get("context") or {}),
        )
        with self._cond:
            self.preemptions += 1
        self._switch(req, A.SWITCH_SAVE, saved, slice_no)
        return saved

    def _restore(self, req: _Request, saved: SavedContext, slice_no: int) -> bool:
        """Restore a preempted request's context; False when it came back incomplete."""
        fault = self.faults.get(CONTEXT_LOST)
        lost = fault is not None and fault.target == req.requester
        restored = replace(saved, messages="", hints_context={}) if lost else saved
        self._switch(req, A.SWITCH_RESTORE, restored, slice_no, saved)
        if lost and self.on_fault is not None:
            self.on_fault(req.requester, CONTEXT_LOST)
        return not lost

    def _switch(
        self,
        req: _Request,
        op: str,
        context: SavedContext,
        slice_no: int,
        saved: SavedContext | None = None,
    ) -> None:
        attrs: dict[str, Any] = {
            A.SCHEDULER_ID: self.id,
            A.SCHEDULER_POLICY: self.policy,
            A.SCHEDULER_REQUEST_ID: req.id,
            A.SCHEDULER_REQUESTER: req.requester,
            A.SCHEDULER_SWITCH_OP: op,
            A.SCHEDULER_SLICE: slice_no,
            A.SCHEDULER_CONTEXT_HASH: context.digest,
            A.SCHEDULER_CONTEXT_TOKENS: context.tokens,
        }
        if saved is not None:
            attrs[A.SCHEDULER_SAVED_HASH] = saved.digest
            attrs[A.SCHEDULER_SAVED_TOKENS] = saved.tokens
        with planscope.start_span(A.SPAN_SCHEDULER_CONTEXT_SWITCH, attrs):
            pass


class ScheduledModel:
    """A :class:`ChatModel` whose calls go through a :class:`Kernel`."""

    def __init__(self, kernel: Kernel, model: ChatModel) -> None:
        self.kernel = kernel
        self.model = model
        self.name = model.name
        self.provider = model.provider

    def complete(self, request: ChatRequest) -> ChatResponse:
        return self.kernel.complete(self.model, request)


def run(r: Run) -> str | None:
    """Run the task DAG-style with planner and executors behind a kernel (the run's own unless
    its models already share one, see :func:`run_many`)."""
    planner, executor = r.options.planner, r.options.executor
    if isinstance(planner, ScheduledModel):
        kernel = planner.kernel
    else:
        kernel = Kernel(faults=r.faults, on_fault=r.injector.note)
        planner = ScheduledModel(kernel, planner)
    if not isinstance(executor, ScheduledModel):
        executor = ScheduledModel(kernel, executor)
    r.options = replace(r.options, planner=planner, executor=executor)
    return dag.run(r, on_start=kernel.admit_together)


def run_many(
    tasks: Sequence[str],
    kernel: Kernel,
    *,
    planner: ChatModel | None = None,
    executor: ChatModel | None = None,
    seed: int = 0,
) -> list[RunResult]:
    """Run several tasks at once, each its own traced run, all behind one shared kernel.

    >>> results = run_many(["ops-audit-small", "files-merge-3"], Kernel("fifo"))
    >>> [r.outcome for r in results]
    ['success', 'success']
    """
    from .._runner import run_task  # the runner imports the variants
    from .._scripted import ScriptedModel
    from ..environments import get_task

    shared_planner = ScheduledModel(kernel, planner or ScriptedModel("scripted-planner", seed=seed))
    shared_executor = ScheduledModel(
        kernel, executor or ScriptedModel("scripted-executor", seed=seed)
    )

    def one(task_id: str) -> RunResult:
        task = get_task(task_id)
        return run_task(
            NAME,
            task.env,
            task,
            planner=shared_planner,
            executor=shared_executor,
            seed=seed,
        )

    with ThreadPoolExecutor(max_workers=max(1, len(tasks)), thread_name_prefix="agent") as pool:
        futures = [pool.submit(contextvars.copy_context().run, one, t) for t in tasks]
        return [f.result() for f in futures]
