"""The plan as a DAG: nodes = plan steps laid out by dependency depth, edges = ``depends_on``.

A layered (Sugiyama-style) layout: x = longest dependency path from a root; an edge that spans
several layers gets a routing point in each layer it crosses, ordered with the nodes of that
layer (barycentre sweeps down and up), so it is drawn around the nodes, never through one.

Replans that decompose or replace one step (``planscope.plan.scope``) add dashed "scope" edges
from the scoped step to the steps it introduced, so ADaPT trees and DAG-scoped replans read as
trees instead of a column of unconnected boxes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from itertools import pairwise

from ._runview import Attempt, PlanVersion, RunView, attempts_until, step_status

STATUS_COLOURS = {
    "ok": "#2e7d32",
    "retried": "#f9a825",
    "failed": "#c62828",
    "skipped": "#8e7cc3",
    "not executed": "#cfd8dc",
}
"""Node fill per execution status (colour-blind-safe enough with the legend and labels)."""

DEPENDS = "depends_on"
SCOPE = "scope"


@dataclass(frozen=True)
class DagNode:
    """One plan step placed on the canvas."""

    step_id: str
    x: float
    y: float
    depth: int
    status: str
    attempts: int
    executor: str | None
    tool: str | None
    description: str
    irreversible: bool
    highlighted: bool


@dataclass(frozen=True)
class DagEdge:
    source: str
    target: str
    kind: str  # DEPENDS | SCOPE
    via: tuple[tuple[float, float], ...] = ()
    """Routing points (x, y) between source and target, one per layer the edge crosses."""


@dataclass(frozen=True)
class DagLayout:
    nodes: list[DagNode]
    edges: list[DagEdge]

    @property
    def depth(self) -> int:
        return max((n.depth for n in self.nodes), default=0) + 1

    @property
    def width(self) -> int:
        """Largest number of nodes and routing points at one depth."""
        counts: dict[int, int] = {}
        for n in self.nodes:
            counts[n.depth] = counts.get(n.depth, 0) + 1
        for e in self.edges:
            for x, _ in e.via:
                counts[int(x)] = counts.get(int(x), 0) + 1
        return max(counts.values(), default=0)


def scope_edges(view: RunView, plan: PlanVersion) -> list[DagEdge]:
    """Edges from a scoped (decomposed/replaced) step to the entry steps its replan introduced."""
    origin: dict[str, str] = {}
    seen: set[str] = set()
    for version in sorted(
        (p for p in view.plans if p.plan_id == plan.plan_id and p.version <= plan.version),
        key=lambda p: p.version,
    ):
        ids = [s["id"] for s in version.steps]
        if seen and version.scope:
            new = {sid for sid in ids if sid not in seen and sid != version.scope}
            for step in version.steps:
                # Only the entry points of the new sub-plan hang off the scoped step.
                if step["id"] in new and not any(d in new for d in step.get("depends_on", [])):
                    origin.setdefault(step["id"], version.scope)
        seen.update(ids)
    present = {s["id"] for s in plan.steps}
    return [
        DagEdge(parent, child, SCOPE)
        for child, parent in origin.items()
        if child in present and parent in present
    ]


def layout_dag(
    view: RunView,
    plan: PlanVersion,
    highlight: set[str] | frozenset[str] = frozenset(),
    attempts: dict[str, list[Attempt]] | None = None,
) -> DagLayout:
    """Place ``plan``'s steps: x = longest dependency path from a root, y = barycentre order.

    ``attempts`` defaults to those made up to the end of this plan version.
    """
    steps = plan.steps
    ids = [s["id"] for s in steps]
    present = set(ids)
    edges = [
        DagEdge(dep, s["id"], DEPENDS)
        for s in steps
        for dep in s.get("depends_on", [])
        if dep in present and dep != s["id"]
    ]
    edges += [e for e in scope_edges(view, plan) if (e.source, e.target) not in _pairs(edges)]
    depth = _depths(ids, edges)
    y, via = _order(ids, edges, depth)
    edges = [replace(e, via=via.get((e.source, e.target), ())) for e in edges]
    done = attempts if attempts is not None else attempts_until(view, plan)
    nodes = []
    for step in steps:
        sid = step["id"]
        items = done.get(sid, [])
        nodes.append(
            DagNode(
                step_id=sid,
                x=float(depth[sid]),
                y=y[sid],
                depth=depth[sid],
                status=step_status(items),
                attempts=len(items),
                executor=_opt(step.get("executor")),
                tool=_opt(step.get("tool")),
                description=str(step.get("description") or ""),
                irreversible=bool(step.get("irreversible")),
                highlighted=sid in highlight,
            )
        )
    return DagLayout(nodes=nodes, edges=edges)


SWEEPS = 4
"""Barycentre passes (down, up, down, up) that reduce crossings."""


def _order(
    ids: list[str], edges: list[DagEdge], depth: dict[str, int]
) -> tuple[dict[str, float], dict[tuple[str, str], tuple[tuple[float, float], ...]]]:
    """y of every node, and the routing points of edges spanning more than one layer."""
    layers: dict[int, list[str]] = {}
    for sid in ids:
        layers.setdefault(depth[sid], []).append(sid)
    up: dict[str, list[str]] = {}
    down: dict[str, list[str]] = {}
    chains: dict[tuple[str, str], list[str]] = {}
    for e in edges:
        lo, hi = sorted((depth[e.source], depth[e.target]))
        first, last = (
            (e.source, e.target) if depth[e.source] <= depth[e.target] else (e.target, e.source)
        )
        chain = [first]
        for d in range(lo + 1, hi):  # one routing point per crossed layer
            point = f"\x00{e.source}\x00{e.target}\x00{d}"
            layers[d].append(point)
            chain.append(point)
        chain.append(last)
        chains[(e.source, e.target)] = chain[1:-1]
        for a, b in pairwise(chain):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)
    rank = {sid: float(i) for layer in layers.values() for i, sid in enumerate(layer)}
    order = sorted(layers)
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        for d in order if downward else reversed(order):
            near = up if downward else down

            def key(sid: str, near: dict[str, list[str]] = near) -> tuple[float, float]:
                placed = [rank[n] for n in near.get(sid, [])]
                return (sum(placed) / len(placed) if placed else rank[sid], rank[sid])

            layers[d].sort(key=key)
            for i, sid in enumerate(layers[d]):
                rank[sid] = float(i)
    y = {}
    for layer in layers.values():
        n = len(layer)
        for i, sid in enumerate(layer):
            y[sid] = (n - 1) / 2 - i
    via = {
        pair: tuple((float(point.rsplit("\x00", 1)[1]), y[point]) for point in points)
        for pair, points in chains.items()
        if points
    }
    return {sid: y[sid] for sid in ids}, via


def _opt(value: object) -> str | None:
    return None if value in (None, "") else str(value)


def _pairs(edges: list[DagEdge]) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in edges}


def _depths(ids: list[str], edges: list[DagEdge]) -> dict[str, int]:
    """Longest-path depth (Kahn); nodes on a cycle (bad data) go one past the deepest."""
    succ: dict[str, list[str]] = {sid: [] for sid in ids}
    indeg = dict.fromkeys(ids, 0)
    for e in edges:
        succ[e.source].append(e.target)
        indeg[e.target] += 1
    depth = dict.fromkeys(ids, 0)
    queue = deque(sid for sid in ids if indeg[sid] == 0)
    visited = 0
    while queue:
        sid = queue.popleft()
        visited += 1
        for nxt in succ[sid]:
            depth[nxt] = max(depth[nxt], depth[sid] + 1)
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                queue.append(nxt)
    if visited < len(ids):
        deepest = max(depth.values(), default=0) + 1
        for sid in ids:
            if indeg[sid] > 0:
                depth[sid] = deepest
    return depth
