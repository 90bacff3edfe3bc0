"""A multi-agent chat log as typed turns: the common ground of the Who&When importer and of
attribution.

A :class:`Conversation` is what both need: who spoke at each history index, in which role
(task, plan, ledger, dispatch, executor reply, tool output, termination), and what they said.
Labels, when the file has them, are kept apart in :class:`Labels` and never reach a span.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

TurnKind = Literal["task", "plan", "ledger", "thought", "dispatch", "reply", "tool", "final"]
FRAMEWORK_MAGENTIC = "magentic-one"
FRAMEWORK_AG2 = "ag2-captainagent"
MANAGER = "manager"
"""The AG2 group's planner, which never speaks in the history: its plan arrives inside turn 0."""


@dataclass(frozen=True)
class Ledger:
    """A Magentic-One progress ledger (the orchestrator's per-turn self-assessment)."""

    is_request_satisfied: bool | None
    is_in_loop: bool | None
    is_progress_being_made: bool | None
    next_speaker: str | None
    instruction: str | None
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One history entry.

    ``speaker`` is the component (``Orchestrator``, ``WebSurfer``, ``Excel_Expert``); ``role`` is
    the label as written in the log; ``target`` is the executor a dispatch addresses.
    """

    index: int
    speaker: str
    role: str
    kind: TurnKind
    content: str
    target: str | None = None
    ledger: Ledger | None = None


@dataclass(frozen=True)
class Labels:
    """Human failure labels (evaluation only): who and at which history index."""

    agent: str
    step: int
    reason: str


@dataclass(frozen=True)
class Conversation:
    """A parsed multi-agent log.

    >>> c = Conversation("x.json", FRAMEWORK_AG2, "2+2?", None, (), "manager", frozenset())
    >>> c.executor_turns()
    []
    """

    source: str
    framework: str
    question: str
    source_id: str | None
    turns: tuple[Turn, ...]
    planner: str
    tool_speakers: frozenset[str]
    labels: Labels | None = None
    final_answer: str | None = None

    def executor_turns(self) -> list[Turn]:
        """Turns in which an executor agent (not the planner, not a tool) acted."""
        return [t for t in self.turns if t.kind == "reply"]

    def speakers(self) -> list[str]:
        """Every component that spoke, in order of first appearance."""
        seen: dict[str, None] = {}
        for t in self.turns:
            seen.setdefault(t.speaker, None)
        return list(seen)
