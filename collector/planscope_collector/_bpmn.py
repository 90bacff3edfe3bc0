"""Plans stated as a BPMN 2.0 process.

A planner may write its plan the way a team that runs a workflow engine writes a process: a
BPMN 2.0 XML document (OMG's standard, as Camunda 8 / Zeebe, Camunda 7, Flowable and bpmn.io's
modeler write it) whose ``process`` holds tasks joined by sequence flows from a start event.
Each task (``serviceTask``, ``task``, ``userTask``, ``scriptTask``, ``sendTask``, ...,
``callActivity``) is a step: its ``id`` the step (what an engine's job names), its ``name`` the
goal, its job type the tool (Zeebe's ``zeebe:taskDefinition type``; Camunda 7's external task
``topic``; a call activity's ``calledElement``), its input mappings the arguments (Zeebe's
``zeebe:input source/target``, Camunda 7's ``camunda:inputParameter``), a FEEL literal as its
value and a reference ``=step.field`` as written, the earlier tasks such references name its
needs. The process's own properties (``zeebe:property name value``) are values settled outside
its tasks (a re-plan's done results): no step; an input that refers to one is read as its value.
The document is parsed by ``xml.etree`` (no external entity is resolved) and **never run**;
events, gateways and flows are no steps, they only order the tasks. ``observed.evidence_plans``
offers every planner answer to :func:`steps`.
"""

from __future__ import annotations

import json
import re
from typing import Any
from xml.etree import ElementTree

from ._readstep import ReadStep

_MAX_TEXT = 500_000
"""Longer answers are not parsed (a plan is never this long)."""
_TASKS = frozenset(
    {
        "task",
        "serviceTask",
        "sendTask",
        "receiveTask",
        "userTask",
        "manualTask",
        "businessRuleTask",
        "scriptTask",
        "callActivity",
    }
)
"""BPMN 2.0's activities that do work (a sub-process's tasks are read in its place)."""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_REFERENCE = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*")


def steps(text: str) -> list[ReadStep]:
    r"""The tasks of the first BPMN process a text states (from its first ``<`` to its last
    ``>``; a structured output's field holding one is offered as a text of its own:
    ``observed._texts_of``), in the order its sequence flows reach them from its start events
    (tasks no flow reaches after them, in document order); [] when there is no process, it has
    no task, or two tasks share an id.

    >>> xml = '''<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    ...   xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"><process id="p">
    ...   <startEvent id="s"/>
    ...   <serviceTask id="ship" name="Step 2: ship it"><extensionElements>
    ...     <zeebe:taskDefinition type="courier"/><zeebe:ioMapping>
    ...     <zeebe:input source="=pick.parcel_id" target="parcel"/></zeebe:ioMapping>
    ...   </extensionElements></serviceTask>
    ...   <serviceTask id="pick" name="Step 1: pick the order"><extensionElements>
    ...     <zeebe:taskDefinition type="wms"/><zeebe:ioMapping>
    ...     <zeebe:input source="=7" target="order"/>
    ...     <zeebe:input source="=&quot;Oslo&quot;" target="city"/></zeebe:ioMapping>
    ...   </extensionElements></serviceTask>
    ...   <sequenceFlow sourceRef="s" targetRef="pick"/>
    ...   <sequenceFlow sourceRef="pick" targetRef="ship"/></process></definitions>'''
    >>> [(x.name, x.tool) for x in steps(xml)]
    [('pick', 'wms'), ('ship', 'courier')]
    >>> [x.args for x in steps(xml)]
    [{'order': 7, 'city': 'Oslo'}, {'parcel': 'pick.parcel_id'}]
    >>> [x.needs for x in steps(xml)]
    [(), ('pick',)]
    >>> steps(xml)[1].goal
    'Step 2: ship it'
    >>> steps("<plan><step id='a'/></plan>"), steps("no xml")
    ([], [])
    """
    if len(text) > _MAX_TEXT or "process" not in text:
        return []
    root = _parsed(text)
    for process in root.iter() if root is not None else ():
        if _local(process.tag) == "process" and (found := _process(process)):
            return found
    return []


def _parsed(text: str) -> ElementTree.Element | None:
    """The XML document a text holds from its first ``<`` to its last ``>``, or None."""
    start, end = text.find("<"), text.rfind(">")
    if start < 0 or end < start:
        return None
    try:
        return ElementTree.fromstring(text[start : end + 1])
    except ElementTree.ParseError:
        return None


def _local(tag: str) -> str:
    """A tag or attribute name without its namespace (``{uri}serviceTask`` → ``serviceTask``).

    >>> _local("{http://www.omg.org/spec/BPMN/20100524/MODEL}serviceTask"), _local("type")
    ('serviceTask', 'type')
    """
    return tag.rpartition("}")[2]


def _attribute(element: ElementTree.Element, name: str) -> str:
    """An attribute by its local name, whatever its namespace ("" when absent)."""
    return next((v for k, v in element.attrib.items() if _local(k) == name), "")


def _process(process: ElementTree.Element) -> list[ReadStep]:
    """:func:`steps` of one process element."""
    tasks: dict[str, ElementTree.Element] = {}
    flows: dict[str, list[str]] = {}
    starts: list[str] = []
    subs: dict[str, tuple[list[str], list[str]]] = {}
    for element in _flow_elements(process, subs):
        kind, element_id = _local(element.tag), element.get("id", "")
        if kind in _TASKS:
            if not element_id or element_id in tasks:
                return []
            tasks[element_id] = element
        elif kind == "sequenceFlow":
            flows.setdefault(element.get("sourceRef", ""), []).append(element.get("targetRef", ""))
        elif kind == "startEvent" and element_id:
            starts.append(element_id)
    if not tasks:
        return []
    for sub, (first, last) in subs.items():
        # a sub-process runs its own flow from its start events; what follows it, after its end
        after = flows.pop(sub, [])
        flows[sub] = first
        for end in last:
            flows.setdefault(end, []).extend(after)
    starts = [s for s in starts if not any(s in first for first, _ in subs.values())]
    settled = {
        name: value
        for element in process
        if _local(element.tag) == "extensionElements"
        for p in element.iter()
        if _local(p.tag) == "property" and (name := p.get("name"))
        for value in [_literal(p.get("value", ""))]
    }
    order = [t for t in _ordered(starts, flows) if t in tasks]
    order += [t for t in tasks if t not in order]
    out: list[ReadStep] = []
    for task_id in order:
        task = tasks[task_id]
        args = _inputs(task, settled)
        earlier = {s.name for s in out}
        needs = tuple(
            dict.fromkeys(
                head
                for value in args.values()
                if isinstance(value, str) and (head := value.split(".")[0]) in earlier
            )
        )
        out.append(ReadStep(task_id, needs, task.get("name", ""), _job_type(task), args))
    return out


def _ordered(starts: list[str], flows: dict[str, list[str]]) -> list[str]:
    """The nodes the flows reach from ``starts``, each once all the flows into it from reached
    nodes are taken (a parallel join after both branches), in the order found; a loop back is
    broken at the node found first.

    >>> _ordered(["s"], {"s": ["a"], "a": ["b", "c"], "b": ["j"], "c": ["j"], "j": ["a", "d"]})
    ['s', 'a', 'b', 'c', 'j', 'd']
    """
    found: list[str] = []
    queue = list(starts)
    while queue:  # what the flows reach, breadth first
        node = queue.pop(0)
        if node not in found:
            found.append(node)
            queue.extend(flows.get(node, []))
    waiting = {n: 0 for n in found}
    for node in found:
        for target in flows.get(node, []):
            waiting[target] += 1
    out: list[str] = []
    while len(out) < len(found):
        ready = [n for n in found if n not in out and waiting[n] == 0]
        node = ready[0] if ready else next(n for n in found if n not in out)  # a loop
        out.append(node)
        for target in flows.get(node, []):
            waiting[target] -= 1
    return out


def _flow_elements(
    container: ElementTree.Element, subs: dict[str, tuple[list[str], list[str]]]
) -> list[ElementTree.Element]:
    """A process's flow elements, a sub-process's in its place (its tasks are the steps), each
    sub-process's start and end events in ``subs``."""
    out: list[ElementTree.Element] = []
    for element in container:
        if _local(element.tag) == "subProcess":
            inner = _flow_elements(element, subs)
            subs[element.get("id", "")] = (
                [e.get("id", "") for e in element if _local(e.tag) == "startEvent"],
                [e.get("id", "") for e in element if _local(e.tag) == "endEvent"],
            )
            out.extend(inner)
        out.append(element)
    return out


def _job_type(task: ElementTree.Element) -> str:
    """The tool a task calls: its job type (Zeebe's ``taskDefinition``), its external task
    topic (Camunda 7), the process a call activity calls, else ""."""
    for element in task.iter():
        if _local(element.tag) == "taskDefinition" and (kind := _attribute(element, "type")):
            return kind
    return _attribute(task, "topic") or _attribute(task, "calledElement")


def _inputs(task: ElementTree.Element, settled: dict[str, Any]) -> dict[str, Any]:
    """A task's input mappings by target name: literals as values, a reference to a settled
    property as its value, other references as written."""
    out: dict[str, Any] = {}
    for element in task.iter():
        kind = _local(element.tag)
        if kind == "input" and (target := element.get("target")):
            source = element.get("source", "")  # Zeebe: "=" opens a FEEL expression
        elif kind == "inputParameter" and (target := element.get("name")):
            text = (element.text or "").strip()  # Camunda 7: "${...}" is an expression
            expression = text[2:-1] if text.startswith("${") and text.endswith("}") else ""
            source = f"={expression}" if expression else f"={json.dumps(text)}"
        else:
            continue
        expression = source[1:].strip() if source.startswith("=") else source
        if expression in settled:
            out[target] = settled[expression]
        elif (
            source.startswith("=") and _REFERENCE.fullmatch(expression) and not _keyword(expression)
        ):
            out[target] = expression
        else:
            out[target] = _literal(expression) if source.startswith("=") else source
    return out


def _keyword(expression: str) -> bool:
    """FEEL's literal names (``true``, ``false``, ``null``)."""
    return expression in ("true", "false", "null")


def _literal(text: str) -> Any:
    """A FEEL literal's value: a string in double quotes, a number, a boolean, null; else the
    text as written.

    >>> _literal('"Oslo"'), _literal("6.5"), _literal("7"), _literal("true"), _literal("a + 1")
    ('Oslo', 6.5, 7, True, 'a + 1')
    """
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('\\"', '"')
    if _NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    if _keyword(text):
        return {"true": True, "false": False, "null": None}[text]
    return text
