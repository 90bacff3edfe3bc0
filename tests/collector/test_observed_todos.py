"""A plan written as a to-do list (LangChain's ``TodoListMiddleware``, deep agents, a coding
agent's todo tool) as ``observed.bind`` sees it: a film unit's line producer whose model writes
``{"todos": [{"content": "<item>: <what>", "status": ...}]}`` through a todo tool, rewrites the
whole list after every item to mark progress (the tool node's state update records it), and
hands each item to a crew sub-agent through a ``delegate(item, instructions)`` tool call; the
sub-agent's graph runs as node visits (model turns, tool nodes) under that call.

A todo's step name is the label before ``:`` in its content; a list rewritten with the same
items is a status update, not a re-plan; the sub-agent's run under the call naming an item is
one attempt of that item."""

from __future__ import annotations

import json

from planscope_collector.observed import SpanNode, _labelled_items, bind

ITEMS = {
    "scout_location": "find a rooftop in Leith for the night shoot on 2027-03-02",
    "rent_camera": "rent an ARRI Alexa 35 for 2027-03-02 from Dockside Hire",
}


def node(span_id: str, parent: str, kind: str, start: int, **kw: object) -> SpanNode:
    return SpanNode(span_id, parent, kind, str(kw.pop("name", span_id)), start_ns=start, **kw)  # type: ignore[arg-type]


def todos(done: int) -> str:
    statuses = ["completed"] * done + ["in_progress"] + ["pending"] * len(ITEMS)
    return json.dumps(
        {
            "todos": [
                {"content": f"{name}: {what}", "status": status}
                for (name, what), status in zip(ITEMS.items(), statuses, strict=False)
            ]
        }
    )


def literal(args: dict[str, str]) -> str:
    """A LangChain callback's tool input: the arguments as a Python literal in ``input_str``."""
    return json.dumps({"input_str": repr(args)})


def shoot(failing: int = 0) -> list[SpanNode]:
    """The producer's turns: write the list, hand each item to the crew (``failing`` failed
    location searches inside the first hand-off before one that works), rewrite the list."""
    spans = [
        node("root", "", "other", 0, name="plan shoot day"),
        node("g", "root", "other", 0, name="producer.workflow"),
    ]
    t = 1
    for i, (item, what) in enumerate(ITEMS.items()):
        told = f"Item {item} (attempt 1): {what}"
        spans += [
            node(f"m{i}", "g", "step", t, name="model", step_name="model"),
            node(f"ml{i}", f"m{i}", "llm", t + 1, answer=todos(i)),
            # the tool node's state update: the list the todo tool wrote
            node(f"w{i}", "g", "step", t + 2, name="tools", step_name="tools",
                 answer=json.dumps({"update": json.loads(todos(i))})),
            node(f"wt{i}", f"w{i}", "tool", t + 3, tool="write_todos", answer=literal({"n": "x"})),
            node(f"d{i}", "g", "step", t + 4, name="model", step_name="model"),
            node(f"dl{i}", f"d{i}", "llm", t + 5, answer=json.dumps({"item": item})),
            node(f"h{i}", "g", "step", t + 6, name="tools", step_name="tools"),
            node(f"ht{i}", f"h{i}", "tool", t + 7, tool="delegate",
                 answer=literal({"item": item, "instructions": told})),
            node(f"ia{i}", f"ht{i}", "step", t + 8, name="invoke_agent crew", step_name="crew"),
            node(f"x{i}", f"ht{i}", "other", t + 8, name="execute_task crew"),
        ]  # fmt: skip
        t += 9
        tool = "location_search" if i == 0 else "camera_hire"
        for k in range(failing + 1 if i == 0 else 1):
            spans += [
                node(f"cm{i}{k}", f"x{i}", "step", t, name="model", step_name="model"),
                node(f"cl{i}{k}", f"cm{i}{k}", "llm", t + 1, request=told),
                node(f"ct{i}{k}", f"x{i}", "step", t + 2, name="tools", step_name="tools"),
                node(f"cc{i}{k}", f"ct{i}{k}", "tool", t + 3, tool=tool,
                     failed=k < failing, message="rooftop locked" if k < failing else ""),
            ]  # fmt: skip
            t += 4
    return spans


def test_a_todo_is_named_by_the_label_before_its_colon() -> None:
    b = bind(shoot(), [])
    first = json.loads(b.read_plans[0].json)
    # the text after the label is what the item does, with its values
    assert [(s["id"], s.get("description")) for s in first] == list(ITEMS.items())


def test_a_todo_list_rewritten_to_mark_progress_is_no_replan() -> None:
    b = bind(shoot(), [])
    assert len(b.read_plans) == 1


def test_the_sub_agent_run_a_tool_call_hands_an_item_is_one_attempt_of_it() -> None:
    b = bind(shoot(failing=3), [])
    scouting = [a for a in b.attempts if b.steps.get(a) == "scout_location"]
    assert scouting == ["ia0"]  # the crew's run under the hand-off, not its node visits
    searches = [f"cc0{k}" for k in range(4)]
    assert {b.actions[c] for c in searches} == {"ia0"}
    assert b.steps.get("ia1") == "rent_camera" and "ia1" in b.attempts
    assert "ia0" not in b.failed  # its last search worked


def test_a_list_with_no_todo_status_is_read_as_before() -> None:
    # a list of results whose texts happen to start with labels is no to-do list
    items = [{"title": "pick: by hand", "n": 1}, {"title": "ship: by van", "n": 2}]
    assert _labelled_items(items) == items
    todo = [{**i, "status": "pending"} for i in items]
    assert [i[""] for i in _labelled_items(todo)] == ["pick", "ship"]
