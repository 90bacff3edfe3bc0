"""Environments, tools and tasks: the real state an agent acts on and the ground truth it is
judged against.

A :class:`Task` is an objective, the facts the planner knows (constraints such as a region or a
refund limit), an initial state, a programmatic success check and the ground-truth plan
(:class:`StepSpec` list) the scripted planner derives. Step arguments are templates: ``{fact}``
is a fact the planner hands to the executor, ``{$key}`` a value an earlier step produced. A
step's ``requires`` (context keys) are exactly the references in its arguments.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._models import ToolSchema

READ = "read"
WRITE = "write"
IRREVERSIBLE = "irreversible"

RMW_GAP_S = 0.01
"""How long a read-modify-write tool pauses between its read and its write."""
_rmw_gap: ContextVar[Callable[[], None] | None] = ContextVar("planscope_rmw_gap", default=None)


def read_modify_write_gap() -> None:
    """The pause of a read-modify-write tool between its read and its write: a parallel writer
    of the same resource that reads in it loses one of the two updates. Inside
    :func:`interleave` the pause is the caller's instead (an injected write conflict makes
    both writers meet there, so both read before either writes).

    >>> read_modify_write_gap()  # sleeps RMW_GAP_S
    """
    hook = _rmw_gap.get()
    if hook is None:
        time.sleep(RMW_GAP_S)
    else:
        hook()


@contextmanager
def interleave(hook: Callable[[], None] | None) -> Iterator[None]:
    """Run a tool call with ``hook`` as its read-modify-write gap (``None``: the plain pause).

    >>> with interleave(lambda: print("between read and write")):
    ...     read_modify_write_gap()
    between read and write
    """
    token = _rmw_gap.set(hook)
    try:
        yield
    finally:
        _rmw_gap.reset(token)


_REF = re.compile(r"\{(\$?)([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)\}")


@dataclass(frozen=True)
class Tool:
    """A tool an environment offers: what it touches (resource) and how (effect).

    ``resource`` maps the call's arguments to a resource name such as ``config:flags``; two
    calls with the same resource and a write effect conflict when they run in parallel.
    """

    name: str
    description: str
    parameters: Mapping[str, str]
    """Parameter name -> JSON type (``string``, ``number``, ``integer``)."""
    effect: str
    resource: Callable[[Mapping[str, Any]], str]
    fn: Callable[..., Any]
    optional: tuple[str, ...] = ()
    """Parameters that may be omitted."""

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p for p in self.parameters if p not in self.optional)

    def schema(self) -> ToolSchema:
        """The JSON-schema function definition offered to models."""
        return ToolSchema(
            name=self.name,
            description=f"{self.description} (effect: {self.effect})",
            parameters={
                "type": "object",
                "properties": {p: {"type": t} for p, t in self.parameters.items()},
                "required": list(self.required),
            },
        )


@dataclass(frozen=True)
class Check:
    """The result of a task's success check."""

    passed: bool
    reason: str = ""


@dataclass(frozen=True)
class StepSpec:
    """One step of a task's ground-truth plan.

    >>> StepSpec("cfg", "read {service} config", "get_config", {"key": "{service}"},
    ...          produces="cfg").requires
    ('service',)
    """

    id: str
    description: str
    tool: str
    args: Mapping[str, Any]
    depends_on: tuple[str, ...] = ()
    produces: str | None = None
    executor: str = "worker"

    @property
    def requires(self) -> tuple[str, ...]:
        """Context keys the step needs: every fact and produced key its arguments reference."""
        found: list[str] = []
        for value in self.args.values():
            if isinstance(value, str):
                for _, name, _path in _REF.findall(value):
                    if name not in found:
                        found.append(name)
        return tuple(found)

    @property
    def fact_refs(self) -> tuple[str, ...]:
        """The facts (not produced keys) the arguments reference."""
        return tuple(
            name
            for value in self.args.values()
            if isinstance(value, str)
            for dollar, name, _path in _REF.findall(value)
            if not dollar
        )


@dataclass(frozen=True)
class Task:
    """An objective with its initial state, success check and ground-truth plan."""

    id: str
    env: str
    objective: str
    facts: Mapping[str, Any]
    steps: tuple[StepSpec, ...]
    setup: Callable[[Any], None]
    check: Callable[[Any], Check]
    misread: Mapping[str, Any] = field(default_factory=dict)
    """Fact -> a plausible wrong value (a misreading planner's or a guessing executor's)."""
    shape: str = "chain"
    """chain | wide | diamond | fanout (for benchmarks)."""

    @property
    def rendered_objective(self) -> str:
        return render_text(self.objective, self.facts)

    def step(self, step_id: str) -> StepSpec:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def order(self) -> list[StepSpec]:
        """Steps in dependency order (ties keep the listed order)."""
        done: set[str] = set()
        ordered: list[StepSpec] = []
        pending = list(self.steps)
        while pending:
            for s in pending:
                if all(d in done for d in s.depends_on):
                    ordered.append(s)
                    done.add(s.id)
                    pending.remove(s)
                    break
            else:
                raise ValueError(f"task {self.id}: dependency cycle")
        return ordered

    def producer_of(self, key: str) -> StepSpec | None:
        return next((s for s in self.steps if s.produces == key), None)


@runtime_checkable
class Environment(Protocol):
    """A stateful world with tools. One instance serves one run at a time."""

    name: str

    def tools(self) -> Mapping[str, Tool]:
        """The tools by name."""
        ...

    def reset(self, task: Task) -> None:
        """Put the environment in the task's initial state."""
        ...

    def close(self) -> None:
        """Release files, connections and temporary directories."""
        ...


def render_text(template: str, values: Mapping[str, Any]) -> str:
    """Substitute ``{fact}``, ``{$key}`` and ``{$key.field}`` references; unknown ones become
    ``<unknown name>``.

    >>> render_text("deploy {svc} v{$art.version}", {"svc": "api", "art": {"version": "2"}})
    'deploy api v2'
    """

    def sub(match: re.Match[str]) -> str:
        found, value = _lookup(values, match)
        return str(value) if found else f"<unknown {match.group(2)}>"

    return _REF.sub(sub, template)


def _lookup(values: Mapping[str, Any], match: re.Match[str]) -> tuple[bool, Any]:
    name, path = match.group(2), match.group(3)
    if name not in values:
        return False, None
    value = values[name]
    for part in path.split(".")[1:]:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return False, None
    return True, value


def resolve_args(args: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """Resolve argument templates against the context; a whole-string reference keeps the
    value's type, a missing one resolves to None.

    >>> resolve_args({"n": "{count}", "msg": "{count} items"}, {"count": 3})
    {'n': 3, 'msg': '3 items'}
    """
    resolved: dict[str, Any] = {}
    for name, value in args.items():
        if isinstance(value, str):
            whole = _REF.fullmatch(value)
            if whole:
                resolved[name] = _lookup(context, whole)[1]
            else:
                resolved[name] = render_text(value, context)
        else:
            resolved[name] = value
    return resolved


def references(value: Any) -> list[str]:
    """Names referenced by a template string (facts and produced keys)."""
    return [name for _, name, _path in _REF.findall(value)] if isinstance(value, str) else []


def bind_facts(args: Mapping[str, Any], facts: Mapping[str, Any]) -> dict[str, Any]:
    """Substitute facts into argument templates, keeping ``{$key}`` references for later.

    >>> bind_facts({"id": "t-{$cust.id}", "p": "{prio}", "n": "{n}"}, {"prio": "high", "n": 2})
    {'id': 't-{$cust.id}', 'p': 'high', 'n': 2}
    """
    bound: dict[str, Any] = {}
    for name, value in args.items():
        if not isinstance(value, str):
            bound[name] = value
            continue
        whole = _REF.fullmatch(value)
        if whole and not whole.group(1):
            bound[name] = _lookup(facts, whole)[1]
            continue

        def sub(match: re.Match[str]) -> str:
            if match.group(1):
                return match.group(0)
            found, fact = _lookup(facts, match)
            return str(fact) if found else match.group(0)

        bound[name] = _REF.sub(sub, value)
    return bound
