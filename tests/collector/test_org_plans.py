"""Plans written as an Org-mode outline, as Org users write them (issue #13): a school's
field trip and a choir's concert, not any corpus agent's shape. The reader
(``observed._org_outlines``) is reached through :func:`observed.structured_plans`, so the step
ids are those later executor attempts are told, like every structured format's."""

from __future__ import annotations

from typing import Any

from planscope_collector import observed
from planscope_collector.observed import SpanNode, structured_plans

HEADINGS_ONLY = """\
#+TITLE: Year 6 trip to the science museum
#+TODO: TODO NEXT WAITING | DONE CANCELLED
* DONE [#A] Find a coach operator [1/1]                           :transport:
  CLOSED: [2027-04-02 Fri 10:12]
* NEXT Book the coach
  SCHEDULED: <2027-05-03 Mon>
* WAITING Pay the deposit                                    :finance:school:
  DEADLINE: <2027-05-07 Fri>
* TODO Tell the parents
* COMMENT Ideas for next year
"""

DRAWERS = """\
#+TITLE: Year 6 trip
* Trip plan [0/4]
  :PROPERTIES:
  :ORDERED:  t
  :END:
** TODO [#A] Find a coach operator
   :PROPERTIES:
   :CUSTOM_ID: find_coach
   :TOOL:     search_operators
   :ARG_town: Harrogate
   :ARG_seats: 45
   :END:
** TODO Book the coach
   SCHEDULED: <2027-05-03 Mon>
   :PROPERTIES:
   :CUSTOM_ID: book_coach
   :TOOL:     reserve_coach
   :operator: [[#find_coach]]
   :day:      2027-05-14
   :note:     front seats for
   :note+:    the two helpers
   :END:
   :LOGBOOK:
   - State "TODO"       from              [2027-04-01 Thu 09:00]
   :END:
** TODO Pay the deposit
   :PROPERTIES:
   :CUSTOM_ID: pay_deposit
   :BLOCKER:  ids(book_coach)
   :EFFORT:   0:10
   :END:
   pay_invoice(account="SCH-2231", booking="[[#book_coach]]")
** TODO Tell the parents
   :PROPERTIES:
   :CUSTOM_ID: notify_parents
   :END:
   #+BEGIN_SRC python
   send_letter(year=6, coach="[[*Book the coach]]")
   #+END_SRC
"""

CHECKBOXES = """\
#+TITLE: Spring concert
* TODO Get the concert ready [0/3]
  - [ ] book_hall: reserve_hall(hall="St Cecilia", day="2027-03-20")
  - [X] print_programmes: print_order(copies=120)
  - [ ] tell_singers: send_notice(list="choir", hall="[[book_hall]]")
"""

LINKS = """\
#+TITLE: Spring concert
* TODO hire_piano: Hire a grand piano
  :PROPERTIES:
  :TOOL: hire_instrument
  :TRIGGER: ids(tune_piano)
  :END:
  - kind :: concert grand
  - day :: 2027-03-19
* TODO tune_piano: Tune it the day before
  :PROPERTIES:
  :TOOL: book_tuner
  :END:
  - piano :: [[hire_piano]]
* TODO rehearse: Dress rehearsal
  :PROPERTIES:
  :TOOL: book_room
  :DEPENDS: previous-sibling
  :END:
  Needs the piano from [[*tune_piano: Tune it the day before][the tuning]] and
  ${hire_piano}.
"""


def _steps(text: str, which: int = 0) -> list[dict[str, Any]]:
    return list(observed._org_outlines(text))[which]


def test_headings_only_are_steps_named_by_their_slugs() -> None:
    steps = _steps(HEADINGS_ONLY)
    # keywords (one from the #+TODO line), priority, statistics cookie and tags are no part
    # of the name; a COMMENT heading is no step
    assert [s["id"] for s in steps] == [
        "find_a_coach_operator",
        "book_the_coach",
        "pay_the_deposit",
        "tell_the_parents",
    ]
    assert all(s["tool"] == "" and "args" not in s for s in steps)


def test_property_drawers_give_ids_tools_arguments_and_dependencies() -> None:
    steps = {s["id"]: s for s in _steps(DRAWERS)}
    # the leaf headings are the steps (the parent is the plan), named by their CUSTOM_ID
    assert list(steps) == ["find_coach", "book_coach", "pay_deposit", "notify_parents"]
    assert steps["find_coach"]["tool"] == "search_operators"
    assert steps["find_coach"]["args"] == {"town": "Harrogate", "seats": 45}
    # a link to a heading is written as [[<its id>]]; KEY+ continues a property; LOGBOOK and
    # SCHEDULED lines are no arguments
    assert steps["book_coach"]["args"] == {
        "operator": "[[find_coach]]",
        "day": "2027-05-14",
        "note": "front seats for the two helpers",
    }
    # a call in the body (and one in a source block) is the tool and its arguments; EFFORT is
    # Org's own property
    assert steps["pay_deposit"]["tool"] == "pay_invoice"
    assert steps["pay_deposit"]["args"] == {"account": "SCH-2231", "booking": "[[book_coach]]"}
    assert steps["notify_parents"]["tool"] == "send_letter"
    assert steps["notify_parents"]["args"] == {"year": 6, "coach": "[[book_coach]]"}
    # :ORDERED: t on the parent, a BLOCKER's ids(...), links
    assert steps["find_coach"]["depends_on"] == []
    assert steps["book_coach"]["depends_on"] == ["find_coach"]
    assert steps["pay_deposit"]["depends_on"] == ["book_coach"]
    assert steps["notify_parents"]["depends_on"] == ["pay_deposit"]


def test_checkbox_items_of_a_heading_that_calls_nothing_are_its_steps() -> None:
    (heading,) = _steps(CHECKBOXES, 0)
    assert heading["id"] == "get_the_concert_ready" and heading["tool"] == ""
    steps = _steps(CHECKBOXES, 1)
    assert [(s["id"], s["tool"]) for s in steps] == [
        ("book_hall", "reserve_hall"),
        ("print_programmes", "print_order"),
        ("tell_singers", "send_notice"),
    ]
    assert steps[0]["args"] == {"hall": "St Cecilia", "day": "2027-03-20"}
    assert steps[2]["args"] == {"list": "choir", "hall": "[[book_hall]]"}
    assert steps[2]["depends_on"] == ["book_hall"]


def test_links_triggers_and_siblings_are_dependencies() -> None:
    steps = {s["id"]: s for s in _steps(LINKS)}
    assert list(steps) == ["hire_piano", "tune_piano", "rehearse"]
    # description items are arguments
    assert steps["hire_piano"]["args"] == {"kind": "concert grand", "day": "2027-03-19"}
    assert steps["tune_piano"]["args"] == {"piano": "[[hire_piano]]"}
    # a link to an earlier heading, and the earlier step's TRIGGER naming this one
    assert steps["tune_piano"]["depends_on"] == ["hire_piano"]
    # a [[*heading]] link with a description, and previous-sibling
    assert steps["rehearse"]["depends_on"] == ["tune_piano"]
    assert "${hire_piano}" in steps["rehearse"]["goal"]


def test_a_typed_link_whose_path_is_a_step_is_that_steps_result() -> None:
    text = (
        "#+TITLE: Spring concert\n* TODO print_programmes\n  :PROPERTIES:\n"
        "  :TOOL: print_order\n  :END:\n* TODO hand_out\n  :PROPERTIES:\n"
        "  :TOOL: give_out\n  :stack: [[result:print_programmes]]\n"
        "  :venue: [[https://example.org/hall][the hall]]\n  :END:\n"
    )
    steps = {s["id"]: s for s in _steps(text)}
    # kept as written (plan propagation reads the step's name in it), and a dependency
    assert steps["hand_out"]["args"]["stack"] == "[[result:print_programmes]]"
    assert steps["hand_out"]["depends_on"] == ["print_programmes"]


def test_a_markdown_bullet_list_is_no_outline() -> None:
    assert list(observed._org_outlines("* Book the coach\n* Pay the deposit\n")) == []
    assert list(observed._org_outlines("No heading here: TODO later.")) == []


def _trace(plan: str, told: list[str]) -> dict[str, SpanNode]:
    """A planner's answer holding ``plan`` and one executor attempt per step it is told."""
    nodes = [
        SpanNode("p", "", "step", "planner", step_name="planner"),
        SpanNode("l", "p", "llm", "chat", answer=plan, start_ns=1),
    ]
    for i, order in enumerate(told, 2):
        nodes += [
            SpanNode(f"e{i}", "", "step", "executor", step_name="executor", start_ns=i),
            SpanNode(f"c{i}", f"e{i}", "llm", "chat", start_ns=i, request=order),
        ]
    return {n.span_id: n for n in nodes}


def test_the_steps_are_those_the_executors_are_told() -> None:
    told = [
        "Step find_coach: search_operators",
        "Step book_coach: reserve_coach",
        "Step pay_deposit: pay_invoice",
    ]
    nodes = _trace(DRAWERS, told)
    enclosing = {"l": "p", **{f"c{i}": f"e{i}" for i in range(2, 5)}}.get
    (plan,) = structured_plans(nodes, enclosing)
    assert [s.step_id for s in plan.steps] == [
        "find_coach",
        "book_coach",
        "pay_deposit",
        "notify_parents",
    ]
    observed.switch_off_plan_readers(["org"])
    try:
        assert structured_plans(nodes, enclosing) == ()  # no other reader reads an outline
    finally:
        observed.switch_off_plan_readers([])
